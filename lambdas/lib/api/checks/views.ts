/**
 * A playbook's health: its recent drift checks (`mode: 'check'` jobs) and, per step, what each
 * found: ok, skipped, or the finding that ended it (layout changed, signed out, a write the step's
 * action sent), with its time, and "slower than usual" against the step's median in the earlier
 * checks shown.
 */
import { checksOf } from '../../engine/checks.ts';
import type { Ledger } from '../../ledger/ledger.ts';
import type { Job, LedgerEntry } from '../../ledger/types.ts';
import { redactText } from '../../redact.ts';
import { screenshotPath } from '../evidence/screenshots.ts';

/** One step of one check. */
export interface CheckedStepView {
  step: string;
  result: string;
  ms?: number;
  detail?: string;
  /** Slower than usual: more than twice the step's median in the earlier checks, and by a second or more. */
  slower?: { ms: number; medianMs: number };
  screenshot?: string;
  /** A write step's unsafe requests the check refused (none went). */
  refused?: string[];
}

export interface CheckView {
  jobId: string;
  status: string;
  createdAt: string;
  finishedAt?: string;
  /** ok: every step as expected; red: a step was not; running: not finished. */
  health: 'ok' | 'red' | 'running';
  steps: CheckedStepView[];
}

/** The tenant's newest checks of `playbookId` (at most `limit`), newest first. */
export async function recentChecks(
  ledger: Ledger,
  tenantId: string,
  playbookId: string,
  limit = 10,
): Promise<CheckView[]> {
  const views: CheckView[] = [];
  for (const job of await checksOf(ledger, tenantId, playbookId, limit)) {
    const { entries } = await ledger.readJob(tenantId, job.jobId);
    views.push(checkView(job, entries));
  }
  return withSlowerThanUsual(views);
}

/** One check as its entries tell it. */
export function checkView(job: Job, entries: readonly LedgerEntry[]): CheckView {
  const steps: CheckedStepView[] = [];
  for (const e of entries) {
    const check =
      e.type === 'step-completed' ? (e.detail?.check as Record<string, unknown> | undefined) : undefined;
    const finding = e.type === 'step-checked' ? e.detail : undefined;
    const d = check ?? finding;
    if (!d || !e.step) continue;
    steps.push({
      step: e.step,
      result: String(d.result ?? 'ok'),
      ...(typeof d.ms === 'number' ? { ms: d.ms } : {}),
      ...(typeof d.detail === 'string' ? { detail: redactText(d.detail) } : {}),
      ...(finding && e.screenshot ? { screenshot: screenshotPath(job.jobId, e.screenshot) } : {}),
      ...(Array.isArray(d.refused) ? { refused: d.refused.map(String) } : {}),
    });
  }
  const red = job.status === 'FAILED' || steps.some((s) => s.result !== 'ok' && s.result !== 'skipped');
  return {
    jobId: job.jobId,
    status: job.status,
    createdAt: job.createdAt,
    ...(job.finishedAt ? { finishedAt: job.finishedAt } : {}),
    health: red ? 'red' : job.status === 'SUCCEEDED' ? 'ok' : 'running',
    steps,
  };
}

/** Marks each step slower than usual against the median of that step in the older checks. */
export function withSlowerThanUsual(views: readonly CheckView[]): CheckView[] {
  return views.map((view, i) => {
    const older = views.slice(i + 1);
    return {
      ...view,
      steps: view.steps.map((s) => {
        const times = older
          .flatMap((o) => o.steps.filter((x) => x.step === s.step && x.result === 'ok' && x.ms !== undefined))
          .map((x) => x.ms as number)
          .sort((a, b) => a - b);
        if (s.ms === undefined || times.length < 2) return s;
        const medianMs = times[Math.floor(times.length / 2)] as number;
        return s.ms > 2 * medianMs && s.ms - medianMs >= 1_000 ? { ...s, slower: { ms: s.ms, medianMs } } : s;
      }),
    };
  });
}
