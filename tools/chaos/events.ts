/**
 * Every fault-point and fault-fired event of every boot of the stack, fetched from the control
 * channel (long-polled, cursor-paged) and kept for the whole run: the moments at which faults
 * land, the worker kills that fired, and the evidence of any completed step run again.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlEvent } from '../../local/control.ts';
import type { ChaosStack } from './stack-process.ts';

/** An event with the boot it came from. */
export interface SeenEvent extends ControlEvent {
  bootId: string;
}

export class EventLog {
  readonly all: SeenEvent[] = [];
  private cursor = 0;
  private bootId: string | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly listeners: Array<(e: SeenEvent) => void> = [];
  private readonly counts = new Map<string, number>();

  constructor(private readonly stack: ChaosStack) {}

  /** Calls `fn` for every new event. */
  onEvent(fn: (e: SeenEvent) => void): void {
    this.listeners.push(fn);
  }

  /** Starts polling in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        if (!(await this.fetch(2_000))) await sleep(300);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Fetches what the current boot has not yet given us (before a crash, and before checks). */
  async drain(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      if (!(await this.fetch(0))) return;
    }
  }

  /**
   * True once the job reached the moment (in any boot): `action`, the action of step
   * `stepIndex` (or a later one) began; `checkpoint`, the step's completion is being written
   * (or a later step began).
   */
  reached(jobId: string, stepIndex: number, moment: 'action' | 'checkpoint' = 'action'): boolean {
    return this.all.some((e) => {
      if (e.type !== 'fault-point' || e.info.jobId !== jobId) return false;
      const at = e.info.stepIndex ?? -1;
      if (moment === 'checkpoint') {
        return (
          (e.point === 'during-checkpoint' && at === stepIndex) ||
          (e.point === 'before-action' && at > stepIndex)
        );
      }
      return e.point === 'before-action' && at >= stepIndex;
    });
  }

  /** How many events of the job were seen (a progress signal). */
  count(jobId: string): number {
    return this.counts.get(jobId) ?? 0;
  }

  /** The job's events. */
  of(jobId: string): SeenEvent[] {
    return this.all.filter((e) => e.info.jobId === jobId);
  }

  /** One page; true when it brought events. */
  private async fetch(waitMs: number): Promise<boolean> {
    const handle = this.stack.handle;
    if (!handle) return false;
    try {
      if (handle.bootId !== this.bootId) {
        this.bootId = handle.bootId;
        this.cursor = 0;
      }
      const page = await handle.control.events(this.cursor, waitMs);
      if (page.bootId !== this.bootId) return false;
      for (const e of page.events) {
        const seen = { ...e, bootId: page.bootId };
        this.all.push(seen);
        if (e.info.jobId) this.counts.set(e.info.jobId, (this.counts.get(e.info.jobId) ?? 0) + 1);
        for (const fn of this.listeners) fn(seen);
      }
      this.cursor = page.next;
      return page.events.length > 0;
    } catch {
      return false;
    }
  }
}
