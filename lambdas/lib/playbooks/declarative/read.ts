/**
 * Reading a declarative playbook file (YAML, or JSON, which is YAML too): parse it keeping
 * where every value is, check it piece by piece (so a bad action is reported as that action,
 * not as "no form of step fits"), then check what the schema cannot say, and compile it.
 * Every problem names the file, the line and column, and the field.
 */
import { readFile } from 'node:fs/promises';
import { isNode, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import type { Playbook } from '../contract.ts';
import { PlaybookFileError } from '../errors.ts';
import { compileDeclarative } from './compile.ts';
import { declarativeProblems, type Issue } from './problems.ts';
import {
  ACTION_KEYS,
  ActionSchema,
  AgentProbeSchema,
  ChecksProbeSchema,
  type DeclarativePlaybook,
  DeclarativePlaybookSchema,
  ProbeSchema,
  ScriptedStepSchema,
  STEP_FORM_KEYS,
  STEP_FORMS,
} from './schema.ts';

/** `steps[2].probe.records` */
export function fieldName(path: readonly (string | number)[]): string {
  return (
    path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${p}` : p), '') ||
    '(the file)'
  );
}

function zodIssues(error: z.ZodError, prefix: (string | number)[]): Issue[] {
  return error.issues.map((i) => {
    const path = [...prefix, ...(i.path as (string | number)[])];
    if (i.code === 'unrecognized_keys') {
      const keys = (i as { keys?: string[] }).keys ?? [];
      return {
        path: keys.length === 1 ? [...path, keys[0] as string] : path,
        message: `unknown field${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`,
      };
    }
    return { path, message: i.message };
  });
}

function checkAction(action: unknown, path: (string | number)[]): Issue[] {
  if (action === null || typeof action !== 'object' || Array.isArray(action))
    return [{ path, message: `an action: one of ${ACTION_KEYS.join(', ')}` }];
  const keys = Object.keys(action).filter((k) => k !== 'when');
  const known = keys.filter((k) => (ACTION_KEYS as readonly string[]).includes(k));
  if (known.length !== 1)
    return [
      {
        path,
        message: `an action has exactly one of ${ACTION_KEYS.join(', ')} (found ${keys.join(', ') || 'none'})`,
      },
    ];
  const schema = ActionSchema.options[ACTION_KEYS.indexOf(known[0] as (typeof ACTION_KEYS)[number])];
  const checked = schema?.safeParse(action);
  return checked && !checked.success ? zodIssues(checked.error, path) : [];
}

/** What each form's key says, for the message about a step with none or several. */
const FORM_WORDS: Record<(typeof STEP_FORM_KEYS)[number], string> = {
  actions: 'actions (a scripted step)',
  agent: 'agent (a goal a model carries out)',
  signIn: 'signIn: true (the application’s sign-in)',
};

function checkStep(step: unknown, i: number): Issue[] {
  const path: (string | number)[] = ['steps', i];
  if (step === null || typeof step !== 'object' || Array.isArray(step))
    return [{ path, message: 'a step is an object' }];
  const forms = STEP_FORM_KEYS.filter((k) => k in step);
  if (forms.length !== 1)
    return [
      {
        path,
        message:
          forms.length === 0
            ? `a step has one of ${STEP_FORM_KEYS.map((k) => FORM_WORDS[k]).join(', ')}`
            : `a step has one of ${STEP_FORM_KEYS.join(', ')}, not ${forms.join(' and ')}`,
      },
    ];
  const form = forms[0] as (typeof STEP_FORM_KEYS)[number];
  if (form === 'agent') {
    // Its probe is checked as the form its key says (scripted, or `agent`), so a mistake is named in it.
    const { probe, ...rest } = step as { probe?: unknown };
    const issues: Issue[] = [];
    const checked = STEP_FORMS.agent.safeParse(rest);
    if (!checked.success) issues.push(...zodIssues(checked.error, path));
    if (probe !== undefined) issues.push(...checkProbe(probe, [...path, 'probe'], true));
    return issues;
  }
  if (form !== 'actions') {
    const checked = STEP_FORMS[form].safeParse(step);
    return checked.success ? [] : zodIssues(checked.error, path);
  }
  // A scripted step is checked action by action, so a bad action is named as that action.
  const actions = (step as { actions: unknown }).actions;
  const issues: Issue[] = [];
  if (!Array.isArray(actions)) issues.push({ path: [...path, 'actions'], message: 'a list of actions' });
  else for (const [j, a] of actions.entries()) issues.push(...checkAction(a, [...path, 'actions', j]));
  const { probe, ...rest } = step as { probe?: unknown };
  const checked = ScriptedStepSchema.safeParse({ ...rest, actions: [] });
  if (!checked.success) issues.push(...zodIssues(checked.error, path));
  if (probe !== undefined) issues.push(...checkProbe(probe, [...path, 'probe'], false));
  return issues;
}

/** A probe checked as the form its key says (`agent`, `checks`, else records), so a mistake is named in it. */
function checkProbe(probe: unknown, path: (string | number)[], agentStep: boolean): Issue[] {
  const has = (key: string): boolean => typeof probe === 'object' && probe !== null && key in probe;
  if (has('agent') && !agentStep)
    return [
      {
        path: [...path, 'agent'],
        message: 'an agent probe goes with an agent step (a scripted step has no model)',
      },
    ];
  const schema = has('agent') ? AgentProbeSchema : has('checks') ? ChecksProbeSchema : ProbeSchema;
  const probed = schema.safeParse(probe);
  return probed.success ? [] : zodIssues(probed.error, path);
}

/** Every schema problem of a parsed file, step by step and action by action. */
export function schemaIssues(value: unknown): Issue[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return [
      {
        path: [],
        message: 'a playbook file holds one object (name, version, description, inputs, applications, steps)',
      },
    ];
  const steps = (value as { steps?: unknown }).steps;
  const issues: Issue[] = [];
  const top = DeclarativePlaybookSchema.omit({ steps: true }).safeParse(value);
  if (!top.success) issues.push(...zodIssues(top.error, []).filter((i) => i.path[0] !== 'steps'));
  if (!Array.isArray(steps) || steps.length === 0)
    issues.push({ path: ['steps'], message: 'a list of at least one step' });
  else for (const [i, s] of steps.entries()) issues.push(...checkStep(s, i));
  return issues;
}

/**
 * Parsed and checked: the playbook's JSON, or every problem with its line. `lint` adds checks of
 * a valid file (`npm run playbook -- validate`), reported the same way.
 */
export function parseDeclarative(
  text: string,
  lint?: (spec: DeclarativePlaybook) => Issue[],
): { ok: true; spec: DeclarativePlaybook } | { ok: false; problems: string[] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined): string => {
    if (offset === undefined) return 'line ?';
    const { line, col } = lines.linePos(offset);
    return `line ${line}, column ${col}`;
  };
  if (doc.errors.length > 0)
    return { ok: false, problems: doc.errors.map((e) => `${at(e.pos[0])}: ${e.message.split('\n')[0]}`) };
  const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  let issues = schemaIssues(value);
  if (issues.length === 0) issues = declarativeProblems(value as DeclarativePlaybook);
  if (issues.length === 0 && lint) issues = lint(value as DeclarativePlaybook);
  if (issues.length === 0) return { ok: true, spec: value as DeclarativePlaybook };
  const where = (path: (string | number)[]): string => {
    // The value at the path, or the nearest one above it that exists (a missing field: its object).
    for (let n = path.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) return at(node.range[0]);
    }
    return 'line 1, column 1';
  };
  return { ok: false, problems: issues.map((i) => `${where(i.path)}: ${fieldName(i.path)}: ${i.message}`) };
}

/**
 * Reads, checks and compiles a declarative playbook file.
 * @param source the file's name for messages (repository-relative or absolute)
 * @throws PlaybookFileError naming the file and, for each problem, its line, column and field
 */
export async function readDeclarativePlaybook(
  file: string,
  source: string,
): Promise<{ spec: DeclarativePlaybook; playbook: Playbook }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new PlaybookFileError(source, [`cannot be read: ${(err as Error).message}`], { cause: err });
  }
  const parsed = parseDeclarative(text);
  if (!parsed.ok) throw new PlaybookFileError(source, parsed.problems);
  return { spec: parsed.spec, playbook: compileDeclarative(parsed.spec, source) };
}
