/**
 * `definePlaybook` and `defineApplication`: the checks every playbook passes before the engine
 * runs it, whoever wrote it. The registry runs the same checks on whatever a playbook module
 * exports, so a playbook that skips `definePlaybook` is held to them too.
 */
import type { Application, Playbook, Step } from './contract.ts';
import { PlaybookDefinitionError } from './errors.ts';

/** `name` of a playbook, an application or a step id: lower-case letters, digits and dashes. */
export const NAME_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;
const STEP_KINDS = new Set(['read', 'write']);
const SCREENSHOT_POLICIES = new Set(['default', 'writes', 'every-step', 'none']);

const isFunction = (v: unknown): boolean => typeof v === 'function';

/** What is wrong with an application, as `field: problem` lines (empty when nothing is). */
export function applicationProblems(application: unknown, field = 'application'): string[] {
  if (application === null || typeof application !== 'object') return [`${field}: must be an object`];
  const app = application as Partial<Application>;
  const problems: string[] = [];
  if (typeof app.name !== 'string' || !NAME_PATTERN.test(app.name))
    problems.push(`${field}.name: lower-case letters, digits and dashes, starting with a letter`);
  for (const method of ['isSignedOut', 'signIn', 'submitOneTimeCode'] as const) {
    if (!isFunction(app[method])) problems.push(`${field}.${method}: must be a function`);
  }
  for (const method of ['isSignedIn', 'showsSignedOut'] as const) {
    if (app[method] !== undefined && !isFunction(app[method]))
      problems.push(`${field}.${method}: must be a function when given`);
  }
  return problems;
}

function stepProblems(step: unknown, i: number, applications: Record<string, unknown>): string[] {
  const field = `steps[${i}]`;
  if (step === null || typeof step !== 'object') return [`${field}: must be an object`];
  const s = step as Partial<Step>;
  const at = typeof s.id === 'string' ? `${field} (${s.id})` : field;
  const problems: string[] = [];
  if (typeof s.id !== 'string' || !NAME_PATTERN.test(s.id))
    problems.push(`${field}.id: lower-case letters, digits and dashes, starting with a letter`);
  if (typeof s.title !== 'string' || s.title.trim() === '') problems.push(`${at}.title: a line for people`);
  if (!STEP_KINDS.has(String(s.kind))) problems.push(`${at}.kind: must be read or write`);
  if (typeof s.app !== 'string' || !(s.app in applications))
    problems.push(
      `${at}.app: ${JSON.stringify(s.app)} is not one of the playbook's applications (${Object.keys(applications).join(', ') || 'none'})`,
    );
  for (const method of ['precondition', 'restore', 'run', 'verify'] as const) {
    if (!isFunction(s[method])) problems.push(`${at}.${method}: must be a function`);
  }
  if (s.kind === 'write' && !isFunction(s.probe))
    problems.push(
      `${at}.probe: a write needs a probe (how to look in the application for its effect after a crash)`,
    );
  if (s.kind === 'read' && s.probe !== undefined) problems.push(`${at}.probe: only writes have a probe`);
  if (s.refusal !== undefined && !isFunction(s.refusal)) problems.push(`${at}.refusal: must be a function`);
  if (s.approve !== undefined) {
    if (s.approve !== 'effect') problems.push(`${at}.approve: 'effect' (or leave it out)`);
    else if (s.kind !== 'write') problems.push(`${at}.approve: only a write is approved on its effect`);
    for (const method of ['prepare', 'commit', 'effectOf'] as const)
      if (s.approve === 'effect' && !isFunction(s[method]))
        problems.push(`${at}.${method}: a step approved on its effect needs it (see Step.approve)`);
  }
  for (const key of ['effect', 'newEvidence', 'commits'] as const)
    if (s.kind === 'read' && s[key] !== undefined) problems.push(`${at}.${key}: only writes have one`);
  if (s.effect !== undefined && s.effect !== 'creates' && s.effect !== 'sets')
    problems.push(`${at}.effect: creates or sets`);
  if (
    s.sensitive !== undefined &&
    !(Array.isArray(s.sensitive) && s.sensitive.every((x) => typeof x === 'string'))
  )
    problems.push(`${at}.sensitive: a list of CSS selectors`);
  return problems;
}

/**
 * What is wrong with a playbook, as `field: problem` lines (empty when nothing is): ids, the
 * steps (unique ids, a kind, a declared application, a probe for every write), the inputs'
 * schema (and that the example inputs fit it).
 */
export function playbookProblems(playbook: unknown): string[] {
  if (playbook === null || typeof playbook !== 'object') return ['the playbook must be an object'];
  const p = playbook as Partial<Playbook>;
  const problems: string[] = [];
  if (typeof p.name !== 'string' || !NAME_PATTERN.test(p.name))
    problems.push('name: lower-case letters, digits and dashes, starting with a letter');
  if (typeof p.version !== 'number' || !Number.isInteger(p.version) || p.version < 1)
    problems.push('version: a whole number from 1');
  if (p.id !== `${p.name}@${p.version}`) problems.push(`id: must be name@version (${p.name}@${p.version})`);
  if (typeof p.description !== 'string' || p.description.trim() === '')
    problems.push('description: say in a sentence what the playbook does');
  const schema = p.inputSchema as { safeParse?: unknown } | undefined;
  if (!schema || !isFunction(schema.safeParse))
    problems.push(
      'inputSchema: the inputs need a schema (a zod schema; JSON Schema in the declarative form)',
    );
  const applications = (p.applications ?? {}) as Record<string, unknown>;
  if (p.applications === null || typeof p.applications !== 'object' || Object.keys(applications).length === 0)
    problems.push('applications: name at least one application');
  for (const [name, app] of Object.entries(applications)) {
    problems.push(...applicationProblems(app, `applications.${name}`));
    if ((app as Partial<Application> | null)?.name !== name)
      problems.push(`applications.${name}.name: must be ${JSON.stringify(name)}, the key it is listed under`);
  }
  if (!Array.isArray(p.steps) || p.steps.length === 0) problems.push('steps: at least one step');
  else {
    p.steps.forEach((step, i) => {
      problems.push(...stepProblems(step, i, applications));
    });
    const seen = new Set<string>();
    for (const step of p.steps) {
      if (seen.has(step.id)) problems.push(`steps: two steps have the id ${step.id}`);
      seen.add(step.id);
    }
  }
  if (p.screenshots !== undefined && !SCREENSHOT_POLICIES.has(p.screenshots))
    problems.push('screenshots: default, writes, every-step or none');
  if (p.tenants !== undefined && !(Array.isArray(p.tenants) && p.tenants.every((t) => typeof t === 'string')))
    problems.push('tenants: a list of tenant ids');
  if (p.actionCache !== undefined && p.actionCache !== 'tenant' && p.actionCache !== 'shared')
    problems.push('actionCache: tenant or shared');
  if (p.files !== undefined) {
    const entries = p.files && typeof p.files === 'object' ? Object.entries(p.files) : undefined;
    if (!entries) problems.push("files: an object of application name -> 'read-write' or 'read-only'");
    for (const [app, mode] of entries ?? []) {
      if (!(app in applications)) problems.push(`files.${app}: not one of the playbook's applications`);
      if (mode !== 'read-write' && mode !== 'read-only')
        problems.push(`files.${app}: 'read-write' or 'read-only'`);
    }
  }
  if (p.exampleInputs !== undefined && schema && isFunction(schema.safeParse)) {
    const checked = (p.inputSchema as Playbook['inputSchema']).safeParse(p.exampleInputs);
    if (!checked.success)
      problems.push(
        `exampleInputs: do not fit the input schema (${checked.error.issues
          .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
          .join('; ')})`,
      );
  }
  return problems;
}

/**
 * Checks a playbook and returns it. Every playbook module's default export goes through the
 * same checks when Belay starts (or synthesizes), so a mistake stops start-up with the file named.
 *
 * @throws PlaybookDefinitionError listing every problem found
 * @example
 * export default definePlaybook({
 *   name: 'expenses-submit',
 *   version: 1,
 *   description: 'Fill an expense report and submit it for approval.',
 *   inputSchema: z.object({ title: z.string() }).strict(),
 *   applications: { expenses },
 *   steps: [signInStep('sign-in', 'expenses', expenses), createReport, submitReport],
 * });
 */
export function definePlaybook<I>(playbook: Omit<Playbook<I>, 'id'> & { id?: string }): Playbook<I> {
  const full = { ...playbook, id: playbook.id ?? `${playbook.name}@${playbook.version}` } as Playbook<I>;
  const problems = playbookProblems(full);
  if (problems.length > 0) throw new PlaybookDefinitionError(full.id, problems);
  return full;
}

/**
 * Checks an application written by hand and returns it (`formSignIn` needs no such call).
 * @throws PlaybookDefinitionError listing every problem found
 */
export function defineApplication<A extends Application>(application: A): A {
  const problems = applicationProblems(application);
  if (problems.length > 0) throw new PlaybookDefinitionError(`application ${application.name}`, problems);
  return application;
}
