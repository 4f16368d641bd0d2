/**
 * The admin endpoint of a demo site (`/__admin/...`): server-side truth and fault controls
 * for tests and chaos runs. Answers only loopback requests that carry the admin token in
 * `x-admin-token`; JSON in, JSON out.
 *
 * | method | path | does |
 * |---|---|---|
 * | GET | /__admin/writes (shop: also /__admin/orders; crm, billing: /__admin/changes) | committed writes, counts per idempotency key, attempts per key |
 * | GET | /__admin/downloads | the files served as downloads (billing's invoice PDFs), counts per file |
 * | GET, DELETE | /__admin/requests | the request log (method, path, status, time) and POST counts by path; DELETE clears it |
 * | POST | /__admin/sessions/expire | ends every sign-in now |
 * | GET, POST | /__admin/faults | read or change `{ changedLayout, dropNextWriteResponse, dropMode, slowMs, latency, dedupe, refuseWrites, unavailable, busyPages }` (`latency`: `{ p50Ms, p95Ms }` or null) |
 * | GET | /__admin/outbox | the one-time codes "sent by SMS" |
 * | POST | /__admin/reset | back to the seed state (data, sessions, outbox, faults, request log) |
 */
import { timingSafeEqual } from 'node:crypto';
import { type LatencyProfile, latencyProblem } from './latency.ts';
import type { SiteRequest, SiteResponse } from './router.ts';
import { json } from './router.ts';
import type { DropMode, FaultFlags, SiteRuntime } from './runtime.ts';
import { DROP_MODES, initialState } from './runtime.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function tokenMatches(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function parseJson(body: string): Record<string, unknown> | undefined {
  if (!body.trim()) return {};
  try {
    const value: unknown = JSON.parse(body);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function countBy(keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
}

function applyFaults(faults: FaultFlags, body: Record<string, unknown>): string | undefined {
  const {
    changedLayout,
    dropNextWriteResponse,
    dropMode,
    slowMs,
    latency,
    dedupe,
    refuseWrites,
    unavailable,
    busyPages,
  } = body;
  if (latency !== undefined && latency !== null) {
    if (typeof latency !== 'object') return 'latency must be {p50Ms, p95Ms} or null';
    const problem = latencyProblem(latency as Record<string, unknown>);
    if (problem) return `latency: ${problem}`;
  }
  if (dedupe !== undefined && typeof dedupe !== 'boolean') return 'dedupe must be a boolean';
  if (refuseWrites !== undefined && typeof refuseWrites !== 'boolean')
    return 'refuseWrites must be a boolean';
  if (unavailable !== undefined && typeof unavailable !== 'boolean') return 'unavailable must be a boolean';
  if (busyPages !== undefined && typeof busyPages !== 'boolean') return 'busyPages must be a boolean';
  if (dropMode !== undefined && !DROP_MODES.includes(dropMode as DropMode)) {
    return `dropMode must be one of ${DROP_MODES.join(', ')}`;
  }
  if (changedLayout !== undefined && typeof changedLayout !== 'boolean')
    return 'changedLayout must be a boolean';
  if (dropNextWriteResponse !== undefined && typeof dropNextWriteResponse !== 'boolean') {
    return 'dropNextWriteResponse must be a boolean';
  }
  if (
    slowMs !== undefined &&
    (typeof slowMs !== 'number' || !Number.isInteger(slowMs) || slowMs < 0 || slowMs > 60_000)
  ) {
    return 'slowMs must be an integer from 0 to 60000';
  }
  if (changedLayout !== undefined) faults.changedLayout = changedLayout;
  if (dropNextWriteResponse !== undefined) faults.dropNextWriteResponse = dropNextWriteResponse;
  if (slowMs !== undefined) faults.slowMs = slowMs;
  if (latency !== undefined)
    faults.latency =
      latency === null
        ? null
        : { p50Ms: (latency as LatencyProfile).p50Ms, p95Ms: (latency as LatencyProfile).p95Ms };
  if (dedupe !== undefined) faults.dedupe = dedupe;
  if (refuseWrites !== undefined) faults.refuseWrites = refuseWrites;
  if (unavailable !== undefined) faults.unavailable = unavailable;
  if (busyPages !== undefined) faults.busyPages = busyPages;
  if (dropMode !== undefined) faults.dropMode = dropMode as DropMode;
  return undefined;
}

/** Answers an `/__admin/...` request. */
export function handleAdmin<D>(rt: SiteRuntime<D>, req: SiteRequest): SiteResponse {
  if (!LOOPBACK.has(req.remoteAddress ?? '')) return json({ error: 'admin is loopback only' }, 403);
  if (!tokenMatches(req.headers['x-admin-token'], rt.adminToken)) {
    return json({ error: 'missing or wrong x-admin-token' }, 401);
  }
  const route = `${req.method} ${req.path.replace(/\/$/, '')}`;
  const state = rt.store.state;
  switch (route) {
    case 'GET /__admin/writes':
    case 'GET /__admin/orders':
    case 'GET /__admin/changes': {
      const { kind, items } = rt.def.writes(state.data);
      return json({
        site: rt.def.info.name,
        kind,
        count: items.length,
        items,
        countsByKey: countBy(items.map((i) => i.key)),
        attemptsByKey: state.keyAttempts,
      });
    }
    case 'GET /__admin/downloads': {
      const items = rt.def.downloads?.(state.data) ?? [];
      return json({
        site: rt.def.info.name,
        count: items.length,
        items,
        countsByFile: countBy(items.map((i) => i.file)),
      });
    }
    case 'GET /__admin/requests':
      return json({ site: rt.def.info.name, requests: rt.requestLog, postsByPath: rt.postsByPath });
    case 'DELETE /__admin/requests':
      rt.clearRequestLog();
      return json({ cleared: true });
    case 'POST /__admin/sessions/expire': {
      const expired = Object.keys(state.sessions).length;
      rt.store.update((s) => {
        s.sessions = {};
      });
      return json({ expired });
    }
    case 'GET /__admin/faults':
      return json(state.faults);
    case 'POST /__admin/faults': {
      const body = parseJson(req.body);
      if (!body) return json({ error: 'body must be a JSON object' }, 400);
      const next = { ...state.faults };
      const problem = applyFaults(next, body);
      if (problem) return json({ error: problem }, 400);
      rt.store.update((s) => {
        s.faults = next;
      });
      return json(next);
    }
    case 'GET /__admin/outbox':
      return json({ site: rt.def.info.name, messages: state.outbox });
    case 'POST /__admin/reset':
      // The de-duplication mode is how the site was started, not a fault: a reset keeps it.
      rt.store.state = {
        ...initialState(rt.def),
        faults: { ...initialState(rt.def).faults, dedupe: state.faults.dedupe },
      };
      rt.store.save();
      rt.clearRequestLog();
      return json({ reset: true });
    default:
      return json({ error: `no admin route ${route}` }, 404);
  }
}
