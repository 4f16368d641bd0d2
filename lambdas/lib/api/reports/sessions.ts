import type { Job, LedgerEntry } from '../../ledger/types.ts';

/** One browser session of a job, as its ledger tells it. */
export interface SessionSpan {
  sessionId: string;
  openedAt: string;
  /** When it ended; for a session still open, the time the question was asked. */
  endedAt: string;
  /** From opening to end (what a browser provider bills). */
  seconds: number;
  /** Spent in steps: the `browserSeconds` of the entries recorded in this session. */
  activeSeconds: number;
  /** Idle browser time: session time not spent in steps (waits that kept the browser, queues, coordination). */
  idleSeconds: number;
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/**
 * The job's browser sessions from its ledger: opened by `session-opened`/`session-replaced`
 * entries; ended by the `session-replaced` entry that names them `previous`, by a `parked`
 * or `session-ended` entry that lists them, by the job's end (`finishedAt`: its sessions end
 * as it finishes), or still open at `now`. Idle time is a session's time not spent in steps.
 *
 * @example
 * // opened 10:00:00, a 30 s step, the job finished 10:05:00: 300 s billed, 30 active, 270 idle
 */
export function sessionSpans(job: Job, entries: readonly LedgerEntry[], now: Date): SessionSpan[] {
  const opened = new Map<string, string>();
  const ended = new Map<string, string>();
  const end = (sessionId: unknown, at: string): void => {
    if (typeof sessionId === 'string' && !ended.has(sessionId)) ended.set(sessionId, at);
  };
  for (const e of entries) {
    if ((e.type === 'session-opened' || e.type === 'session-replaced') && e.sessionId) {
      if (!opened.has(e.sessionId)) opened.set(e.sessionId, e.at);
      if (e.type === 'session-replaced') end(e.detail?.previous, e.at);
    } else if (e.type === 'session-ended') {
      end(e.sessionId, e.at);
    } else if (e.type === 'parked' && Array.isArray(e.detail?.sessions)) {
      for (const s of e.detail.sessions as { sessionId?: unknown }[]) end(s?.sessionId, e.at);
    }
  }
  const fallbackEnd = job.finishedAt ?? now.toISOString();
  const spans: SessionSpan[] = [];
  for (const [sessionId, openedAt] of opened) {
    const endedAt = ended.get(sessionId) ?? fallbackEnd;
    const seconds = Math.max(0, (Date.parse(endedAt) - Date.parse(openedAt)) / 1000);
    const activeSeconds = entries
      .filter((e) => e.sessionId === sessionId)
      .reduce((sum, e) => sum + (e.cost?.browserSeconds ?? 0), 0);
    spans.push({
      sessionId,
      openedAt,
      endedAt,
      seconds: round3(seconds),
      activeSeconds: round3(activeSeconds),
      idleSeconds: round3(Math.max(0, seconds - activeSeconds)),
    });
  }
  return spans;
}
