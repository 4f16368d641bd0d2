/**
 * The machine's processes as /proc shows them (Linux): each one's parent, state, command
 * line and start time, every process, a process's descendants. For checking that what a
 * stack started is gone (the chaos driver, the tests).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The state letter of /proc/<pid>/status (`R`, `S`, `Z` for a zombie, …). */
  state: string;
  /** The arguments joined with spaces. */
  cmdline: string;
  /** Start time (field 22 of /proc/<pid>/stat): with the PID, names this very process (PIDs are reused). */
  started: string;
}

/** One process, or undefined when it is gone (or was never there). */
export function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    // After the parenthesised command name (which may hold spaces) come fields 3 onwards.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return {
      pid,
      ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0),
      state: /^State:\s+(\S)/m.exec(status)?.[1] ?? '?',
      cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim(),
      started: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '',
    };
  } catch {
    return undefined;
  }
}

/** Every process on the machine, zombies included. */
export function allProcesses(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = readProcess(Number(name));
    if (info) found.push(info);
  }
  return found;
}

/** Neither a zombie nor dead. */
function live(info: ProcessInfo): boolean {
  return info.state !== 'Z' && info.state !== 'X';
}

/** Every live (not zombie) process on the machine. */
export function processes(): ProcessInfo[] {
  return allProcesses().filter(live);
}

/** True when the process exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  const info = readProcess(pid);
  return info !== undefined && live(info);
}

/** Every descendant of `root` (zombies included), nearest first. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const info of allProcesses()) children.set(info.ppid, [...(children.get(info.ppid) ?? []), info.pid]);
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    for (const c of children.get(queue.shift() as number) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
