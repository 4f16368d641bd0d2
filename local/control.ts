/**
 * The control channel of a running local stack: a loopback HTTP server through which a
 * driver in ANOTHER process (the chaos suite) injects faults into this stack and watches
 * what its Lambda workers do. `npm start -- --control-port <port>` starts it.
 *
 * Every request carries the token written to `<dataDir>/control-token` (mode 0600), as
 * `Authorization: Bearer <token>` or `x-control-token`. JSON in, JSON out.
 *
 * | method | path | does |
 * |---|---|---|
 * | GET | /health | pid, boot id, the stack's URLs (API, browser service, demo sites, every target application), the event cursor |
 * | POST | /lambda/faults | arms a Lambda fault (body: an `ArmedFault`): SIGKILL the worker at that point |
 * | DELETE | /lambda/faults | disarms every armed fault |
 * | POST | /sessions/{id}/kill-browser | SIGKILLs the Chromium of a browser session |
 * | GET | /lambda/events?after=&limit=&wait= | fault-point and fault-fired events after a cursor (long-poll with `wait` ms) |
 * | GET | /executions?jobId=&tenantId= | a job's executions with their failed tasks (error, cause) |
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';
import { executionNamePrefix } from '../lambdas/lib/engine/executions.ts';
import { ControlRequestError } from './errors.ts';
import type { FaultPointEvent } from './lambda/events.ts';
import type { LocalStack } from './stack.ts';

/** One event of the Lambda runner, as the control channel lists it. */
export interface ControlEvent extends FaultPointEvent {
  /** Position in this boot's event list (1, 2, ...): the cursor. */
  seq: number;
  type: 'fault-point' | 'fault-fired';
  /** Epoch ms when the stack saw it. */
  at: number;
}

/** A page of events. */
export interface ControlEventPage {
  bootId: string;
  events: ControlEvent[];
  /** Pass as `after` to get the next page. */
  next: number;
  /** Events older than `after` were dropped from the buffer (the page starts later). */
  truncated: boolean;
}

/** `GET /health`. */
export interface ControlHealth {
  ok: true;
  pid: number;
  bootId: string;
  startedAt: string;
  apiUrl: string | undefined;
  anchorUrl: string;
  sites: Record<'shop' | 'crm' | 'billing', string>;
  /** Every target application the handlers know (the demo sites and the configured ones): name -> base URL. */
  applications: Record<string, string>;
  events: { next: number };
}

/** A job's execution with the errors of its failed tasks. */
export interface ControlExecution {
  name: string;
  status: string;
  startDate: string;
  failures: Array<{ at: string; type: string; error?: string; cause?: string }>;
}

export interface ControlServerOptions {
  stack: LocalStack;
  /** Loopback port (0 picks a free one). */
  port: number;
  /** Where the token file goes (default: the stack's data directory). */
  dataDir?: string;
  /** Events kept for paging (default 50,000). */
  bufferSize?: number;
}

export interface ControlServer {
  url: string;
  token: string;
  stop(): Promise<void>;
}

/** The file under the data directory that holds the control token. */
export const CONTROL_TOKEN_FILE = 'control-token';

const FaultPointSchema = z.enum([
  'before-action',
  'mid-action',
  'after-action',
  'during-checkpoint',
  'action-recorded',
  'action-executed',
]);
const ArmedFaultSchema = z
  .object({
    functionName: z.string().min(1).max(200).optional(),
    point: FaultPointSchema,
    match: z
      .object({
        jobId: z.string().min(1).max(200).optional(),
        step: z.string().min(1).max(100).optional(),
        stepIndex: z.number().int().min(0).max(1000).optional(),
        /** An agent step's action number, at `action-recorded` and `action-executed`. */
        action: z.number().int().min(1).max(1000).optional(),
      })
      .strict()
      .optional(),
    times: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** Starts the control server on 127.0.0.1 and writes its token under the data directory. */
export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const { stack } = options;
  const token = randomBytes(24).toString('base64url');
  const bootId = randomUUID();
  const startedAt = new Date().toISOString();
  const capacity = options.bufferSize ?? 50_000;
  const events: ControlEvent[] = [];
  let seq = 0;
  let waiters: Array<() => void> = [];
  const record = (type: ControlEvent['type']) => (e: FaultPointEvent) => {
    events.push({ ...e, info: { ...e.info }, seq: ++seq, type, at: Date.now() });
    if (events.length > capacity) events.splice(0, events.length - capacity);
    const wake = waiters;
    waiters = [];
    for (const w of wake) w();
  };
  const onPoint = record('fault-point');
  const onFired = record('fault-fired');
  stack.lambdas.events.on('fault-point', onPoint);
  stack.lambdas.events.on('fault-fired', onFired);
  // Subscribed before the first await: a job resumed by this start cannot reach a point unseen.
  await writeFile(join(options.dataDir ?? stack.dataDir, CONTROL_TOKEN_FILE), token, { mode: 0o600 });

  const page = async (after: number, limit: number, waitMs: number): Promise<ControlEventPage> => {
    if (seq <= after && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const oldest = events[0]?.seq ?? seq + 1;
    const list = events.filter((e) => e.seq > after).slice(0, limit);
    return {
      bootId,
      events: list,
      next: list.at(-1)?.seq ?? Math.max(after, 0),
      truncated: after + 1 < oldest,
    };
  };

  const route = async (method: string, url: URL, body: string): Promise<unknown> => {
    const parts = url.pathname.split('/').filter(Boolean);
    if (method === 'GET' && url.pathname === '/health') {
      const health: ControlHealth = {
        ok: true,
        pid: process.pid,
        bootId,
        startedAt,
        apiUrl: stack.apiUrl,
        anchorUrl: stack.anchor.baseUrl,
        sites: {
          shop: stack.sites.shop.baseUrl,
          crm: stack.sites.crm.baseUrl,
          billing: stack.sites.billing.baseUrl,
        },
        applications: Object.fromEntries(
          Object.entries(stack.applications).map(([name, app]) => [name, app.baseUrl]),
        ),
        events: { next: seq },
      };
      return health;
    }
    if (url.pathname === '/lambda/faults' && method === 'POST') {
      const parsed = ArmedFaultSchema.safeParse(parseJson(body));
      if (!parsed.success) throw new ControlRequestError(400, `not an ArmedFault: ${parsed.error.message}`);
      stack.lambdas.arm(parsed.data);
      return { armed: parsed.data };
    }
    if (url.pathname === '/lambda/faults' && method === 'DELETE') {
      stack.lambdas.disarm();
      return { disarmed: true };
    }
    if (method === 'GET' && url.pathname === '/lambda/events') {
      const after = intParam(url, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
      const limit = intParam(url, 'limit', 1000, 1, 10_000);
      const wait = intParam(url, 'wait', 0, 0, 25_000);
      return page(after, limit, wait);
    }
    if (method === 'POST' && parts.length === 3 && parts[0] === 'sessions' && parts[2] === 'kill-browser') {
      const id = decodeURIComponent(parts[1] ?? '');
      if (!stack.anchor.session(id)) throw new ControlRequestError(404, `no browser session ${id}`);
      return { sessionId: id, pid: await stack.anchor.killBrowser(id) };
    }
    if (method === 'GET' && url.pathname === '/executions') {
      const jobId = url.searchParams.get('jobId');
      if (!jobId) throw new ControlRequestError(400, 'jobId is required');
      return { executions: executionsOf(stack, url.searchParams.get('tenantId') ?? stack.demoTenant, jobId) };
    }
    throw new ControlRequestError(404, `no control route ${method} ${url.pathname}`);
  };

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      if (!authorized(req, token)) throw new ControlRequestError(401, 'missing or wrong control token');
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      reply(res, 200, await route(req.method ?? 'GET', url, body));
    } catch (err) {
      const status = err instanceof ControlRequestError ? err.status : 500;
      reply(res, status, { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    async stop() {
      stack.lambdas.events.off('fault-point', onPoint);
      stack.lambdas.events.off('fault-fired', onFired);
      for (const w of waiters.splice(0)) w();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function executionsOf(stack: LocalStack, tenantId: string, jobId: string): ControlExecution[] {
  const prefix = executionNamePrefix(tenantId, jobId);
  return stack.sfn
    .listExecutions()
    .filter((e) => e.name.startsWith(prefix))
    .map((e) => {
      const failures: ControlExecution['failures'] = [];
      for (const h of stack.sfn.getExecutionHistory(e.executionArn)) {
        const d =
          h.lambdaFunctionFailedEventDetails ??
          h.lambdaFunctionTimedOutEventDetails ??
          h.taskFailedEventDetails ??
          h.taskTimedOutEventDetails ??
          h.executionFailedEventDetails;
        if (d) failures.push({ at: h.timestamp.toISOString(), type: h.type, error: d.error, cause: d.cause });
      }
      return { name: e.name, status: e.status, startDate: e.startDate.toISOString(), failures };
    });
}

function authorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  const given = header?.startsWith('Bearer ') ? header.slice(7) : req.headers['x-control-token'];
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function intParam(url: URL, name: string, fallback: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ControlRequestError(400, `${name} must be an integer from ${min} to ${max}`);
  return n;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body || '{}');
  } catch {
    throw new ControlRequestError(400, 'the body is not JSON');
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.byteLength;
      if (size > 64 * 1024) {
        reject(new ControlRequestError(413, 'body over 64 KiB'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
