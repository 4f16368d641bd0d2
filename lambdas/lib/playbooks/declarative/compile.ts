/**
 * A declarative playbook (checked JSON: `read.ts` parsed it from YAML or JSON) as the contract's
 * `Playbook`: its applications are `formSignIn`s, its steps are built by their form (a scripted
 * step, an agent step, a sign-in step), its inputs are checked with their JSON Schema. The bundle's registry
 * module calls this at cold start with the JSON it carries, so a handler builds exactly what
 * start-up checked.
 */
import type { Locator, Page } from 'playwright-core';
import { agentProbe, type ProbeFacts } from '../../agent/agent-probe.ts';
import { agentStep } from '../../agent/agent-step.ts';
import type { Evidence } from '../../ledger/types.ts';
import type { Playbook, PreconditionResult, ProbeResult, Step, StepContext } from '../contract.ts';
import { definePlaybook } from '../define.ts';
import { formEffect } from '../effect-capture.ts';
import { provable, proves } from '../effects.ts';
import { AmbiguousTargetError, PlaybookFileError } from '../errors.ts';
import { type FormSignInApplication, formSignIn } from '../form-sign-in.ts';
import {
  checkStart,
  countedProbe,
  goto,
  hasVisibleError,
  LOAD_TIMEOUT_MS,
  pageUrl,
  READY_TIMEOUT_MS,
  visibleErrorText,
} from '../page.ts';
import { signInStep } from '../sign-in-step.ts';
import { exactPath } from '../starts-at.ts';
import { locate, locateAll, targetVisible, visibleTarget } from '../target.ts';
import { referencesOf, render } from '../template.ts';
import { actionName, commitAction, commitTarget, prepareActions, runActions, urlFor } from './actions.ts';
import { jsonSchemaInputs } from './inputs.ts';
import { declarativeProblems } from './problems.ts';
import { checksHold, checksVerdict, readEvidence } from './reads.ts';
import {
  type AgentStepSpec,
  type Check,
  type ChecksProbe,
  type DeclarativePlaybook,
  DeclarativePlaybookSchema,
  type EvidenceField,
  EXPECT_TIMEOUT_MS,
  type Expect,
  type Probe,
  type ScriptedProbe,
  type ScriptedStep,
} from './schema.ts';

type Apps = Record<string, FormSignInApplication>;

function startOf(step: ScriptedStep, apps: Apps): Pick<Step, 'precondition' | 'restore'> {
  const start = step.startsAt;
  // A first step that navigates starts anywhere (a new session's blank page included).
  if (start === 'anywhere')
    return { precondition: async () => ({ ok: true }), restore: async () => undefined };
  const application = apps[step.app] as FormSignInApplication;
  return {
    precondition: (page, ctx): Promise<PreconditionResult> => {
      const path = render(start.path, ctx);
      return checkStart(page, ctx, {
        app: step.app,
        application,
        path: start.pathPattern
          ? new RegExp(start.pathPattern)
          : exactPath(new URL(urlFor(ctx, step.app, path)).pathname),
        ready: start.ready,
        ...(start.signedIn === undefined ? {} : { signedIn: start.signedIn }),
      });
    },
    restore: (page, ctx) => goto(page, urlFor(ctx, step.app, render(start.path, ctx))),
  };
}

/** A step with an `expect` (scripted and agent steps alike), as its verify and check read it. */
type Expecting = Pick<Step, 'kind' | 'effect' | 'newEvidence'> & { app: string; expect: Expect };

/**
 * One look at the page as it is now: what the step's `expect` reads there (its evidence), that
 * it does not hold yet (null), or that the page shows an error (`refused`: no use waiting).
 */
async function expectNow(
  step: Expecting,
  page: Page,
  ctx: StepContext,
): Promise<{ evidence: Evidence } | { refused: true } | null> {
  const e = step.expect;
  const url = pageUrl(page);
  const base = ctx.apps[step.app]?.baseUrl;
  if (base && url?.origin !== new URL(base).origin) return null;
  const path = url?.pathname ?? '';
  if (e.url !== undefined && !new RegExp(e.url).test(path)) return null;
  if (e.noError !== false && (await hasVisibleError(page))) return { refused: true };
  const r = (t: string): string => render(t, ctx);
  const visible = e.visible === undefined ? [] : Array.isArray(e.visible) ? e.visible : [e.visible];
  for (const target of visible) if (!(await targetVisible(page, target, r))) return null;
  if (e.checks && !(await checksHold(page, e.checks, ctx, { waitMs: 0 }))) return null;
  if (!e.evidence || Object.keys(e.evidence).length === 0) return { evidence: { path } };
  const evidence = await readEvidence(page, page, e.evidence, ctx, { waitMs: 0 });
  return evidence ? { evidence } : null;
}

/**
 * The step's check: its `expect` as the page is now, with no waiting (what the engine reads just
 * before a write's action).
 */
async function checkOf(step: Expecting, page: Page, ctx: StepContext): Promise<Evidence | null> {
  const seen = await expectNow(step, page, ctx).catch(() => null);
  return seen && 'evidence' in seen ? seen.evidence : null;
}

/**
 * The step's verify: its `expect`, looked at again until it holds or `timeoutMs` (default
 * {@link EXPECT_TIMEOUT_MS}) passed, so a save answered in the background is seen once it shows.
 * A write that creates waits for evidence that proves it (not what already held before its
 * action, see `proves`); at the end it gives what it saw, and the engine judges that. A visible
 * error ends the wait.
 */
async function verifyOf(step: Expecting, page: Page, ctx: StepContext): Promise<Evidence | null> {
  const until = Date.now() + (step.expect.timeoutMs ?? EXPECT_TIMEOUT_MS);
  const before = ctx.beforeAction?.evidence;
  await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
  for (;;) {
    // A page navigating while it is read is read again; a target that names several elements is the step's fault.
    const seen = await expectNow(step, page, ctx).catch((err: unknown) => {
      if (err instanceof AmbiguousTargetError) throw err;
      return null;
    });
    if (seen && 'refused' in seen) return null;
    if (seen && proves(step, before, seen.evidence)) return seen.evidence;
    // Nothing the page can show proves the write (see `provable`): the engine's probe decides.
    if (seen && !provable(step, before)) return seen.evidence;
    if (Date.now() >= until) return seen?.evidence ?? null;
    await page.waitForTimeout(EXPECT_POLL_MS).catch(() => undefined);
  }
}

/** How often a verify looks at the page again while it waits. */
const EXPECT_POLL_MS = 200;

/** A scripted probe (of a scripted or an agent step): records by the key, or checks on a page. */
async function probeOf(
  step: { app: string },
  probe: ScriptedProbe,
  application: FormSignInApplication,
  page: Page,
  ctx: StepContext,
): Promise<ProbeResult> {
  return 'checks' in probe
    ? checksProbe(step, probe, application, page, ctx)
    : recordsProbe(step, probe, application, page, ctx);
}

/** Opens a checks probe's page: where it is, or why the probe cannot tell (not loaded, an HTTP error, signed out, another page). */
async function openProbePage(
  step: { app: string },
  probe: { goto: string; at?: string | undefined },
  application: FormSignInApplication,
  page: Page,
  ctx: StepContext,
): Promise<{ unknown: ProbeResult } | { at: RegExp }> {
  const url = urlFor(ctx, step.app, render(probe.goto, ctx));
  let status: number | undefined;
  try {
    status = (await page.goto(url, { waitUntil: 'load' }))?.status();
  } catch (err) {
    return {
      unknown: {
        status: 'unknown',
        detail: `${step.app} did not load ${new URL(url).pathname}: ${(err as Error).message}`,
      },
    };
  }
  if (status !== undefined && status >= 400)
    return {
      unknown: {
        status: 'unknown',
        detail: `${step.app} answered ${new URL(url).pathname} with HTTP ${status}`,
      },
    };
  if (await application.isSignedOut(page, ctx).catch(() => false))
    return { unknown: { status: 'unknown', detail: `signed out of ${step.app}` } };
  const at = probe.at ? new RegExp(probe.at) : exactPath(new URL(url).pathname);
  if (!at.test(pageUrl(page)?.pathname ?? ''))
    return { unknown: { status: 'unknown', detail: `${step.app} did not show ${at}` } };
  return { at };
}

/**
 * A probe that reads the page: done (with its evidence) when every check holds, absent when
 * every check's value was read and one differs, unknown when a value is not on the page: a
 * probe that cannot see must never say absent (the write would run twice).
 */
async function checksProbe(
  step: { app: string },
  probe: ChecksProbe,
  application: FormSignInApplication,
  page: Page,
  ctx: StepContext,
): Promise<ProbeResult> {
  const opened = await openProbePage(step, probe, application, page, ctx);
  if ('unknown' in opened) return opened.unknown;
  await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
  const verdict = await checksVerdict(page, probe.checks, ctx);
  if (verdict.kind === 'unread')
    return {
      status: 'unknown',
      detail: `${step.app} ${opened.at} does not show ${verdict.what} (layout changed?)`,
    };
  if (verdict.kind === 'differs')
    return { status: 'absent', detail: `${step.app} ${opened.at} does not show the write: ${verdict.what}` };
  if (!probe.evidence || Object.keys(probe.evidence).length === 0)
    return { status: 'done', evidence: { path: pageUrl(page)?.pathname ?? '' } };
  const evidence = await readEvidence(page, page, probe.evidence, ctx);
  return evidence
    ? { status: 'done', evidence }
    : { status: 'unknown', detail: `${step.app} ${opened.at} shows the write but not its evidence` };
}

/** Counts the write's records on the page the probe lists them on. */
async function recordsProbe(
  step: { app: string },
  probe: Probe,
  application: FormSignInApplication,
  page: Page,
  ctx: StepContext,
): Promise<ProbeResult> {
  const url = urlFor(ctx, step.app, render(probe.goto, ctx));
  try {
    await goto(page, url);
  } catch (err) {
    return {
      status: 'unknown',
      detail: `${step.app} did not load ${new URL(url).pathname}: ${(err as Error).message}`,
    };
  }
  if (await application.isSignedOut(page, ctx).catch(() => false))
    return { status: 'unknown', detail: `signed out of ${step.app}` };
  const at = probe.at ? new RegExp(probe.at) : exactPath(new URL(url).pathname);
  if (!at.test(pageUrl(page)?.pathname ?? ''))
    return { status: 'unknown', detail: `${step.app} did not show ${at}` };
  const r = (t: string): string => render(t, ctx);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    // Every record of this write: an application that de-duplicates nothing may hold two.
    const records = await locateAll(page, probe.records, r);
    if (records.length > 0) {
      const found: Evidence[] = [];
      for (const record of records) {
        const evidence = probe.evidence
          ? await readEvidence(page, record, probe.evidence, ctx)
          : { found: true };
        if (evidence) found.push(evidence);
      }
      const counted = countedProbe(found, 'records');
      if (counted) return counted;
    }
    if (await targetVisible(page, probe.absent, r))
      return { status: 'absent', detail: `${step.app} shows no record of this write` };
    if (Date.now() >= deadline)
      return {
        status: 'unknown',
        detail: `${step.app} ${at} showed neither a record of this write nor its "none" sign (layout changed?)`,
      };
    await page.waitForTimeout(100).catch(() => undefined);
  }
}

/**
 * An agent probe's facts from its checks (read by code, as a checks probe reads them): every check
 * holds -> the record matches (with its evidence); one read and different -> it differs; one not
 * on the page, or its evidence missing -> unread.
 */
async function checksFacts(
  page: Page,
  checks: readonly Check[],
  evidence: Record<string, EvidenceField> | undefined,
  ctx: StepContext,
): Promise<ProbeFacts> {
  await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
  const verdict = await checksVerdict(page, checks, ctx);
  if (verdict.kind === 'unread')
    return { record: 'unread', detail: `the page does not show ${verdict.what}` };
  if (verdict.kind === 'differs') return { record: 'differs', detail: `${verdict.what} differs` };
  if (!evidence || Object.keys(evidence).length === 0)
    return { record: 'matches', evidence: { path: pageUrl(page)?.pathname ?? '' } };
  const read = await readEvidence(page, page, evidence, ctx);
  return read
    ? { record: 'matches', evidence: read }
    : { record: 'unread', detail: 'the evidence is not on the page' };
}

/** Where a write says the page refused it: the page's alert (default), a target, or nowhere. */
function refusalOf(refusal: ScriptedStep['refusal']): Step['refusal'] {
  const where = refusal ?? 'alert';
  if (where === 'none') return undefined;
  if (where === 'alert') return (page) => visibleErrorText(page);
  return async (page, ctx) => {
    const el = await visibleTarget(page, where, 500, (t) => render(t, ctx));
    return el ? ((await el.textContent().catch(() => null))?.trim().slice(0, 300) ?? 'refused') : null;
  };
}

/** What a write says about itself (`effect`, `newEvidence`, `commits`), as the contract has it. */
function writeFacts(step: ScriptedStep | AgentStepSpec): Pick<Step, 'effect' | 'newEvidence' | 'commits'> {
  if (step.kind !== 'write') return {};
  return {
    ...(step.effect ? { effect: step.effect } : {}),
    ...(step.newEvidence ? { newEvidence: step.newEvidence } : {}),
    ...(step.commits ? { commits: step.commits } : {}),
  };
}

/**
 * A scripted write in two parts: prepared by its actions but the last, committed by the last
 * (what a drift check and an approval of the effect use), and what of the commit is missing.
 * With `approve: effect`, its effect read off the form the last action's element belongs to,
 * with the texts it `shows`.
 */
function writeParts(
  step: ScriptedStep,
): Pick<Step, 'approve' | 'prepare' | 'commit' | 'effectOf' | 'commitMissing'> {
  if (step.kind !== 'write') return {};
  const parts: Pick<Step, 'prepare' | 'commit' | 'commitMissing'> = {
    prepare: (page, ctx) => prepareActions(page, step, ctx),
    commit: (page, ctx) => commitAction(page, step, ctx),
    commitMissing: async (page, ctx) => {
      const last = step.actions.at(-1);
      const el = await commitTarget(page, step, ctx);
      if (!last || 'goto' in last || 'takeover' in last || 'waitFor' in last) return null;
      if (el && (await el.isVisible().catch(() => false))) return null;
      return `the commit's element (${actionName(last)}) is not on the page`;
    },
  };
  if (step.approve === undefined) return parts;
  const shows = typeof step.approve === 'object' ? (step.approve.shows ?? {}) : {};
  return {
    ...parts,
    approve: 'effect',
    effectOf: async (page, ctx) => {
      const r = (t: string): string => render(t, ctx);
      const shown: Record<string, Locator> = {};
      for (const [name, target] of Object.entries(shows)) {
        const el = await locate(page, target, r);
        if (el) shown[name] = el;
      }
      return formEffect(await commitTarget(page, step, ctx), shown);
    },
  };
}

/** The earlier steps whose evidence a step's texts name (`{{evidence.<step>.<field>}}`). */
function readsOf(step: object): Pick<Step, 'readsEvidenceOf'> {
  const ids = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      for (const ref of referencesOf(v)) if (ref.path[0] === 'evidence' && ref.path[1]) ids.add(ref.path[1]);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(step);
  return ids.size > 0 ? { readsEvidenceOf: [...ids] } : {};
}

function scripted(step: ScriptedStep, apps: Apps): Step {
  const application = apps[step.app] as FormSignInApplication;
  const out: Step = {
    id: step.id,
    title: step.title ?? step.id,
    kind: step.kind,
    app: step.app,
    ...(step.needsApproval ? { needsApproval: true } : {}),
    ...(step.sensitive ? { sensitive: step.sensitive } : {}),
    ...startOf(step, apps),
    run: (page, ctx) => runActions(page, step, ctx),
    verify: (page, ctx) => verifyOf(step, page, ctx),
    check: (page, ctx) => checkOf(step, page, ctx),
    ...writeFacts(step),
    ...writeParts(step),
    ...readsOf(step),
  };
  if (step.kind === 'write' && step.probe) {
    const probe = step.probe;
    out.probe = (page, ctx) => probeOf(step, probe, application, page, ctx);
    const refusal = refusalOf(step.refusal);
    if (refusal) out.refusal = refusal;
  }
  return out;
}

/**
 * An agent step: `agentStep` with the step's `expect` as its verify and its probe, scripted or
 * an agent probe (`probe.agent`: the step's model answers from the page).
 */
function agent(step: AgentStepSpec, apps: Apps): Step {
  const application = apps[step.app] as FormSignInApplication;
  const spec = step.agent;
  const probe = step.kind === 'write' ? step.probe : undefined;
  const write = step.kind === 'write' ? refusalOf(step.refusal) : undefined;
  const built = agentStep<Record<string, unknown>>({
    id: step.id,
    title: step.title ?? step.id,
    kind: step.kind,
    app: step.app,
    application,
    ...(step.needsApproval ? { needsApproval: true } : {}),
    ...(step.sensitive ? { sensitive: step.sensitive } : {}),
    start: (ctx) => render(spec.start, ctx),
    goal: spec.goal,
    ...(spec.fields ? { fields: spec.fields } : {}),
    ...(spec.maxActions ? { maxActions: spec.maxActions } : {}),
    ...(spec.model ? { model: spec.model } : {}),
    ...(spec.sensitiveInputs ? { sensitiveInputs: spec.sensitiveInputs } : {}),
    verify: (page, ctx) => verifyOf(step, page, ctx),
    check: (page, ctx) => checkOf(step, page, ctx),
    ...writeFacts(step),
    ...(probe === undefined
      ? {}
      : 'agent' in probe
        ? {
            probe: agentProbe({
              start: (ctx) => render(probe.agent.goto, ctx),
              ...(probe.agent.at ? { at: new RegExp(probe.agent.at) } : {}),
              question: probe.agent.question,
              ...(probe.agent.checks
                ? {
                    facts: (page, ctx) =>
                      checksFacts(page, probe.agent.checks ?? [], probe.agent.evidence, ctx),
                  }
                : {}),
              ...(probe.agent.evidence
                ? { evidence: (page, ctx) => readEvidence(page, page, probe.agent.evidence ?? {}, ctx) }
                : {}),
            }),
          }
        : { probe: (page, ctx) => probeOf(step, probe, application, page, ctx) }),
    ...(write ? { refusal: write } : {}),
  });
  // The engine tells an agent step by its `agent` member: kept on the same object.
  return Object.assign(built, readsOf(step));
}

/**
 * The playbook `spec` describes.
 *
 * @param source the file it came from, for messages
 * @throws PlaybookFileError listing every problem (by field; `read.ts` adds the lines)
 */
export function compileDeclarative(spec: DeclarativePlaybook, source: string): Playbook {
  const checked = DeclarativePlaybookSchema.safeParse(spec);
  if (!checked.success)
    throw new PlaybookFileError(
      source,
      checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  const problems = declarativeProblems(checked.data);
  if (problems.length > 0)
    throw new PlaybookFileError(
      source,
      problems.map((p) => `${p.path.join('.')}: ${p.message}`),
    );
  const apps: Apps = {};
  for (const [name, app] of Object.entries(spec.applications))
    apps[name] = formSignIn({ name, ...app.formSignIn });
  const steps = spec.steps.map(
    (step): Step =>
      'signIn' in step
        ? {
            ...signInStep(step.id, step.app, apps[step.app] as FormSignInApplication, {
              ...(step.title ? { title: step.title } : {}),
              ...(step.home ? { home: step.home } : {}),
            }),
            ...(step.needsApproval ? { needsApproval: true } : {}),
            ...(step.sensitive ? { sensitive: step.sensitive } : {}),
          }
        : 'agent' in step
          ? agent(step, apps)
          : scripted(step, apps),
  );
  return definePlaybook({
    name: spec.name,
    version: spec.version,
    description: spec.description,
    inputSchema: jsonSchemaInputs(spec.inputs),
    inputJsonSchema: spec.inputs,
    ...(spec.exampleInputs ? { exampleInputs: spec.exampleInputs } : {}),
    applications: apps,
    steps,
    ...(spec.screenshots ? { screenshots: spec.screenshots } : {}),
    ...(spec.sensitive ? { sensitive: spec.sensitive } : {}),
    ...(spec.tenants ? { tenants: spec.tenants } : {}),
    ...(spec.actionCache ? { actionCache: spec.actionCache } : {}),
  });
}
