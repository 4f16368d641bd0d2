/**
 * The local event bus: EventBridge's PutEvents (with its limits: 10 entries, 256 KiB a
 * request), rules with event patterns or a schedule, and their targets (a function of the
 * local Lambda runner, invoked asynchronously and retried as Lambda retries an asynchronous
 * invocation, or an in-process handler). Failures can be injected, as EventBridge has them:
 * throttling, an internal error, or an entry refused (`FailedEntryCount`).
 */
import { randomUUID } from 'node:crypto';
import { BusApiError } from './errors.ts';
import { matchesPattern } from './pattern.ts';

/** An event as EventBridge delivers it to a rule's targets. */
export interface BusEvent {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: unknown;
}

/** Where a rule sends what it matches. */
export type RuleTarget =
  | { kind: 'lambda'; id: string; functionArn: string; input?: string }
  | { kind: 'handler'; id: string; handle(event: BusEvent): Promise<void> };

/** A rule: on one bus, an event pattern or a schedule, and its targets. */
export interface LocalRule {
  name: string;
  eventBusName: string;
  pattern?: Record<string, unknown>;
  /** A scheduled rule fires every this many ms (EventBridge's `rate(...)`). */
  everyMs?: number;
  enabled: boolean;
  targets: RuleTarget[];
}

/** One PutEvents entry, as the SDK sends it. */
export interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
  Resources?: string[];
  Time?: string | number;
}

export interface PutEventsResult {
  FailedEntryCount: number;
  Entries: ({ EventId: string } | { ErrorCode: string; ErrorMessage: string })[];
}

/** A failure EventBridge may answer PutEvents with. */
export type BusFault = 'throttle' | 'internal' | 'failed-entry';

/** What happened to one delivery of an event to one target. */
export interface Delivery {
  rule: string;
  target: string;
  eventId: string;
  attempts: number;
  ok: boolean;
  error?: string;
}

export interface LocalEventBridgeOptions {
  region: string;
  account: string;
  /** Buses besides `default`. */
  buses?: string[];
  /** Invokes a function of the local Lambda runner (asynchronous invocation: the result is dropped). */
  invoke(functionArn: string, payload: unknown): Promise<unknown>;
  /** Pause before each retry of a failed asynchronous invocation (Lambda: about 1 and 2 minutes). */
  retryDelaysMs?: number[];
  /** Run scheduled rules on their schedule (default true; tests fire them with `triggerSchedule`). */
  schedules?: boolean;
  log?: (line: string) => void;
}

export interface LocalEventBridge {
  readonly region: string;
  readonly account: string;
  /** PutEvents; throws `BusApiError` for a request refused as a whole. */
  putEvents(entries: PutEventsEntry[]): PutEventsResult;
  /**
   * An AWS service's own events (Step Functions' status changes on the default bus): routed
   * like any, but not through the API, so the failures injected for PutEvents do not touch them.
   */
  publish(entries: PutEventsEntry[]): PutEventsResult;
  /** Makes the next `times` PutEvents calls fail with `fault`. */
  inject(fault: BusFault, times?: number): void;
  clearFaults(): void;
  addRule(rule: LocalRule): void;
  /** The rules on the bus. */
  rules(): readonly LocalRule[];
  /** Fires a scheduled rule now; resolves once its targets were delivered. */
  triggerSchedule(ruleName: string): Promise<Delivery[]>;
  /** Every event accepted, newest last (bounded to the last 1,000). */
  readonly accepted: BusEvent[];
  /** Every delivery to a target, newest last (bounded to the last 1,000). */
  readonly deliveries: Delivery[];
  /** Resolves when no delivery is in flight. */
  idle(): Promise<void>;
  /** Stops the schedules and waits for deliveries in flight; later events are refused. */
  stop(): Promise<void>;
}

/** 256 KiB: the most one PutEvents request may carry (its entries as EventBridge counts them). */
export const MAX_PUT_EVENTS_BYTES = 256 * 1024;
const MAX_ENTRIES = 10;
const KEEP = 1000;

/** The size EventBridge counts for an entry: its fields' UTF-8 bytes (the time counts 14). */
export function entrySize(entry: PutEventsEntry): number {
  let size = entry.Time !== undefined ? 14 : 0;
  for (const text of [entry.Source, entry.DetailType, entry.Detail, ...(entry.Resources ?? [])]) {
    if (text) size += Buffer.byteLength(text, 'utf8');
  }
  return size;
}

function push<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > KEEP) list.splice(0, list.length - KEEP);
}

/**
 * Creates the local event bus.
 *
 * @example
 * const bus = createLocalEventBridge({ region, account, buses: ['waits'], invoke: lambdas.invoke });
 * bus.addRule({ name: 'recover', eventBusName: 'default', enabled: true,
 *   pattern: { source: ['aws.states'] }, targets: [{ kind: 'lambda', id: 'r', functionArn }] });
 */
export function createLocalEventBridge(options: LocalEventBridgeOptions): LocalEventBridge {
  const { region, account } = options;
  const buses = new Set(['default', ...(options.buses ?? [])]);
  const rules: LocalRule[] = [];
  const faults: BusFault[] = [];
  const accepted: BusEvent[] = [];
  const deliveries: Delivery[] = [];
  const inFlight = new Set<Promise<void>>();
  const timers: NodeJS.Timeout[] = [];
  const delays = options.retryDelaysMs ?? [1000, 2000];
  const log = options.log ?? ((): void => undefined);
  let stopped = false;

  const deliverTo = async (rule: LocalRule, target: RuleTarget, event: BusEvent): Promise<Delivery> => {
    const delivery: Delivery = {
      rule: rule.name,
      target: target.id,
      eventId: event.id,
      attempts: 0,
      ok: false,
    };
    for (let attempt = 0; attempt <= delays.length; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, delays[attempt - 1]));
      delivery.attempts++;
      try {
        if (target.kind === 'lambda')
          await options.invoke(target.functionArn, target.input ? JSON.parse(target.input) : event);
        else await target.handle(event);
        delivery.ok = true;
        delete delivery.error;
        break;
      } catch (err) {
        delivery.error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        if (stopped) break;
      }
    }
    if (!delivery.ok)
      log(`event bus: rule ${rule.name} could not deliver ${event.id} to ${target.id}: ${delivery.error}`);
    push(deliveries, delivery);
    return delivery;
  };

  const route = (rule: LocalRule, event: BusEvent): Promise<Delivery[]> => {
    const all = Promise.all(rule.targets.map((t) => deliverTo(rule, t, event)));
    const tracked = all.then(() => undefined);
    inFlight.add(tracked);
    void tracked.finally(() => inFlight.delete(tracked));
    return all;
  };

  const scheduledEvent = (rule: LocalRule): BusEvent => ({
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [`arn:aws:events:${region}:${account}:rule/${rule.name}`],
    detail: {},
  });

  /** Validates and routes a PutEvents request (`fault`: the injected failure it meets, if any). */
  const accept = (entries: PutEventsEntry[], fault: BusFault | undefined): PutEventsResult => {
    if (fault === 'throttle') throw new BusApiError('ThrottlingException', 400, 'Rate exceeded');
    if (fault === 'internal') throw new BusApiError('InternalException', 500, 'Internal service error');
    if (entries.length === 0 || entries.length > MAX_ENTRIES) {
      throw new BusApiError(
        'ValidationException',
        400,
        `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ENTRIES}`,
      );
    }
    if (entries.reduce((sum, e) => sum + entrySize(e), 0) > MAX_PUT_EVENTS_BYTES) {
      throw new BusApiError(
        'ValidationException',
        400,
        'Total size of the entries in the request is over the limit.',
      );
    }
    const result: PutEventsResult = { FailedEntryCount: 0, Entries: [] };
    const fail = (ErrorCode: string, ErrorMessage: string): void => {
      result.FailedEntryCount++;
      result.Entries.push({ ErrorCode, ErrorMessage });
    };
    for (const entry of entries) {
      if (fault === 'failed-entry') {
        fail('InternalFailure', 'Internal failure');
        continue;
      }
      const bus = entry.EventBusName?.split('/').pop() || 'default';
      if (!buses.has(bus)) {
        fail('ResourceNotFoundException', `Event bus ${bus} does not exist.`);
        continue;
      }
      if (!entry.Source || !entry.DetailType || entry.Detail === undefined) {
        fail('InvalidArgument', 'Parameter(s) Source, DetailType and Detail must be specified.');
        continue;
      }
      let detail: unknown;
      try {
        detail = JSON.parse(entry.Detail);
      } catch {
        fail('MalformedDetail', 'Detail is malformed.');
        continue;
      }
      const event: BusEvent = {
        version: '0',
        id: randomUUID(),
        'detail-type': entry.DetailType,
        source: entry.Source,
        account,
        time: new Date(entry.Time ?? Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region,
        resources: entry.Resources ?? [],
        detail,
      };
      push(accepted, event);
      result.Entries.push({ EventId: event.id });
      for (const rule of rules) {
        if (
          rule.enabled &&
          rule.eventBusName === bus &&
          rule.pattern &&
          matchesPattern(rule.pattern, event as never)
        )
          void route(rule, event);
      }
    }
    return result;
  };

  return {
    region,
    account,
    accepted,
    deliveries,

    putEvents(entries) {
      if (stopped) throw new BusApiError('InternalException', 500, 'The local event bus is stopped');
      return accept(entries, faults.shift());
    },

    publish(entries) {
      if (stopped) return { FailedEntryCount: entries.length, Entries: [] };
      return accept(entries, undefined);
    },

    inject(fault, times = 1) {
      for (let i = 0; i < times; i++) faults.push(fault);
    },

    clearFaults() {
      faults.length = 0;
    },

    addRule(rule) {
      rules.push(rule);
      buses.add(rule.eventBusName);
      if (rule.everyMs && rule.enabled && options.schedules !== false) {
        const timer = setInterval(() => {
          if (!stopped) void route(rule, scheduledEvent(rule));
        }, rule.everyMs);
        timer.unref();
        timers.push(timer);
      }
    },

    rules: () => [...rules],

    async triggerSchedule(ruleName) {
      const rule = rules.find((r) => r.name === ruleName);
      if (!rule?.everyMs) throw new Error(`no scheduled rule ${ruleName}`);
      return route(rule, scheduledEvent(rule));
    },

    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },

    async stop() {
      stopped = true;
      for (const t of timers.splice(0)) clearInterval(t);
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
