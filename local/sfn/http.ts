/**
 * An HTTP endpoint speaking the Step Functions API (AWS JSON 1.0) for the local runner, so the real
 * `SFNClient` works against it unchanged: `new SFNClient({ endpoint, region, credentials })`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SfnApiError, ValidationError } from './errors.ts';
import type { LocalStepFunctions } from './runner.ts';
import type { ExecutionStatus, HistoryEvent } from './types.ts';

/** A running endpoint. */
export interface LocalSfnServer {
  /** `http://127.0.0.1:<port>`: the `endpoint` of an SFNClient. */
  endpoint: string;
  port: number;
  /** Closes the server and its connections. */
  stop(): Promise<void>;
}

type Body = Record<string, unknown>;
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

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Body> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ValidationError('Body must be an object');
  return parsed as Body;
}

/**
 * Serves the runner's API on loopback.
 *
 * @example
 * const server = await startLocalSfnServer(sfn, { port: 0 });
 * const client = new SFNClient({ endpoint: server.endpoint, region: 'us-east-1',
 *   credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
 */
export async function startLocalSfnServer(
  runner: LocalStepFunctions,
  opts: { port?: number; host?: string } = {},
): Promise<LocalSfnServer> {
  const ops = operations(runner);
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const target = req.headers['x-amz-target'];
        const op = typeof target === 'string' ? target.replace(/^AWSStepFunctions\./, '') : '';
        const handler = req.method === 'POST' ? ops[op] : undefined;
        if (!handler) {
          reply(res, 400, {
            __type: 'UnknownOperationException',
            message: `Unknown operation ${String(target)}`,
          });
          return;
        }
        const body = await readBody(req).catch((err: unknown) => {
          throw err instanceof SfnApiError ? err : new ValidationError('Malformed JSON body', { cause: err });
        });
        reply(res, 200, (await handler(body)) ?? {});
      } catch (err) {
        if (err instanceof SfnApiError)
          reply(res, err.statusCode, { __type: err.name, message: err.message });
        else {
          console.error('local Step Functions endpoint: internal error', err);
          reply(res, 500, { __type: 'InternalFailure', message: 'Internal error in the local runner' });
        }
      }
    })();
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
