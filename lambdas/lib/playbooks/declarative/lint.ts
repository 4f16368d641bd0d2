/**
 * What makes a valid declarative playbook unsafe to trust, checked with no stack
 * (`npm run playbook -- validate`): a write's probe that names neither an input nor the key (it
 * cannot tell this job's record from another's), a write that creates whose expect names nothing
 * of the job (an earlier record satisfies it), and a `within` that may find several elements (the
 * engine refuses one that does, at run time).
 */
import { referencesOf } from '../template.ts';
import type { Issue } from './problems.ts';
import type { DeclarativePlaybook } from './schema.ts';

/** Does any text under `value` reference one of `roots`? */
function names(value: unknown, roots: readonly string[]): boolean {
  if (typeof value === 'string') return referencesOf(value).some((r) => roots.includes(r.path[0] ?? ''));
  if (Array.isArray(value)) return value.some((v) => names(v, roots));
  if (value && typeof value === 'object') return Object.values(value).some((v) => names(v, roots));
  return false;
}

/** Is a `within` target narrow enough to find one element: filtered, numbered, or named as only one is? */
function narrow(target: unknown): boolean {
  if (typeof target === 'string') return /[#[]|:nth-|:first|:last/.test(target);
  if (!target || typeof target !== 'object') return false;
  const t = target as Record<string, unknown>;
  return (
    t.where !== undefined ||
    t.nth !== undefined ||
    (t.role !== undefined && t.name !== undefined) ||
    t.label !== undefined ||
    (typeof t.css === 'string' && narrow(t.css))
  );
}

function withins(value: unknown, path: (string | number)[], out: Issue[]): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) withins(v, [...path, i], out);
    return;
  }
  if (!value || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'within' && !narrow(v))
      out.push({
        path: [...path, k],
        message:
          'may find several elements, and a step acts on one: the engine refuses a within that finds more than one; narrow it with where, nth or a role and name',
      });
    withins(v, [...path, k], out);
  }
}

/** The lint problems of a valid playbook, each at its path in the file. */
export function lintDeclarative(spec: DeclarativePlaybook): Issue[] {
  const issues: Issue[] = [];
  spec.steps.forEach((step, i) => {
    withins(step, ['steps', i], issues);
    if ('signIn' in step || step.kind !== 'write') return;
    if (step.probe && !names(step.probe, ['inputs', 'idempotencyKey']))
      issues.push({
        path: ['steps', i, 'probe'],
        message:
          "names neither an input nor {{idempotencyKey}}: it cannot tell this job's record from another's (look it up by the key the write carries, or by an input only this job has)",
      });
    const creates = (step.effect ?? 'creates') === 'creates';
    if (
      creates &&
      !step.newEvidence?.length &&
      !names(step.expect, ['inputs', 'idempotencyKey', 'evidence', 'jobId'])
    )
      issues.push({
        path: ['steps', i, 'expect'],
        message:
          'names no input, no earlier evidence and not {{idempotencyKey}}: a record another job left satisfies it; name one, or name the evidence field that identifies the new record in newEvidence',
      });
  });
  return issues;
}
