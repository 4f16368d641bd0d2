/**
 * An HTTP endpoint speaking the Step Functions API (AWS JSON 1.0) for the local runner, so the real
 * `SFNClient` works against it unchanged: `new SFNClient({ endpoint, region, credentials })`.
 */
import { type AwsJsonBody, type AwsJsonServer, startAwsJsonServer } from '../aws-json.ts';
import { SfnApiError, ValidationError } from './errors.ts';
import type { LocalStepFunctions } from './runner.ts';
import type { ExecutionStatus, HistoryEvent } from './types.ts';

/** A running endpoint: its `endpoint` is an SFNClient's. */
export type LocalSfnServer = AwsJsonServer;

type Body = AwsJsonBody;
type Operation = (body: Body) => unknown;

const STATUSES: readonly ExecutionStatus[] = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'];

/** Epoch seconds, as the JSON protocol carries timestamps. */
function seconds(d: Date | undefined): number | undefined {
  return d === undefined ? undefined : d.getTime() / 1000;
}

function str(body: Body, key: string, required: true): string;
function str(body: Body, key: string, required?: false): string | undefined;
function str(body: Body, key: string, required = false): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required)
      throw new ValidationError(
        `1 validation error detected: Value null at '${key}' failed to satisfy constraint: Member must not be null`,
      );
    return undefined;
  }
  if (typeof v !== 'string') throw new ValidationError(`'${key}' must be a string`);
  return v;
}

/** Paginates by offset, carried in an opaque `nextToken`. */
function page<T>(items: T[], body: Body): { items: T[]; nextToken?: string } {
  const max = typeof body.maxResults === 'number' && body.maxResults > 0 ? body.maxResults : 1000;
  const token = str(body, 'nextToken');
  const start = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
  if (!Number.isInteger(start) || start < 0) throw new ValidationError('Invalid nextToken');
  const end = start + max;
  return {
    items: items.slice(start, end),
    nextToken: end < items.length ? Buffer.from(String(end)).toString('base64url') : undefined,
  };
}

function wireEvent(e: HistoryEvent): Record<string, unknown> {
  const { executionArn: _arn, timestamp, ...rest } = e;
  return { ...rest, timestamp: seconds(timestamp) };
}

function operations(runner: LocalStepFunctions): Record<string, Operation> {
  return {
    StartExecution: async (body) => {
      const r = await runner.startExecution({
        stateMachineArn: str(body, 'stateMachineArn', true),
        name: str(body, 'name'),
        input: str(body, 'input'),
      });
      return { executionArn: r.executionArn, startDate: seconds(r.startDate) };
    },
    DescribeExecution: (body) => {
      const d = runner.describeExecution(str(body, 'executionArn', true));
      return {
        ...d,
        startDate: seconds(d.startDate),
        stopDate: seconds(d.stopDate),
        inputDetails: { included: true },
        ...(d.output !== undefined ? { outputDetails: { included: true } } : {}),
      };
    },
    GetExecutionHistory: (body) => {
      let events = runner.getExecutionHistory(str(body, 'executionArn', true));
      if (body.reverseOrder === true) events = events.reverse();
      const p = page(events, body);
      return { events: p.items.map(wireEvent), nextToken: p.nextToken };
    },
    StopExecution: (body) => {
      const r = runner.stopExecution(str(body, 'executionArn', true), {
        error: str(body, 'error'),
        cause: str(body, 'cause'),
      });
      return { stopDate: seconds(r.stopDate) };
    },
    SendTaskSuccess: (body) => {
      runner.sendTaskSuccess(str(body, 'taskToken', true), str(body, 'output', true));
      return {};
    },
    SendTaskFailure: (body) => {
      runner.sendTaskFailure(str(body, 'taskToken', true), str(body, 'error'), str(body, 'cause'));
      return {};
    },
    SendTaskHeartbeat: (body) => {
      runner.sendTaskHeartbeat(str(body, 'taskToken', true));
      return {};
    },
    ListExecutions: (body) => {
      const statusFilter = str(body, 'statusFilter') as ExecutionStatus | undefined;
      if (statusFilter !== undefined && !STATUSES.includes(statusFilter)) {
        throw new ValidationError(`Invalid statusFilter '${statusFilter}'`);
      }
      const p = page(runner.listExecutions({ statusFilter }), body);
      return {
        executions: p.items.map((e) => ({
          ...e,
          startDate: seconds(e.startDate),
          stopDate: seconds(e.stopDate),
        })),
        nextToken: p.nextToken,
      };
    },
  };
}

/**
 * Serves the runner's API on loopback.
 *
 * @example
 * const server = await startLocalSfnServer(sfn, { port: 0 });
 * const client = new SFNClient({ endpoint: server.endpoint, region: 'us-east-1',
 *   credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
 */
export function startLocalSfnServer(
  runner: LocalStepFunctions,
  opts: { port?: number; host?: string } = {},
): Promise<LocalSfnServer> {
  return startAwsJsonServer(
    {
      version: '1.0',
      targetPrefix: 'AWSStepFunctions',
      operations: operations(runner),
      isApiError: (err) => err instanceof SfnApiError,
      malformed: { type: 'ValidationException', message: 'Malformed JSON body' },
      internal: {
        type: 'InternalFailure',
        message: 'Internal error in the local runner',
        service: 'local Step Functions endpoint',
      },
    },
    opts,
  );
}
