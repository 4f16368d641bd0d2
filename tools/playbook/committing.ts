/**
 * The committing request of each write step, as `npm run playbook -- test`'s drop runs drop and
 * count it: the step's `commits`, else the one the clean run's write guard recorded for it.
 */
import { committingRequest } from '../../lambdas/lib/commits.ts';
import type { Playbook } from '../../lambdas/lib/playbooks/contract.ts';
import type { CommittingSignature } from './drive.ts';
import type { RunOutcome } from './verdicts.ts';

/**
 * The committing request of each write, as drop runs count it: the step's `commits`, else the
 * one the clean run's write guard recorded for it (method and path). Unknown: every unsafe request.
 */
export function committingRequests(
  playbook: Playbook,
  clean: RunOutcome | undefined,
): Record<number, CommittingSignature> {
  const out: Record<number, CommittingSignature> = {};
  for (const [i, step] of playbook.steps.entries()) {
    if (step.kind !== 'write') continue;
    if (step.commits) {
      const matches = committingRequest(step.commits);
      out[i] = {
        matches: (method, path) => matches(method, `http://x${path}`),
        label: `${step.commits.method ?? 'POST|PUT|PATCH|DELETE'} ${step.commits.path}`,
      };
      continue;
    }
    const recorded = clean?.entries
      .filter((e) => e.step === step.id && (e.type === 'step-completed' || e.type === 'step-unconfirmed'))
      .map(
        (e) =>
          (e.detail?.writeGuard as { commits?: { method: string; url: string }[] } | undefined)?.commits?.[0],
      )
      .find((c) => c !== undefined);
    if (!recorded) continue;
    // A record's id in the path (/reports/r1/lines) is another record's in the next run: any segment with a digit matches any.
    const path = new URL(recorded.url).pathname;
    const pattern = pathPattern(path);
    out[i] = {
      matches: (method, p) => method === recorded.method && pattern.test(p),
      label: `${recorded.method} ${path
        .split('/')
        .map((seg) => (/\d/.test(seg) ? '{id}' : seg))
        .join('/')}`,
    };
  }
  return out;
}

/** A path as a pattern for the same request of another run: a segment with a digit (an id) matches any segment. */
export function pathPattern(path: string): RegExp {
  const segments = path
    .split('/')
    .map((seg) => (/\d/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}$`);
}
