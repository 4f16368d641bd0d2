/**
 * The order and overlap of a chaos run's jobs: which may run at once (see {@link schedule}).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunContext } from './context.ts';
import { describeFault, isDrop } from './faults.ts';
import { driveJob, type JobOutcome } from './job-driver.ts';
import type { JobSpec } from './plan.ts';
import type { SiteName } from './sites.ts';

/**
 * Starts jobs in plan order, at most `concurrency` at once, never two that share a record (a
 * shop account's cart, a customer: `JobSpec.resources`), and a job with a site-wide fault
 * (layout, dropped response) or whose writes are counted by site alone on its site. A job that
 * waits for a site keeps later jobs off it, so it is not passed over for good.
 */
export async function schedule(
  ctx: RunContext,
  plan: JobSpec[],
  concurrency: number,
  startDeadline: number,
  done: (o: JobOutcome) => void,
  notStarted: string[],
  abort: () => void,
): Promise<void> {
  const queue = [...plan];
  // The first driver that fails stops the others (they see the signal and end as they are),
  // and is thrown once they have: no driver is left polling a stack that is gone.
  let failed: { err: unknown } | undefined;
  const running = new Map<string, Promise<void>>();
  const resources = new Set<string>();
  const shared = new Map<SiteName, number>();
  const exclusive = new Set<SiteName>();
  // A site-wide fault's site, and the write sites of a job whose writes are counted by site.
  const exclusiveOf = (j: JobSpec): SiteName[] => [
    ...new Set([
      ...j.faults.flatMap((f) =>
        (f.kind === 'layout-change' || isDrop(f.kind)) && 'site' in f ? [f.site] : [],
      ),
      ...(j.counting === 'site' ? j.writes.filter((w) => w.countedBy === 'site').map((w) => w.site) : []),
    ]),
  ];
  while (queue.length || running.size) {
    const stopping = Date.now() > startDeadline || ctx.signal?.aborted;
    const blocked = new Set<SiteName>();
    for (const j of stopping ? [] : [...queue]) {
      if (running.size >= concurrency) break;
      const mine = exclusiveOf(j);
      const free =
        j.resources.every((r) => !resources.has(r)) &&
        j.sites.every((s) => !exclusive.has(s) && !blocked.has(s)) &&
        mine.every((s) => (shared.get(s) ?? 0) === 0);
      if (!free) {
        for (const s of mine) blocked.add(s);
        continue;
      }
      queue.splice(queue.indexOf(j), 1);
      for (const r of j.resources) resources.add(r);
      for (const s of j.sites) shared.set(s, (shared.get(s) ?? 0) + 1);
      for (const s of mine) exclusive.add(s);
      ctx.say(
        `start ${j.jobId} ${j.playbook} (${j.resources.join(' ')}); faults: ${j.faults.map(describeFault).join(', ') || 'none'}`,
      );
      running.set(
        j.jobId,
        driveJob(ctx, j)
          .then(done, (err: unknown) => {
            ctx.say(`  ${j.jobId}: the driver failed: ${err instanceof Error ? err.stack : String(err)}`);
            failed ??= { err };
            abort();
          })
          .finally(() => {
            running.delete(j.jobId);
            for (const r of j.resources) resources.delete(r);
            for (const s of j.sites) shared.set(s, (shared.get(s) ?? 1) - 1);
            for (const s of mine) exclusive.delete(s);
          }),
      );
    }
    if (stopping && queue.length) notStarted.push(...queue.splice(0).map((j) => j.jobId));
    if (running.size) await Promise.race([...running.values(), sleep(1_000)]);
    else if (queue.length) await sleep(500);
  }
  if (failed) throw failed.err;
}
