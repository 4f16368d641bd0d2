/**
 * `npm run playbook -- freeze`: an agent playbook's recorded path written as a declarative
 * playbook of scripted steps, which then runs with no model. This file is the conversion, pure:
 * a declarative playbook and the path each agent step took (a verified job's ledger, or the
 * action cache; see `freeze-source.ts`) in, the frozen playbook (as a value and as YAML text) out.
 *
 * - An agent step becomes a scripted step with its id, title, kind, app, `expect`, `refusal`,
 *   approval and masks unchanged (so its ledger entries and a write's idempotency key are the
 *   same): it starts where the agent started (`startsAt.path` = `agent.start`, ready on the first
 *   target the path acts on), goes there, then does the recorded actions in order, targets by
 *   role + exact accessible name as the agent's replay does. The job's values become
 *   `{{inputs.x}}` / `{{evidence.step.field}}` placeholders (`agent/cache/placeholders.ts`), the
 *   app's password `{{credentials.password}}`.
 * - A write's agent probe (a model's answer) becomes a checks probe: the step's own `expect`
 *   checks read off the probe's page (done when they hold, absent when read and different,
 *   unknown when not there), with the probe's evidence. A scripted probe stays as it is.
 * - A step is kept as an agent step, marked with a YAML comment above it, when its path asked
 *   a person or was healed (the page moved under it: a script would break where the agent
 *   heals), or when what it did has no scripted form (a role the form has no target for, a
 *   secret other than the app's password, a goto to another host, a value the ledger masked, a
 *   target named by the job's data), or when its probe asks a model and its `expect` has no
 *   check to read instead.
 */
import { relative } from 'node:path';
import { Document } from 'yaml';
import {
  type AgentAction,
  type Target as AgentTarget,
  parseAction,
} from '../../lambdas/lib/agent/actions.ts';
import { generalise, MIN_EMBEDDED_VALUE, type Scalar } from '../../lambdas/lib/agent/cache/placeholders.ts';
import type {
  Action,
  AgentStepSpec,
  DeclarativePlaybook,
  DeclarativeStep,
  ScriptedProbe,
  ScriptedStep,
} from '../../lambdas/lib/playbooks/declarative/schema.ts';
import { NAME_PATTERN } from '../../lambdas/lib/playbooks/define.ts';
import { TARGET_ROLES, type TargetSpec } from '../../lambdas/lib/playbooks/target.ts';
import { REDACTED } from '../../lambdas/lib/redact.ts';

/** What freeze refuses, with what to fix; nothing is written. */
export class FreezeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FreezeError';
  }
}

/** The path one agent step took, as recorded. */
export interface RecordedPath {
  step: string;
  /** Where it was read, for people: `job job_1`, `cache entry ac_1 (from job job_1)`. */
  from: string;
  /**
   * The actions in order, the final `done` included or not. From a job's ledger they hold the
   * job's values (`values` replaces them); from the cache they already hold placeholders.
   */
  actions: readonly (AgentAction | Record<string, unknown>)[];
  /** The job's values by placeholder name (`valuesOf`), longest first; none for a cache entry. */
  values: readonly [string, Scalar][];
  askedPerson: boolean;
  healed: boolean;
}

/** An agent step kept as one in the frozen playbook, and why. */
export interface KeptStep {
  step: string;
  reason: string;
}

export interface FrozenPlaybook {
  spec: DeclarativePlaybook;
  /** Agent steps written as scripted steps. */
  frozen: { step: string; from: string; actions: number }[];
  /** Agent steps kept as agent steps (marked in the file). */
  kept: KeptStep[];
  /** The file's text (YAML, with the marks as comments). */
  text: string;
}

/** The frozen playbook's name: `<name>-frozen`, a playbook of its own (its own id, its own cache, its own jobs). */
export function frozenName(name: string): string {
  const frozen = `${name}-frozen`;
  if (!NAME_PATTERN.test(frozen))
    throw new FreezeError(`${name}-frozen is too long for a playbook name (at most 63 characters)`);
  return frozen;
}

/** The app's password as the agent records it, and as the declarative form references it. */
const PASSWORD_PLACEHOLDER = '{{secret:password}}';
const PASSWORD_REFERENCE = '{{credentials.password}}';
/** `{{inputs.x}}`, `{{evidence.step.field}}` and the password reference: the only references a frozen value holds. */
const ALLOWED_REFERENCE =
  /^\{\{(?:inputs\.[A-Za-z0-9_.-]+|evidence\.[a-z][a-z0-9-]*\.[A-Za-z0-9_]+|credentials\.password)\}\}$/;

type Converted = { ok: true; value: string } | { ok: false; reason: string };

/** A recorded text as a declarative template, or why it cannot be one. */
function templateOf(text: string, where: string): Converted {
  if (text.includes(REDACTED))
    return { ok: false, reason: `the ledger masked the value of ${where} (${REDACTED})` };
  const value = text.split(PASSWORD_PLACEHOLDER).join(PASSWORD_REFERENCE);
  const secret = /\{\{secret:([A-Za-z0-9_.-]+)\}\}/.exec(value);
  if (secret)
    return {
      ok: false,
      reason: `${where} types the secret ${secret[1]}, which the declarative form cannot reference (only {{credentials.password}})`,
    };
  for (const m of value.matchAll(/\{\{[^}]*\}\}/g)) {
    // Not quoted: it is text the job typed.
    if (!ALLOWED_REFERENCE.test(m[0]))
      return {
        ok: false,
        reason: `${where} holds a {{...}} that a template would read as a reference (not an input, evidence or the password)`,
      };
  }
  if (/\{\{|\}\}/.test(value.replace(/\{\{[^}]*\}\}/g, '')))
    return { ok: false, reason: `${where} holds braces a template would misread` };
  return { ok: true, value };
}

const DECLARATIVE_ROLES: ReadonlySet<string> = new Set(TARGET_ROLES);

function targetOf(
  t: AgentTarget,
  where: string,
): { ok: true; target: TargetSpec } | { ok: false; reason: string } {
  if (!DECLARATIVE_ROLES.has(t.role))
    return {
      ok: false,
      reason: `${where} targets a ${t.role}, a role the declarative form has no target for`,
    };
  const name = templateOf(t.name, `${where}'s target name`);
  if (!name.ok) return name;
  if (name.value.includes(PASSWORD_REFERENCE))
    return { ok: false, reason: `${where}'s target is named by a secret` };
  return {
    ok: true,
    target: { role: t.role as TargetSpec['role'], ...(name.value ? { name: name.value } : {}), exact: true },
  };
}

/** One recorded action as a scripted one (undefined for `done`), or why it has none. */
function actionOf(
  action: AgentAction,
  n: number,
): { ok: true; action?: Action; target?: TargetSpec } | { ok: false; reason: string } {
  const where = `action ${n} (${action.name})`;
  switch (action.name) {
    case 'done':
      return { ok: true };
    case 'ask_person':
      return { ok: false, reason: `${where} asked a person` };
    case 'press':
      return { ok: true, action: { press: { key: action.key } } };
    case 'goto': {
      if (/^[a-z][a-z0-9+.-]*:/i.test(action.url) || action.url.startsWith('//'))
        return { ok: false, reason: `${where} goes to an absolute URL (a host the playbook does not name)` };
      const url = templateOf(action.url, where);
      return url.ok ? { ok: true, action: { goto: url.value } } : url;
    }
    default:
      break;
  }
  const t = targetOf(action.target, where);
  if (!t.ok) return t;
  const target = t.target;
  switch (action.name) {
    case 'click':
      return { ok: true, target, action: { click: target } };
    case 'check':
      return { ok: true, target, action: { check: { target, checked: action.checked } } };
    case 'fill': {
      const value = templateOf(action.value, where);
      return value.ok ? { ok: true, target, action: { fill: { target, value: value.value } } } : value;
    }
    default: {
      const option = templateOf(action.option, where);
      return option.ok ? { ok: true, target, action: { select: { target, value: option.value } } } : option;
    }
  }
}

/** The job values (and secrets) a frozen step's actions still hold: empty for a step that may be written. */
export function valuesLeft(
  actions: readonly Action[],
  values: readonly [string, Scalar][],
  secrets: Readonly<Record<string, string>> = {},
): string[] {
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
  };
  walk(actions);
  const left = values
    .filter(([, v]) => {
      const value = String(v);
      // Short values are replaced where a whole argument equals them (placeholders.ts): checked so.
      return value.length >= MIN_EMBEDDED_VALUE
        ? strings.some((s) => s.includes(value))
        : strings.includes(value);
    })
    .map(([name]) => name);
  for (const [name, value] of Object.entries(secrets))
    if (value.length > 0 && strings.some((s) => s.includes(value))) left.push(`secret:${name}`);
  return left;
}

/** A write's probe with no model: a scripted probe as it is; an agent probe as the step's expect checks read off its page. */
function probeOf(step: AgentStepSpec): { ok: true; probe?: ScriptedProbe } | { ok: false; reason: string } {
  const probe = step.probe;
  if (step.kind !== 'write' || probe === undefined) return { ok: true };
  if (!('agent' in probe)) return { ok: true, probe };
  const checks = step.expect.checks ?? [];
  if (checks.length === 0)
    return {
      ok: false,
      reason: 'its probe asks a model, and its expect has no checks a scripted probe could read instead',
    };
  const evidence = probe.agent.evidence ?? step.expect.evidence;
  return {
    ok: true,
    probe: {
      goto: probe.agent.goto,
      ...(probe.agent.at ? { at: probe.agent.at } : {}),
      checks,
      ...(evidence ? { evidence } : {}),
    },
  };
}

/** The agent step as a scripted step, or why it stays an agent step. */
export function freezeStep(
  step: AgentStepSpec,
  path: RecordedPath,
): { ok: true; step: ScriptedStep; actions: number } | { ok: false; reason: string } {
  if (path.askedPerson) return { ok: false, reason: 'its recorded path asked a person (ask_person)' };
  if (path.healed)
    return {
      ok: false,
      reason:
        'its recorded path was healed (action-healed): the page changed under it, which a script cannot follow',
    };
  const actions: Action[] = [];
  let ready: TargetSpec | undefined;
  let done = false;
  for (const [i, recorded] of path.actions.entries()) {
    const parsed = parseAction(recorded);
    if (!parsed) return { ok: false, reason: `action ${i + 1} is not an action Belay knows` };
    if (done) return { ok: false, reason: `action ${i + 1} comes after done` };
    if (parsed.name === 'done') {
      done = true;
      continue;
    }
    const general = generalise(parsed, path.values);
    if (!general)
      return {
        ok: false,
        reason: `action ${i + 1} (${parsed.name}) targets an element named by the job's data`,
      };
    const converted = actionOf(general, i + 1);
    if (!converted.ok) return converted;
    if (converted.action) actions.push(converted.action);
    ready ??= converted.target;
  }
  if (actions.length === 0) return { ok: false, reason: 'its recorded path has no action before done' };
  const left = valuesLeft(actions, path.values);
  if (left.length > 0)
    return {
      ok: false,
      reason: `its recorded path still holds the job's ${left.join(', ')} after placeholders`,
    };
  const probe = probeOf(step);
  if (!probe.ok) return probe;
  return {
    ok: true,
    actions: actions.length,
    step: {
      id: step.id,
      ...(step.title ? { title: step.title } : {}),
      kind: step.kind,
      app: step.app,
      ...(step.needsApproval !== undefined ? { needsApproval: step.needsApproval } : {}),
      ...(step.sensitive ? { sensitive: step.sensitive } : {}),
      // The agent's every attempt began by loading its start: the recorded actions were chosen there.
      startsAt: { path: step.agent.start, ready: ready ?? 'body' },
      actions: [{ goto: step.agent.start }, ...actions],
      expect: step.expect,
      ...(probe.probe ? { probe: probe.probe } : {}),
      ...(step.refusal !== undefined ? { refusal: step.refusal } : {}),
    },
  };
}

const isAgentStep = (step: DeclarativeStep): step is AgentStepSpec => 'agent' in step;

/**
 * The frozen playbook of `spec`, from the recorded path of each of its agent steps.
 *
 * @param paths by step id: every agent step must have one (freeze-source.ts refuses before)
 * @param options `from`: where the paths came from (a job, the cache), for the file's header;
 *   `schemaFrom`: the file's directory, to point editors at `playbook.schema.json`
 * @throws FreezeError when the playbook has no agent step, a step has no path, or no step could be frozen
 */
export function freezePlaybook(
  spec: DeclarativePlaybook,
  paths: ReadonlyMap<string, RecordedPath>,
  options: { from: string; source: string; schemaFile?: string; outDir?: string },
): FrozenPlaybook {
  const id = `${spec.name}@${spec.version}`;
  const agents = spec.steps.filter(isAgentStep);
  if (agents.length === 0)
    throw new FreezeError(`${id} has no agent steps: there is no recorded path to freeze`);
  const frozen: FrozenPlaybook['frozen'] = [];
  const kept: KeptStep[] = [];
  const steps = spec.steps.map((step): DeclarativeStep => {
    if (!isAgentStep(step)) return step;
    const path = paths.get(step.id);
    if (!path) throw new FreezeError(`step ${step.id} of ${id} has no recorded path`);
    const out = freezeStep(step, path);
    if (out.ok) {
      frozen.push({ step: step.id, from: path.from, actions: out.actions });
      return out.step;
    }
    kept.push({ step: step.id, reason: out.reason });
    return step;
  });
  if (frozen.length === 0)
    throw new FreezeError(
      `no agent step of ${id} can be frozen: ${kept.map((k) => `${k.step}: ${k.reason}`).join('; ')}`,
    );
  const name = frozenName(spec.name);
  const frozenSpec: DeclarativePlaybook = {
    name,
    version: spec.version,
    description: `${spec.description} Frozen: the recorded path of its agent steps, run with no model.`,
    inputs: spec.inputs,
    ...(spec.exampleInputs ? { exampleInputs: spec.exampleInputs } : {}),
    applications: spec.applications,
    ...(spec.screenshots ? { screenshots: spec.screenshots } : {}),
    ...(spec.sensitive ? { sensitive: spec.sensitive } : {}),
    ...(spec.tenants ? { tenants: spec.tenants } : {}),
    steps,
  };
  return { spec: frozenSpec, frozen, kept, text: frozenYaml(frozenSpec, id, frozen, kept, options) };
}

/** The file: the playbook as YAML, a header saying what it was frozen from, a comment above each step freeze wrote or kept. */
function frozenYaml(
  spec: DeclarativePlaybook,
  id: string,
  frozen: FrozenPlaybook['frozen'],
  kept: readonly KeptStep[],
  options: { from: string; source: string; schemaFile?: string; outDir?: string },
): string {
  // No anchors and aliases for what a frozen step shares with its original (its checks): written out, as a person would.
  const doc = new Document(spec, { aliasDuplicateObjects: false });
  const header = [
    ...(options.schemaFile && options.outDir
      ? [
          ` yaml-language-server: $schema=${relative(options.outDir, options.schemaFile) || options.schemaFile}`,
          '',
        ]
      : []),
    ` ${spec.name}@${spec.version}: ${id} (${options.source}),`,
    ` frozen by \`npm run playbook -- freeze\` from ${options.from}.`,
    ' Its agent steps are scripted steps that replay the recorded path with no model; ids, kinds,',
    " expect and refusal are the original steps', so their ledger entries and idempotency keys are",
    " the same. A write's agent probe became a checks probe: its expect's checks read off the probe's page.",
    ...(kept.length > 0
      ? [
          ` Kept as agent steps (they still ask a model): ${kept.map((k) => k.step).join(', ')}.`,
          ' Search this file for "KEPT AS AN AGENT STEP".',
        ]
      : []),
  ];
  doc.commentBefore = header.join('\n');
  for (const [i, step] of spec.steps.entries()) {
    const node = doc.getIn(['steps', i], true) as { commentBefore?: string | null } | undefined;
    if (!node) continue;
    const f = frozen.find((x) => x.step === step.id);
    const k = kept.find((x) => x.step === step.id);
    if (f)
      node.commentBefore = ` FROZEN agent step: ${f.actions} recorded action${f.actions === 1 ? '' : 's'} from ${f.from}, no model.`;
    else if (k) node.commentBefore = ` KEPT AS AN AGENT STEP: ${k.reason}.`;
  }
  return doc.toString({ lineWidth: 0 });
}
