/**
 * Turns ASL text into what the interpreter runs: placeholders substituted, Task states classified,
 * and a copy of the definition whose Task timeouts are left to the runner.
 */
import { UnresolvedSubstitutionError, UnsupportedTaskResourceError } from './errors.ts';

/**
 * The longest timer Node can arm (2^31-1 ms, ~24.8 days), in seconds. The interpreter arms a
 * `setTimeout` of `TimeoutSeconds * 1000` for every Task, and a longer one fires at once.
 */
export const INTERPRETER_TIMEOUT_CAP_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const LAMBDA_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]+(:[A-Za-z0-9$_-]+)?$/;
const LAMBDA_INVOKE = /^arn:aws[a-z-]*:states:::lambda:invoke(\.waitForTaskToken)?$/;

/** How a Task state's `Resource` is executed. */
export type TaskKind =
  /** `Resource` is a Lambda ARN: the state's effective input is the payload, the result its output. */
  | 'lambda-direct'
  /** `arn:aws:states:::lambda:invoke`: Parameters name `FunctionName` and `Payload`; output `{ Payload, StatusCode, ... }`. */
  | 'lambda-invoke'
  /** `...lambda:invoke.waitForTaskToken`: invoke, then wait for SendTaskSuccess/Failure on the token. */
  | 'lambda-callback';

/** A Task state as the runner needs to know it. */
export interface TaskStateInfo {
  name: string;
  kind: TaskKind;
  resource: string;
  timeoutSeconds?: number;
  timeoutSecondsPath?: string;
  heartbeatSeconds?: number;
  heartbeatSecondsPath?: string;
}

/** A parsed, substituted definition. */
export interface PreparedDefinition {
  /** The substituted definition, as written. */
  definition: Record<string, unknown>;
  /** The copy handed to the interpreter (Task timeouts replaced by the cap, see {@link prepareDefinition}). */
  interpreterDefinition: Record<string, unknown>;
  /** Task states by name (state names are unique across the whole machine, nested ones included). */
  tasks: Map<string, TaskStateInfo>;
  /** Names of the states that have a `Retry` field. */
  retryStates: string[];
}

/**
 * Replaces each `${Name}` in the definition text by `substitutions[Name]`, textually, as
 * CloudFormation's `DefinitionSubstitutions` does (values are inserted as they are, not JSON-escaped).
 *
 * @throws UnresolvedSubstitutionError when a placeholder has no value (AWS would reject the result
 * as an invalid ARN or leave a literal `${...}`; failing early names the missing key).
 */
export function applySubstitutions(text: string, substitutions: Record<string, string>): string {
  const missing = new Set<string>();
  const out = text.replace(PLACEHOLDER, (whole, key: string) => {
    const value = substitutions[key];
    if (value === undefined) {
      missing.add(key);
      return whole;
    }
    return value;
  });
  if (missing.size > 0) throw new UnresolvedSubstitutionError([...missing]);
  return out;
}

/** Classifies a Task `Resource`, or returns undefined when the runner cannot execute it. */
export function classifyResource(resource: string): TaskKind | undefined {
  if (LAMBDA_ARN.test(resource)) return 'lambda-direct';
  const m = LAMBDA_INVOKE.exec(resource);
  if (m) return m[1] ? 'lambda-callback' : 'lambda-invoke';
  return undefined;
}

type StateDef = Record<string, unknown>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function numberField(state: StateDef, key: string): number | undefined {
  const v = state[key];
  return typeof v === 'number' ? v : undefined;
}

function stringField(state: StateDef, key: string): string | undefined {
  const v = state[key];
  return typeof v === 'string' ? v : undefined;
}

/** Visits every `States` map of the machine: the top level, Parallel branches, Map processors. */
function forEachStates(
  machine: Record<string, unknown>,
  visit: (states: Record<string, StateDef>) => void,
): void {
  const states = machine.States;
  if (!isRecord(states)) return;
  visit(states as Record<string, StateDef>);
  for (const state of Object.values(states)) {
    if (!isRecord(state)) continue;
    const branches = state.Branches;
    if (Array.isArray(branches)) for (const b of branches) if (isRecord(b)) forEachStates(b, visit);
    for (const key of ['Iterator', 'ItemProcessor']) {
      const sub = state[key];
      if (isRecord(sub)) forEachStates(sub, visit);
    }
  }
}

/**
 * Parses and prepares a definition.
 *
 * The interpreter copy differs only in Task timing fields: `TimeoutSeconds` is set to
 * {@link INTERPRETER_TIMEOUT_CAP_SECONDS} and `TimeoutSecondsPath` removed, because the runner itself
 * enforces each state's real `TimeoutSeconds`/`HeartbeatSeconds` (the interpreter would otherwise
 * give every Task 60 s, and overflow on values above ~24.8 days). A top-level `TimeoutSeconds` above
 * the cap is clamped to it.
 *
 * @throws UnsupportedTaskResourceError for a Task whose resource is not a Lambda.
 */
export function prepareDefinition(text: string, substitutions: Record<string, string>): PreparedDefinition {
  const substituted = applySubstitutions(text, substitutions);
  const definition = JSON.parse(substituted) as Record<string, unknown>;
  const interpreterDefinition = JSON.parse(substituted) as Record<string, unknown>;
  const tasks = new Map<string, TaskStateInfo>();
  const retryStates: string[] = [];

  forEachStates(definition, (states) => {
    for (const [name, state] of Object.entries(states)) {
      if (Array.isArray(state.Retry)) retryStates.push(name);
      if (state.Type !== 'Task') continue;
      const resource = stringField(state, 'Resource') ?? '';
      const kind = classifyResource(resource);
      if (!kind) throw new UnsupportedTaskResourceError(name, resource);
      tasks.set(name, {
        name,
        kind,
        resource,
        timeoutSeconds: numberField(state, 'TimeoutSeconds'),
        timeoutSecondsPath: stringField(state, 'TimeoutSecondsPath'),
        heartbeatSeconds: numberField(state, 'HeartbeatSeconds'),
        heartbeatSecondsPath: stringField(state, 'HeartbeatSecondsPath'),
      });
    }
  });

  forEachStates(interpreterDefinition, (states) => {
    for (const state of Object.values(states)) {
      if (state.Type !== 'Task') continue;
      state.TimeoutSeconds = INTERPRETER_TIMEOUT_CAP_SECONDS;
      delete state.TimeoutSecondsPath;
    }
  });
  const top = interpreterDefinition.TimeoutSeconds;
  if (typeof top === 'number' && top > INTERPRETER_TIMEOUT_CAP_SECONDS) {
    interpreterDefinition.TimeoutSeconds = INTERPRETER_TIMEOUT_CAP_SECONDS;
  }

  return { definition, interpreterDefinition, tasks, retryStates };
}
