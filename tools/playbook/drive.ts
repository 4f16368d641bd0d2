/**
 * The runs of `npm run playbook -- test` on the local stack: each scenario is one job,
 * submitted and answered through the public API (approvals are given as a person would),
 * with its fault armed in the local Lambda runner (a SIGKILL of the RunStep worker at a fault
 * point), struck through the browser service (the job's browser killed before a step), or
 * through the application's proxy (the answer to the step's write dropped after the site
 * committed it).
 * A job that stops for a person (a review, a one-time code) is cancelled and counts as not
 * succeeded: a step that is safe to retry never needs one after a crash.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Playbook } from '../../lambdas/lib/playbooks/contract.ts';
import type { FaultPointEvent } from '../../local/lambda/events.ts';
import { DEMO_TENANT } from '../../local/seed.ts';
import { type LocalStack, localFunctionArn } from '../../local/stack.ts';
import type { BelayClient } from '../cli/belay/client.ts';
import { ApiCallError } from '../cli/belay/errors.ts';
import type { DropProxy, ProxiedWrite, WriteMatcher } from './drop-proxy.ts';
import { FAULT_POINTS, type RunOutcome, type Scenario } from './verdicts.ts';

export interface DriveOptions {
  stack: LocalStack;
  /** The API, with the demo tenant's key. */
  client: BelayClient;
  playbook: Playbook;
  jobTimeoutMs: number;
  /** The proxy in front of each application that has one (`drop-response` runs one job at a time through it). */
  proxies: Record<string, DropProxy>;
  /**
   * The committing request of each write, by step index (its `commits`, or what the clean run's
   * write guard recorded): what a drop run drops and counts. Unknown: any unsafe request.
   */
  committing: Record<number, CommittingSignature>;
}

/** A write's committing request, as a drop run matches it. */
export interface CommittingSignature {
  matches: WriteMatcher;
  /** `POST /api/notes`, for the report. */
  label: string;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/** The call's answer, or undefined when the API refused it (the next poll looks again). */
async function unlessRefused<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ApiCallError) return undefined;
    throw err;
  }
}

interface ArmedFault {
  struck: () => boolean;
  /**
   * `drop-response`: the committing requests the site committed from the step's start to the
   * next step's (or the job's end), and the page's own unsafe requests in that time.
   */
  commits: () => { count: number; as?: string; background?: string } | undefined;
  off: () => void;
}

/** The page's own requests in a drop run's window, grouped: `9 POST /api/heartbeat, 1 PUT /autosave`. */
function backgroundOf(writes: readonly ProxiedWrite[]): string | undefined {
  const counts = new Map<string, number>();
  for (const w of writes) counts.set(`${w.method} ${w.path}`, (counts.get(`${w.method} ${w.path}`) ?? 0) + 1);
  return counts.size === 0 ? undefined : [...counts].map(([what, n]) => `${n} ${what}`).join(', ');
}

/** Strikes the scenario's fault when the job's worker reaches its point; settles whether it struck. */
function armFault(o: DriveOptions, jobId: string, s: Scenario): ArmedFault {
  if (s.fault === 'clean' || s.fault === 'repeat' || s.stepIndex === undefined)
    return { struck: () => false, commits: () => undefined, off: () => undefined };
  const stepIndex = s.stepIndex;
  const point = FAULT_POINTS[s.fault];
  const events = o.stack.lambdas.events;
  let struck = false;
  const ours = (e: FaultPointEvent): boolean =>
    e.info.jobId === jobId && e.info.stepIndex === stepIndex && e.point === point;
  let listener: (e: FaultPointEvent) => void;
  if (s.fault === 'drop-response') {
    const proxy = o.proxies[o.playbook.steps[stepIndex]?.app ?? ''];
    const signature = o.committing[stepIndex];
    const isWrite: WriteMatcher = signature?.matches ?? (() => true);
    // Counted from the step's first attempt until a later step begins (or the job ends).
    let window: { from: number; dropsFrom: number; to?: number } | undefined;
    listener = (e) => {
      if (!proxy || e.info.jobId !== jobId) return;
      if (!window && ours(e)) {
        window = { from: Date.now(), dropsFrom: proxy.dropped };
        proxy.armDrop(isWrite);
      } else if (window && window.to === undefined && Number(e.info.stepIndex) > stepIndex) {
        window.to = Date.now();
        proxy.disarm();
      }
    };
    events.on('fault-point', listener);
    const inWindow = (): ProxiedWrite[] => {
      if (!window || !proxy) return [];
      const { from, to } = window;
      return proxy.writes.filter(
        (w) => w.at >= from && (to === undefined || w.at <= to) && (w.status ?? 500) < 400,
      );
    };
    return {
      struck: () => Boolean(window && proxy && proxy.dropped > window.dropsFrom),
      commits: () => {
        if (!window || !proxy) return undefined;
        const committed = inWindow();
        const writes = committed.filter((w) => isWrite(w.method, w.path));
        const background = backgroundOf(committed.filter((w) => !isWrite(w.method, w.path)));
        return {
          count: writes.length,
          ...(signature ? { as: signature.label } : {}),
          ...(background ? { background } : {}),
        };
      },
      off: () => {
        proxy?.disarm();
        events.off('fault-point', listener);
      },
    };
  }
  if (s.fault === 'browser-lost') {
    const app = o.playbook.steps[s.stepIndex]?.app ?? '';
    listener = (e) => {
      if (struck || !ours(e)) return;
      const session = o.stack.anchor
        .sessions()
        .find(
          (x) =>
            x.status === 'running' &&
            Array.isArray(x.tags) &&
            x.tags.includes(`jobId:${jobId}`) &&
            x.tags.includes(`application:${app}`),
        );
      if (!session) return;
      struck = true;
      // Killed before the worker is let past the point (the runner acks after its listeners ran).
      void o.stack.anchor.killBrowser(session.id).catch(() => undefined);
    };
    events.on('fault-point', listener);
  } else {
    o.stack.lambdas.arm({
      functionName: localFunctionArn('RunStep'),
      point,
      match: { jobId, stepIndex: s.stepIndex },
      times: 1,
    });
    listener = (e) => {
      if (ours(e)) struck = true;
    };
    events.on('fault-fired', listener);
  }
  return {
    struck: () => struck,
    commits: () => undefined,
    off: () => {
      events.off('fault-point', listener);
      events.off('fault-fired', listener);
    },
  };
}

/** Runs one scenario as job `jobId` on `accounts` (application -> connected account id). */
export async function runScenario(
  o: DriveOptions,
  s: Scenario,
  jobId: string,
  accounts: Record<string, string>,
  inputs: unknown,
): Promise<RunOutcome> {
  const started = Date.now();
  const fault = armFault(o, jobId, s);
  try {
    try {
      await o.client.request('POST', '/jobs', { jobId, playbook: o.playbook.id, inputs, accounts });
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      return {
        scenario: s,
        status: `refused (${err.status})`,
        struck: false,
        entries: [],
        seconds: 0,
        detail: JSON.stringify({ code: err.code, message: err.message, details: err.details }).slice(0, 300),
      };
    }
    let detail: string | undefined;
    const deadline = started + o.jobTimeoutMs;
    for (;;) {
      const job = (await unlessRefused(o.client.request('GET', `/jobs/${jobId}`)))?.job as
        | Record<string, unknown>
        | undefined;
      const status = String(job?.status);
      const wait = job?.wait as { kind?: string; step?: string; reason?: string } | undefined;
      if (TERMINAL.has(status)) {
        const failure = job?.failure as { reason?: string; message?: string } | undefined;
        if (failure) detail = `${failure.reason}: ${failure.message}`.slice(0, 300);
        break;
      }
      if (status === 'WAITING_APPROVAL' && wait?.step) {
        await unlessRefused(
          o.client.request('POST', `/jobs/${jobId}/decisions`, { step: wait.step, decision: 'approve' }),
        );
      } else if (status.startsWith('WAITING_') || status === 'PARKED') {
        // A person would be asked: not what a step safe to retry needs. Stop the job.
        detail = `stopped for a person: ${status}${wait?.step ? ` at ${wait.step}` : ''}${wait?.reason ? ` (${wait.reason})` : ''}`;
        await unlessRefused(o.client.request('POST', `/jobs/${jobId}/cancel`));
      } else if (Date.now() > deadline) {
        detail = `still ${status} after ${o.jobTimeoutMs / 1000} s`;
        await unlessRefused(o.client.request('POST', `/jobs/${jobId}/cancel`));
      }
      await sleep(250);
    }
    const { job, entries } = await o.stack.ledger.readJob(DEMO_TENANT, jobId);
    return {
      scenario: s,
      status: detail?.startsWith('stopped for a person') ? 'NEEDED A PERSON' : job.status,
      struck: fault.struck(),
      entries,
      seconds: (Date.now() - started) / 1000,
      ...(detail ? { detail } : {}),
      ...commitsOf(fault),
    };
  } finally {
    fault.off();
  }
}

function commitsOf(fault: ArmedFault): Pick<RunOutcome, 'commits' | 'commitsAs' | 'background'> {
  const c = fault.commits();
  if (!c) return {};
  return {
    commits: c.count,
    ...(c.as ? { commitsAs: c.as } : {}),
    ...(c.background ? { background: c.background } : {}),
  };
}

/** Runs `scenarios` in `lanes` (one job at a time each, on the lane's accounts), reporting each as it ends. */
export async function runAll(
  o: DriveOptions,
  scenarios: readonly Scenario[],
  lanes: number,
  accountsOf: (lane: number) => Record<string, string>,
  jobIdOf: (s: Scenario, i: number) => string,
  inputsOf: (s: Scenario, i: number) => unknown,
  onDone: (outcome: RunOutcome, done: number) => void,
): Promise<RunOutcome[]> {
  const out: RunOutcome[] = new Array(scenarios.length);
  let next = 0;
  let done = 0;
  const worker = async (lane: number): Promise<void> => {
    for (;;) {
      const i = next++;
      const s = scenarios[i];
      if (!s) return;
      out[i] = await runScenario(o, s, jobIdOf(s, i), accountsOf(lane), inputsOf(s, i));
      onDone(out[i] as RunOutcome, ++done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, lanes) }, (_, lane) => worker(lane)));
  return out;
}
