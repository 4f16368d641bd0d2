/**
 * A typed client for a demo site's admin endpoint (`/__admin/...`), for tests, chaos runs and
 * people at a terminal. See `http/admin.ts` for the routes.
 */
import { AdminRequestError } from './errors.ts';

export interface AdminWrites {
  site: string;
  kind: 'order' | 'crm-change' | 'billing-change';
  count: number;
  items: Array<{ key: string } & Record<string, unknown>>;
  /** Committed writes per idempotency key (1 when the site kept its promise). */
  countsByKey: Record<string, number>;
  /** Write requests per idempotency key, replays included. */
  attemptsByKey: Record<string, number>;
}

export interface AdminRequestLog {
  site: string;
  requests: Array<{ method: string; path: string; status: number; at: string }>;
  postsByPath: Record<string, number>;
}

export interface AdminFaults {
  changedLayout: boolean;
  dropNextWriteResponse: boolean;
  /** How the next dropped response is dropped: a status line, or no byte at all (`reset`, `close`). */
  dropMode: 'status-line' | 'reset' | 'close';
  slowMs: number;
  /** A log-normal delay per response (median and 95th percentile, ms), or null. */
  latency: { p50Ms: number; p95Ms: number } | null;
  /** De-duplicate writes by idempotency key; off, every write request commits a new record. */
  dedupe: boolean;
  /** Refuse every write with a visible error, committing nothing. */
  refuseWrites: boolean;
  /** Answer every page with 503 (briefly down). */
  unavailable: boolean;
  /** Each page sends requests of its own as a form is submitted, in flight while the write goes. */
  busyPages: boolean;
}

export interface OutboxMessage {
  id: string;
  username: string;
  to: string;
  code: string;
  text: string;
  sentAt: string;
}

export interface SiteAdmin {
  writes(): Promise<AdminWrites>;
  requests(): Promise<AdminRequestLog>;
  clearRequests(): Promise<void>;
  expireSessions(): Promise<{ expired: number }>;
  faults(): Promise<AdminFaults>;
  setFaults(patch: Partial<AdminFaults>): Promise<AdminFaults>;
  outbox(): Promise<OutboxMessage[]>;
  /** The newest one-time code sent to `username`, or undefined. */
  latestCode(username: string): Promise<string | undefined>;
  reset(): Promise<void>;
}

/** An admin client for the site at `baseUrl`. */
export function siteAdmin(baseUrl: string, adminToken: string): SiteAdmin {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl}/__admin/${path}`, {
      method,
      headers: {
        'x-admin-token': adminToken,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new AdminRequestError(path, res.status, text);
    return JSON.parse(text) as T;
  };
  const outbox = async (): Promise<OutboxMessage[]> =>
    (await call<{ messages: OutboxMessage[] }>('GET', 'outbox')).messages;
  return {
    writes: () => call('GET', 'writes'),
    requests: () => call('GET', 'requests'),
    clearRequests: async () => {
      await call('DELETE', 'requests');
    },
    expireSessions: () => call('POST', 'sessions/expire'),
    faults: () => call('GET', 'faults'),
    setFaults: (patch) => call('POST', 'faults', patch),
    outbox,
    latestCode: async (username) => (await outbox()).filter((m) => m.username === username).at(-1)?.code,
    reset: async () => {
      await call('POST', 'reset');
    },
  };
}
