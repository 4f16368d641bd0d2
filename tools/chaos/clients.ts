/**
 * HTTP clients of the chaos driver: Belay's API (as the demo tenant's person) and the stack's
 * control channel. Both fail with {@link StackUnreachableError} while the stack is down (it
 * is killed on purpose), which callers treat as "try again after the restart". A 429 (the
 * demo tenant's key used past its request rate) is waited out as its `Retry-After` says.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlEventPage, ControlExecution, ControlHealth } from '../../local/control.ts';
import type { ArmedFault } from '../../local/lambda/types.ts';

/** The stack did not answer (connection refused or reset, or a timeout). */
export class StackUnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`${url}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StackUnreachableError';
  }
}

/** The API or control channel answered with an error status. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly url: string,
    readonly body: unknown,
  ) {
    super(`${method} ${url}: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`);
    this.name = 'HttpStatusError';
  }
}

/** Answers refused for the key's request rate (429) waited out before the caller sees one. */
const RATE_LIMITED_TRIES = 20;

async function call<T>(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new StackUnreachableError(url, err);
    }
    const text = await res.text().catch(() => '');
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    // Every job's driver polls with the demo tenant's one key: at times they exceed its rate
    // together. A 429 is refused before any handler runs, so sending the request again is safe.
    if (res.status === 429 && tries < RATE_LIMITED_TRIES) {
      const seconds = Number(res.headers.get('retry-after'));
      await sleep(Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) * 1000 : 1000);
      continue;
    }
    if (!res.ok) throw new HttpStatusError(res.status, method, url, parsed);
    return parsed as T;
  }
}

/** A job as `GET /jobs/{id}` shows it (the fields the driver reads). */
export interface JobView {
  jobId: string;
  status: string;
  stepsCompleted: number;
  stepCount: number;
  wait: { kind: 'approval' | 'mfa' | 'review'; step: string; requestedAt: string; reason?: string } | null;
  sessions: Record<string, { sessionId: string; openedAt: string }>;
  retriesUsed: number;
  retryBudget: number;
  createdAt: string;
  updatedAt: string;
  failure?: { reason: string; message: string };
}

/** A ledger entry as `GET /jobs/{id}/ledger` shows it. */
export interface EntryView {
  type: string;
  step?: string;
  stepIndex?: number;
  at: string;
  attempt?: number;
  detail?: Record<string, unknown>;
  evidence?: Record<string, unknown>;
}

/** Belay's HTTP API as the demo tenant (submitter and approver). */
export interface BelayApi {
  submit(body: unknown): Promise<JobView>;
  job(jobId: string): Promise<JobView>;
  ledger(jobId: string): Promise<EntryView[]>;
  decide(
    jobId: string,
    body: { step: string; decision: 'approve'; resolution?: 'done' | 'absent' },
  ): Promise<unknown>;
  mfa(jobId: string, code: string): Promise<unknown>;
  cancel(jobId: string): Promise<unknown>;
  /** Connects an account of the tenant with credentials (`POST /accounts`); answers its id. */
  connectAccount(body: { application: string; label: string; credentials: unknown }): Promise<string>;
}

export function belayApi(apiUrl: string, apiKey: string): BelayApi {
  const h = { authorization: `Bearer ${apiKey}` };
  const jobUrl = (id: string, rest = ''): string => `${apiUrl}/jobs/${encodeURIComponent(id)}${rest}`;
  return {
    submit: async (body) => (await call<{ job: JobView }>('POST', `${apiUrl}/jobs`, h, body)).job,
    job: async (id) => (await call<{ job: JobView }>('GET', jobUrl(id), h)).job,
    ledger: async (id) => (await call<{ entries: EntryView[] }>('GET', jobUrl(id, '/ledger'), h)).entries,
    decide: (id, body) => call('POST', jobUrl(id, '/decisions'), h, body, 60_000),
    mfa: (id, code) => call('POST', jobUrl(id, '/mfa'), h, { code }, 90_000),
    cancel: (id) => call('POST', jobUrl(id, '/cancel'), h, {}),
    connectAccount: async (body) =>
      (await call<{ account: { accountId: string } }>('POST', `${apiUrl}/accounts`, h, body, 60_000)).account
        .accountId,
  };
}

/** The stack's control channel (see `local/control.ts`). */
export interface ControlClient {
  health(): Promise<ControlHealth>;
  arm(fault: ArmedFault): Promise<void>;
  killBrowser(sessionId: string): Promise<{ pid: number }>;
  events(after: number, waitMs: number): Promise<ControlEventPage>;
  executions(jobId: string): Promise<ControlExecution[]>;
}

export function controlClient(url: string, token: string): ControlClient {
  const h = { authorization: `Bearer ${token}` };
  return {
    health: () => call('GET', `${url}/health`, h, undefined, 5_000),
    arm: async (fault) => {
      await call('POST', `${url}/lambda/faults`, h, fault);
    },
    killBrowser: (id) => call('POST', `${url}/sessions/${encodeURIComponent(id)}/kill-browser`, h, {}),
    events: (after, waitMs) =>
      call(
        'GET',
        `${url}/lambda/events?after=${after}&limit=5000&wait=${waitMs}`,
        h,
        undefined,
        waitMs + 10_000,
      ),
    executions: async (jobId) =>
      (
        await call<{ executions: ControlExecution[] }>(
          'GET',
          `${url}/executions?jobId=${encodeURIComponent(jobId)}`,
          h,
        )
      ).executions,
  };
}
