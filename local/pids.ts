import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Processes the local stack started that outlive it when it is killed (SIGKILL leaves no
 * chance to stop children): their PIDs and command lines, kept in the data directory, so
 * the next start ends exactly those processes and no others.
 */
interface Recorded {
  pid: number;
  cmdline: string;
}

function cmdlineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}

export async function recordPid(file: string, pid: number): Promise<void> {
  const list = await readList(file);
  const cmdline = cmdlineOf(pid);
  if (cmdline === undefined) return;
  list.push({ pid, cmdline });
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(list));
}

/** SIGKILLs the recorded processes still running with the same command line; returns their PIDs. */
export async function killRecorded(file: string): Promise<number[]> {
  const killed: number[] = [];
  for (const { pid, cmdline } of await readList(file)) {
    if (cmdlineOf(pid) !== cmdline) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // Already gone.
    }
  }
  await writeFile(file, '[]').catch(() => undefined);
  return killed;
}

async function readList(file: string): Promise<Recorded[]> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return Array.isArray(parsed) ? (parsed as Recorded[]) : [];
  } catch {
    return [];
  }
}
