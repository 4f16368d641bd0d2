/**
 * What the local runner remembers across its own restarts, as Step Functions does: the names
 * of executions (taken for 90 days, whether the execution is still running, closed, or lost
 * with the process that ran it) and the task tokens it issued (a token of a task that ended
 * when the runner stopped answers `TaskTimedOut`, not `TaskDoesNotExist`). One JSON line per
 * fact in a file, rewritten without the expired ones when the runner starts.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { NAME_RETENTION_MS } from './limits.ts';

/** Tokens are kept as long as a task may wait for one (a year), then forgotten. */
const TOKEN_RETENTION_MS = 366 * 86_400_000;

type Line = { n: string; at: number; i?: string } | { c: string; at: number } | { t: string; at: number };

/** An execution an earlier run of the runner started and never closed: it died with that run. */
export interface LostExecution {
  name: string;
  startedAt: number;
  /** Its input (JSON text). */
  input: string;
}

/** The runner's memory of names and tokens. */
export interface RunnerRegistry {
  /** Is `name` taken by an execution started in the last 90 days (by this run or an earlier one)? */
  nameTaken(name: string, now: number): boolean;
  recordName(name: string, at: number, input?: string): void;
  /** The execution `name` closed (succeeded, failed, timed out or was stopped). */
  recordClose(name: string, at: number): void;
  /** The executions earlier runs started and never closed, oldest first. */
  lost(): readonly LostExecution[];
  recordToken(token: string, at: number): void;
  /** Did an earlier run of the runner issue this token? */
  issuedEarlier(token: string): boolean;
}

const digest = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 32);

/**
 * The registry kept in `file` (created if missing), or one in memory only when `file` is
 * undefined (a runner whose state does not outlive it).
 */
export function openRegistry(file?: string, now = Date.now()): RunnerRegistry {
  const names = new Map<string, number>();
  const earlierTokens = new Set<string>();
  const opened = new Map<string, LostExecution>();
  const kept: Line[] = [];
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // A first start.
    }
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue; // a line torn by a crash mid-write
      }
      if ('n' in line && now - line.at < NAME_RETENTION_MS) {
        names.set(line.n, line.at);
        opened.set(line.n, { name: line.n, startedAt: line.at, input: line.i ?? '{}' });
        kept.push(line);
      } else if ('c' in line && now - line.at < NAME_RETENTION_MS) {
        opened.delete(line.c);
        kept.push(line);
      } else if ('t' in line && now - line.at < TOKEN_RETENTION_MS) {
        earlierTokens.add(line.t);
        kept.push(line);
      }
    }
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, kept.map((l) => `${JSON.stringify(l)}\n`).join(''));
    renameSync(temp, file);
  }
  const lost = [...opened.values()].sort((a, b) => a.startedAt - b.startedAt);
  const write = (line: Line): void => {
    if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  return {
    nameTaken(name, at) {
      const started = names.get(name);
      return started !== undefined && at - started < NAME_RETENTION_MS;
    },
    recordName(name, at, input) {
      names.set(name, at);
      write(input === undefined ? { n: name, at } : { n: name, at, i: input });
    },
    recordClose(name, at) {
      write({ c: name, at });
    },
    lost: () => lost,
    recordToken(token, at) {
      write({ t: digest(token), at });
    },
    issuedEarlier(token) {
      return earlierTokens.has(digest(token));
    },
  };
}
