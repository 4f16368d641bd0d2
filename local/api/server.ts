import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler } from '../../lambdas/lib/api/app.ts';
import { authorizeHeaders } from '../../lambdas/lib/api/auth.ts';
import type { ApiDeps } from '../../lambdas/lib/api/deps.ts';
import {
  errorBody,
  PayloadTooLargeError,
  RateLimitedError,
  UnauthorizedError,
} from '../../lambdas/lib/api/errors.ts';
import type { AuthorizerContext, HttpApiEvent, HttpApiResult } from '../../lambdas/lib/api/events.ts';
import { matchRoute } from '../../lambdas/lib/api/router.ts';
import { runAs } from '../iam/enforce.ts';
import type { EnforcementSpec } from '../iam/policies.ts';
import { headersOf, toHttpApiEvent } from './events.ts';

/**
 * The local API server: what API Gateway (HTTP API) does in AWS, on loopback. Each request
 * becomes a payload-2.0 event for the same Lambda handler (`createApiHandler`); routes that
 * need a key go through the same authorizer code first, whose context the handler reads as
 * it would in AWS. Bodies over the limit are read to their end without being kept, then refused
 * (413 naming the limit), as API Gateway answers them.
 */

export interface LocalApiOptions {
  /** Port on 127.0.0.1 (default 3000; 0 picks a free one). */
  port?: number;
  deps: ApiDeps;
  /**
   * Hold the AWS calls of the authorizer and of the handler to their IAM policies (from the
   * synthesized template), as the two functions are held in AWS. Unchecked without.
   */
  iam?: { handler: EnforcementSpec; authorizer: EnforcementSpec };
}

export interface LocalApi {
  /** `http://127.0.0.1:<port>` */
  url: string;
  stop(): Promise<void>;
}

/**
 * A body over the limit is read to its end and dropped, then answered 413, as API Gateway reads a
 * request before it refuses it: a client still sending when the connection closed would see a
 * reset instead of the answer. Past this many bytes it is answered and the connection closed.
 */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

function send(res: ServerResponse, result: HttpApiResult, close = false): void {
  const headers: Record<string, string | string[]> = { ...result.headers };
  if (close) headers.Connection = 'close';
  if (result.cookies?.length) headers['Set-Cookie'] = result.cookies;
  const body = result.body === undefined ? '' : result.body;
  const bytes = result.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
  res.writeHead(result.statusCode, { ...headers, 'Content-Length': String(bytes.byteLength) });
  res.end(bytes);
}

function sendError(res: ServerResponse, err: unknown, close = false): void {
  // Refused before any tenant was known (too large, not authenticated): no tenant's secrets apply.
  const { statusCode, body, headers } = errorBody(err, { tenantId: '' });
  send(
    res,
    { statusCode, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) },
    close,
  );
}

/** Reads the body; `null` (after answering 413) when it is over `limit`. */
function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    let size = 0;
    let tooLarge = declared > limit;
    let answered = false;
    const chunks: Buffer[] = [];
    const refuse = (): void => {
      if (answered) return;
      answered = true;
      sendError(res, new PayloadTooLargeError(limit), true);
      resolve(null);
    };
    // Too large to read through even to drop it: answered at once, the connection closed.
    if (declared > DRAIN_LIMIT_BYTES) refuse();
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
      }
      if (tooLarge) {
        if (size > DRAIN_LIMIT_BYTES) {
          refuse();
          req.destroy();
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) refuse();
      else resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (tooLarge) refuse();
      else reject(err);
    });
  });
}

/**
 * Starts the local API on 127.0.0.1.
 *
 * @example
 * const api = await startLocalApi({ port: 3000, deps: await apiDepsFromEnv() });
 * console.log(`Belay API on ${api.url}`);
 * await api.stop();
 */
export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const { deps, iam } = options;
  const apiHandler = createApiHandler(async () => deps);
  const handler = (event: HttpApiEvent, context: { awsRequestId: string; functionName: string }) =>
    iam ? runAs(iam.handler, () => apiHandler(event, context as never)) : apiHandler(event, context as never);
  // Refused keys count against their address, as the authorizer counts them in AWS.
  const authorize = (headers: Record<string, string>, sourceIp: string | undefined) => {
    const refusals = { limiter: deps.anonymousRateLimiter, sourceIp };
    return iam
      ? runAs(iam.authorizer, () => authorizeHeaders(deps.keys, headers, refusals))
      : authorizeHeaders(deps.keys, headers, refusals);
  };

  let ownHost = '127.0.0.1';
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req, res, deps.maxBodyBytes);
      if (body === null) return;
      const method = (req.method ?? 'GET').toUpperCase();
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      const match = matchRoute(method, path);
      let authorizer: AuthorizerContext | undefined;
      if (match.route?.auth) {
        // API Gateway runs the authorizer before the route's function; so does this server.
        const decision = await authorize(headersOf(req), req.socket.remoteAddress);
        if (!decision.isAuthorized || !decision.context) {
          sendError(
            res,
            decision.retryAfterSeconds === undefined
              ? new UnauthorizedError()
              : new RateLimitedError(decision.retryAfterSeconds),
          );
          return;
        }
        authorizer = decision.context as unknown as AuthorizerContext;
      }
      const event = toHttpApiEvent({
        req,
        body,
        domainName: ownHost,
        routeKey: match.route ? `${match.route.method} ${match.route.path}` : '$default',
        ...(match.route ? { pathParameters: match.params } : {}),
        ...(authorizer ? { authorizer } : {}),
      });
      const context = { awsRequestId: randomUUID(), functionName: 'belay-api-local' };
      const result = await handler(event, context);
      send(res, result);
    })().catch((err: unknown) => {
      deps.engine.log.error('local API request failed', { error: String(err) });
      if (!res.headersSent) sendError(res, err);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  ownHost = `127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
