/**
 * An HTTP endpoint speaking an AWS JSON protocol (1.0 for Step Functions, 1.1 for EventBridge)
 * on loopback, so a real SDK client works against a local stand-in unchanged: each request is
 * a POST whose `X-Amz-Target` names the operation (`AWSStepFunctions.StartExecution`) and whose
 * body is a JSON object; an answer is JSON, an error `{ "__type": <code>, "message": ... }`.
 * The stand-ins (`local/sfn/http.ts`, `local/events/http.ts`) give only their operations.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request body: always a JSON object. */
export type AwsJsonBody = Record<string, unknown>;

/** An error a service answers as itself: its `name` is the API's error code. */
export interface AwsApiErrorLike {
  readonly name: string;
  readonly message: string;
  readonly statusCode: number;
}

/** One local service's API. */
export interface AwsJsonApi {
  /** The protocol version, in every answer's content type. */
  version: '1.0' | '1.1';
  /** The `X-Amz-Target` prefix of the operations (`AWSStepFunctions`, `AWSEvents`). */
  targetPrefix: string;
  /** The operations, by name. */
  operations: Readonly<Record<string, (body: AwsJsonBody) => unknown>>;
  /** The service's own errors, answered with their code and status; anything else is a 500. */
  isApiError(err: unknown): err is AwsApiErrorLike;
  /** What a body that is not a JSON object is answered with (400). */
  malformed: { type: string; message: string };
  /** What an unexpected error is answered with (500), and what the service is called in the log. */
  internal: { type: string; message: string; service: string };
}

/** A running endpoint. */
export interface AwsJsonServer {
  /** `http://<host>:<port>`: the `endpoint` of an SDK client. */
  endpoint: string;
  port: number;
  /** Closes the server and its connections. */
  stop(): Promise<void>;
}

/** Thrown by {@link readBody}: the body is not a JSON object. */
class MalformedBody extends Error {}

function reply(res: ServerResponse, version: AwsJsonApi['version'], status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': `application/x-amz-json-${version}`,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<AwsJsonBody> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MalformedBody();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new MalformedBody();
  return parsed as AwsJsonBody;
}

/**
 * Serves `api` on loopback (port 0: a free one).
 *
 * @example
 * const server = await startAwsJsonServer({ version: '1.1', targetPrefix: 'AWSEvents', operations, ... });
 * new EventBridgeClient({ endpoint: server.endpoint });
 */
export async function startAwsJsonServer(
  api: AwsJsonApi,
  opts: { port?: number; host?: string } = {},
): Promise<AwsJsonServer> {
  const prefix = `${api.targetPrefix}.`;
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const target = String(req.headers['x-amz-target'] ?? '');
        const handler =
          req.method === 'POST' && target.startsWith(prefix)
            ? api.operations[target.slice(prefix.length)]
            : undefined;
        if (!handler) {
          reply(res, api.version, 400, {
            __type: 'UnknownOperationException',
            message: `Unknown operation ${target}`,
          });
          return;
        }
        reply(res, api.version, 200, (await handler(await readBody(req))) ?? {});
      } catch (err) {
        if (err instanceof MalformedBody)
          reply(res, api.version, 400, { __type: api.malformed.type, message: api.malformed.message });
        else if (api.isApiError(err))
          reply(res, api.version, err.statusCode, { __type: err.name, message: err.message });
        else {
          console.error(`${api.internal.service}: internal error`, err);
          reply(res, api.version, 500, { __type: api.internal.type, message: api.internal.message });
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
