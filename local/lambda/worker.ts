/**
 * A local Lambda worker: one process running one handler, like a Lambda execution environment.
 *
 * Started by the runner as `node --import tsx local/lambda/worker.ts --function <name> --entry <file>`
 * so `ps` names the handler. Loads the module once (init), then runs one invocation at a time as the
 * runner sends them over IPC; module scope survives between invocations (a warm container).
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { enforceForProcess, onCall, onRefused } from '../iam/enforce.ts';
import type { EnforcementSpec } from '../iam/policies.ts';
import {
  type ErrorMessage,
  type FromWorker,
  type InvocationUsage,
  type InvokeMessage,
  LOCAL_IAM_ENV,
  type ToWorker,
} from './protocol.ts';

type Handler = (event: unknown, context: unknown) => unknown;

const { values } = parseArgs({
  options: {
    function: { type: 'string' },
    entry: { type: 'string' },
    export: { type: 'string', default: 'handler' },
  },
});
const functionName = values.function ?? 'unknown';
const entry = values.entry;
const exportName = values.export ?? 'handler';

function send(message: FromWorker): void {
  process.send?.(message);
}

// The runner went away: a worker must never outlive it.
process.on('disconnect', () => process.exit(0));

function toErrorMessage(id: string, err: unknown, fallbackType = 'Error'): ErrorMessage {
  if (err instanceof Error) {
    return {
      type: 'result',
      id,
      ok: false,
      errorType: err.name || fallbackType,
      errorMessage: err.message,
      trace: (err.stack ?? '').split('\n'),
    };
  }
  return { type: 'result', id, ok: false, errorType: fallbackType, errorMessage: String(err), trace: [] };
}

let handler: Handler | undefined;
let initError: { errorType: string; err: unknown } | undefined;
const started = performance.now();
/** AWS calls of the invocation in flight, by `<client>.<command>` (one invocation at a time). */
let calls: Record<string, number> = {};
try {
  // Counted from the init on, like the policy: what the handler sends, whoever builds the client.
  onCall(({ clientName, commandName }) => {
    const key = `${clientName.replace(/Client$/, '')}.${commandName.replace(/Command$/, '')}`;
    calls[key] = (calls[key] ?? 0) + 1;
  });
} catch {
  // No AWS SDK installed: there is nothing to count.
}
try {
  // The function's IAM policy holds every AWS SDK call the handler makes, from its init on: the
  // SDK's one Client class (shared with the bundle, which leaves @aws-sdk/* out) is wrapped
  // before the handler's module loads. The variable is gone before the handler can read it.
  const policy = process.env[LOCAL_IAM_ENV];
  delete process.env[LOCAL_IAM_ENV];
  if (policy) {
    enforceForProcess(JSON.parse(policy) as EnforcementSpec);
    onRefused((refusal) =>
      send({
        type: 'iam-refused',
        action: refusal.request.action,
        resource: refusal.request.resource,
        message: refusal.message,
      }),
    );
  }
  if (!entry) throw new Error('--entry is required');
  const mod = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
  const candidate = mod[exportName];
  if (typeof candidate === 'function') handler = candidate as Handler;
  else
    initError = {
      errorType: 'Runtime.HandlerNotFound',
      err: new Error(`${entry}.${exportName} is undefined or not exported`),
    };
} catch (err) {
  initError = { errorType: 'Runtime.ImportModuleError', err };
}

async function invoke(message: InvokeMessage): Promise<void> {
  const { id, payload, context: init } = message;
  if (!handler) {
    send(toErrorMessage(id, initError?.err, initError?.errorType));
    return;
  }
  const context = {
    ...init,
    functionVersion: '$LATEST',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${process.pid}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: (): number => Math.max(0, init.deadlineMs - Date.now()),
  };
  calls = {};
  const cpuAtStart = process.cpuUsage();
  /** What the invocation used: its process CPU (user + system) and its AWS calls. */
  const usage = (): { usage: InvocationUsage } => {
    const cpu = process.cpuUsage(cpuAtStart);
    return {
      usage: {
        cpuMs: (cpu.user + cpu.system) / 1000,
        cpuStartMs: (cpuAtStart.user + cpuAtStart.system) / 1000,
        awsCalls: calls,
      },
    };
  };
  try {
    const value = await handler(payload, context);
    // Lambda returns JSON: what JSON.stringify drops is dropped, undefined becomes null.
    const json = value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
    send({ type: 'result', id, ok: true, value: json, ...usage() });
  } catch (err) {
    send({ ...toErrorMessage(id, err), ...usage() });
  }
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'invoke') void invoke(message);
  else if (message.type === 'shutdown') process.exit(0);
});

send({ type: 'ready', initMs: Math.round(performance.now() - started) });
