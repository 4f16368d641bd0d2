/**
 * What the format's schema cannot say about a declarative playbook: steps in declared
 * applications, a probe for every write, references to inputs the schema has and to steps that
 * come earlier, secrets only where a field is filled (never where a model reads), patterns that
 * compile, a JSON Schema Ajv can use. Each problem carries its path in the file, so the reader
 * can name the line.
 */

import { type Reference, referenceProblem, referencesOf } from '../template.ts';
import { compileInputSchema } from './inputs.ts';
import type { DeclarativePlaybook, Expect } from './schema.ts';

/** A problem at a path of the file (`steps.2.probe.records`). */
export interface Issue {
  path: (string | number)[];
  message: string;
}

const PATTERN_KEYS = new Set(['url', 'at', 'pathPattern', 'match']);

/** Does the JSON Schema describe `path` (as far as it says: free-form objects accept anything)? */
function schemaHas(schema: unknown, path: readonly string[]): boolean {
  let node = schema as Record<string, unknown> | undefined;
  for (const key of path) {
    if (!node || typeof node !== 'object') return true;
    const props = node.properties as Record<string, unknown> | undefined;
    if (props && key in props) {
      node = props[key] as Record<string, unknown>;
      continue;
    }
    if (node.type === 'array' && /^\d+$/.test(key)) {
      const items = node.items ?? (node.prefixItems as unknown[] | undefined)?.[Number(key)];
      node = items as Record<string, unknown> | undefined;
      continue;
    }
    // A field the schema does not list is most likely a typo, unless the schema asks for more
    // fields explicitly (additionalProperties: true or a schema) or lists none at all.
    return !props || (node.additionalProperties !== undefined && node.additionalProperties !== false);
  }
  return true;
}

function walk(
  value: unknown,
  path: (string | number)[],
  visit: (v: unknown, p: (string | number)[]) => void,
): void {
  visit(value, path);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walk(v, [...path, i], visit);
  } else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) walk(v, [...path, k], visit);
}

/** Is the text at `path` read by a model (an agent step's goal or fields, an agent probe's question)? */
function modelReads(path: readonly (string | number)[]): boolean {
  return (
    path[0] === 'steps' &&
    ((path[2] === 'agent' && (path[3] === 'goal' || path[3] === 'fields')) ||
      (path[2] === 'probe' && path[3] === 'agent' && path[4] === 'question'))
  );
}

/** Is the text at `path` an agent step's goal or fields (filled from the job's inputs and evidence alone)? */
function agentGoal(path: readonly (string | number)[]): boolean {
  return path[0] === 'steps' && path[2] === 'agent' && (path[3] === 'goal' || path[3] === 'fields');
}

function referenceIssues(
  spec: DeclarativePlaybook,
  ref: Reference,
  path: (string | number)[],
): string | undefined {
  const [root, ...rest] = ref.path;
  if (root === 'credentials' && modelReads(path))
    return `${ref.text}: credentials never go where a model reads them (an agent's goal, fields or question); sign in with a signIn step`;
  if (agentGoal(path) && root !== 'inputs' && root !== 'evidence')
    return `${ref.text}: an agent's goal and fields take {{inputs.x}} and {{evidence.<step>.<field>}} only (its actions are cached by their names)`;
  const allowCredentials = path.at(-1) === 'value' && path.at(-2) === 'fill';
  const basic = referenceProblem(ref, allowCredentials);
  if (basic) return basic;
  if (root === 'inputs' && !schemaHas(spec.inputs, rest))
    return `${ref.text}: the inputs' schema has no ${rest.join('.')}`;
  if (root === 'evidence') {
    const stepIndex = path[0] === 'steps' && typeof path[1] === 'number' ? path[1] : spec.steps.length;
    const earlier = spec.steps.slice(0, stepIndex).map((s) => s.id);
    if (!earlier.includes(rest[0] ?? ''))
      return `${ref.text}: ${rest[0]} is not a step before this one (${earlier.join(', ') || 'none'})`;
  }
  return undefined;
}

/** Does the `expect` say anything that shows the step worked? */
function saysDone(e: Expect): boolean {
  return (
    e.url !== undefined ||
    e.visible !== undefined ||
    !!e.checks?.length ||
    !!Object.keys(e.evidence ?? {}).length
  );
}

/** Every problem of `spec` that its schema does not catch. */
export function declarativeProblems(spec: DeclarativePlaybook): Issue[] {
  const issues: Issue[] = [];
  const apps = Object.keys(spec.applications);
  const seen = new Map<string, number>();
  spec.steps.forEach((step, i) => {
    const at = (...rest: (string | number)[]): (string | number)[] => ['steps', i, ...rest];
    if (!apps.includes(step.app))
      issues.push({
        path: at('app'),
        message: `${step.app} is not one of applications (${apps.join(', ')})`,
      });
    const earlier = seen.get(step.id);
    if (earlier !== undefined)
      issues.push({ path: at('id'), message: `steps ${earlier} and ${i} both have the id ${step.id}` });
    seen.set(step.id, i);
    if ('signIn' in step) return;
    // Scripted and agent steps: a write has a probe, a read has none, and `expect` says what done looks like.
    if (step.kind === 'write' && !step.probe)
      issues.push({
        path: at('probe'),
        message: 'a write needs a probe: where to look for its effect after a crash',
      });
    if (step.kind === 'read') {
      for (const key of [
        'probe',
        'idempotencyKey',
        'refusal',
        'effect',
        'newEvidence',
        'commits',
        'approve',
      ] as const)
        if (key in step && step[key as keyof typeof step] !== undefined)
          issues.push({ path: at(key), message: 'only writes have one' });
    }
    if ('approve' in step && step.approve !== undefined) {
      if (step.kind !== 'write')
        issues.push({ path: at('approve'), message: 'only a write is approved on its effect' });
      if (step.needsApproval)
        issues.push({
          path: at('needsApproval'),
          message: 'approve: effect asks for the approval: remove needsApproval',
        });
      if ('actions' in step && step.actions.length < 2)
        issues.push({
          path: at('actions'),
          message:
            'a write approved on its effect fills its form first: at least one action before the commit',
        });
    }
    if (step.newEvidence) {
      const fields = Object.keys(step.expect.evidence ?? {});
      for (const [j, name] of step.newEvidence.entries())
        if (!fields.includes(name))
          issues.push({
            path: at('newEvidence', j),
            message: `${name} is not one of expect.evidence's fields (${fields.join(', ') || 'none'})`,
          });
      if (step.effect === 'sets')
        issues.push({ path: at('newEvidence'), message: 'a write that sets a value makes nothing new' });
    }
    if ('actions' in step && step.kind === 'write' && step.actions.length === 0)
      issues.push({ path: at('actions'), message: 'a write needs the action that commits it' });
    if (!saysDone(step.expect))
      issues.push({
        path: at('expect'),
        message: 'say what shows the step worked: url, visible, checks or evidence',
      });
    // A sign-in step's title defaults to "Sign in to <app>"; the others say what they do.
    if (step.title === undefined)
      issues.push({ path: at('title'), message: 'a line for people: what the step does' });
  });
  walk(spec, [], (value, path) => {
    if (typeof value !== 'string') return;
    const key = path.at(-1);
    const pattern =
      typeof key === 'string' && (PATTERN_KEYS.has(key) || (key === 'path' && path.at(-2) === 'commits'));
    if (pattern && path[0] === 'steps') {
      try {
        new RegExp(value);
      } catch (err) {
        issues.push({ path, message: `not a regular expression: ${(err as Error).message}` });
      }
    }
    if (!value.includes('{{') || path[0] === 'inputs' || path[0] === 'exampleInputs') return;
    for (const ref of referencesOf(value)) {
      const problem = referenceIssues(spec, ref, path);
      if (problem) issues.push({ path, message: problem });
    }
  });
  if (spec.inputs.type !== 'object')
    issues.push({ path: ['inputs', 'type'], message: 'the inputs are an object: type: object' });
  let validate: ReturnType<typeof compileInputSchema> | undefined;
  try {
    validate = compileInputSchema(spec.inputs);
  } catch (err) {
    issues.push({ path: ['inputs'], message: `not a JSON Schema Ajv can use: ${(err as Error).message}` });
  }
  if (validate && spec.exampleInputs !== undefined && !validate(spec.exampleInputs))
    issues.push({
      path: ['exampleInputs'],
      message: `do not fit the inputs' schema: ${(validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`).join('; ')}`,
    });
  return issues;
}
