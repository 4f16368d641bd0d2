/**
 * Running a scripted step's actions: goto, fill, select, check, click, press, waitFor, takeover. The
 * fault point `mid-action` is reported before the last action (in a write, the one that
 * commits it), and a write's idempotency key is put in its field just before that action.
 */
import type { Locator, Page } from 'playwright-core';
import { committingRequest } from '../../commits.ts';
import type { StepContext } from '../contract.ts';
import { StepActionError } from '../errors.ts';
import { appUrl, EVIDENCE_TIMEOUT_MS, goto, LOAD_TIMEOUT_MS } from '../page.ts';
import { describeTarget, locate, type Target, visibleTarget } from '../target.ts';
import { render, renderWithSecrets, truthy } from '../template.ts';
import type { Action, ScriptedStep } from './schema.ts';

/** How long an action waits for its target to show. */
const TARGET_TIMEOUT_MS = EVIDENCE_TIMEOUT_MS;

/** An absolute URL for a `goto`: a path of the step's application, or a URL as written. */
export function urlFor(ctx: StepContext, app: string, rendered: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(rendered) ? rendered : appUrl(ctx, app, rendered);
}

function optionsOf(
  value: unknown,
): { target: Target; when?: string; missing?: string } & Record<string, unknown> {
  // `click: '<css>'` and `click: { target, wait }` both mean one target.
  if (typeof value === 'object' && value !== null && 'target' in value)
    return value as { target: Target } & Record<string, unknown>;
  return { target: value as Target };
}

async function element(
  page: Page,
  stepId: string,
  what: string,
  target: Target,
  ctx: StepContext,
  missing?: string,
): Promise<Locator> {
  const el = await visibleTarget(page, target, TARGET_TIMEOUT_MS, (t) => render(t, ctx));
  if (!el)
    throw new StepActionError(stepId, missing ?? `${what}: ${describeTarget(target)} is not on the page`);
  return el;
}

/** The action's key (`fill`, `click`, ...). */
export function actionName(action: Action): string {
  return Object.keys(action).find((k) => k !== 'when') ?? 'action';
}

async function runAction(page: Page, step: ScriptedStep, action: Action, ctx: StepContext): Promise<void> {
  const id = step.id;
  if ('goto' in action) {
    if (action.when !== undefined && !truthy(render(action.when, ctx))) return;
    await goto(page, urlFor(ctx, step.app, render(action.goto, ctx)));
    return;
  }
  if ('fill' in action) {
    const o = action.fill;
    if (o.when !== undefined && !truthy(render(o.when, ctx))) return;
    const el = await element(page, id, 'fill', o.target, ctx, o.missing);
    const { value, secret } = await renderWithSecrets(o.value, ctx, step.app);
    // A password field takes only a reference to the account's password, never text from a file or an input.
    if (!secret && (await el.getAttribute('type').catch(() => null)) === 'password')
      throw new StepActionError(id, 'a password field is filled only with {{credentials.password}}');
    await el.fill(value);
    return;
  }
  if ('select' in action) {
    const o = action.select;
    if (o.when !== undefined && !truthy(render(o.when, ctx))) return;
    const el = await element(page, id, 'select', o.target, ctx, o.missing);
    const value = render(o.value, ctx);
    try {
      await el.selectOption(value, { timeout: TARGET_TIMEOUT_MS });
    } catch {
      await el.selectOption({ label: value }, { timeout: TARGET_TIMEOUT_MS }).catch(() => {
        throw new StepActionError(
          id,
          `select: ${describeTarget(o.target)} has no option ${JSON.stringify(value)}`,
        );
      });
    }
    return;
  }
  if ('check' in action) {
    const o = optionsOf(action.check);
    if (o.when !== undefined && !truthy(render(o.when, ctx))) return;
    const el = await element(page, id, 'check', o.target, ctx, o.missing);
    await el.setChecked(o.checked !== false);
    return;
  }
  if ('click' in action) {
    const o = optionsOf(action.click);
    if (o.when !== undefined && !truthy(render(o.when, ctx))) return;
    const el = await element(page, id, 'click', o.target, ctx, o.missing);
    if (o.wait === 'response') return clickAndAwaitAnswer(page, step, el);
    await el.click();
    if (o.wait !== 'none')
      await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
    return;
  }
  if ('takeover' in action) {
    const o = action.takeover;
    if (o.when !== undefined && !truthy(render(o.when, ctx))) return;
    await ctx.takeover({ reason: render(o.reason, ctx) });
    return;
  }
  if ('press' in action) {
    const o = action.press;
    if (o.when !== undefined && !truthy(render(o.when, ctx))) return;
    if (o.target) await (await element(page, id, 'press', o.target, ctx)).press(o.key);
    else await page.keyboard.press(o.key);
    await page.waitForLoadState('load', { timeout: LOAD_TIMEOUT_MS }).catch(() => undefined);
    return;
  }
  const o = optionsOf(action.waitFor) as {
    target?: Target;
    url?: string;
    state?: 'visible' | 'hidden';
    timeoutMs?: number;
    when?: string;
    missing?: string;
  };
  if (o.when !== undefined && !truthy(render(o.when, ctx))) return;
  const timeout = o.timeoutMs ?? TARGET_TIMEOUT_MS;
  if (o.url !== undefined) {
    const pattern = new RegExp(o.url);
    await page
      .waitForURL((u) => pattern.test(u.pathname), { timeout })
      .catch(() => {
        throw new StepActionError(id, o.missing ?? `waitFor: the page did not reach ${o.url}`);
      });
  }
  if (o.target !== undefined) {
    const el = await locate(page, o.target, (t) => render(t, ctx));
    const ok = el
      ? await el.waitFor({ state: o.state ?? 'visible', timeout }).then(
          () => true,
          () => false,
        )
      : o.state === 'hidden';
    if (!ok)
      throw new StepActionError(
        id,
        o.missing ?? `waitFor: ${describeTarget(o.target)} did not become ${o.state ?? 'visible'}`,
      );
  }
}

/** How long `click: { wait: response }` waits for the click's request to go, then for its answer. */
export const RESPONSE_TIMEOUT_MS = 15_000;

/**
 * Clicks, then waits for the answer to the request the click sends: the step's `commits` when it
 * names one, else the first unsafe request after the click (a form that saves in the background).
 * A request that gets no answer (the connection failed) ends the wait: the verify decides.
 */
async function clickAndAwaitAnswer(page: Page, step: ScriptedStep, el: Locator): Promise<void> {
  const commits = committingRequest(step.kind === 'write' ? step.commits : undefined);
  const sent = page.waitForRequest((r) => commits(r.method(), r.url()), { timeout: RESPONSE_TIMEOUT_MS });
  sent.catch(() => undefined);
  await el.click();
  const request = await sent.catch(() => undefined);
  if (!request)
    throw new StepActionError(
      step.id,
      `click: the page sent no ${step.kind === 'write' && step.commits ? `request matching commits (${step.commits.method ?? 'any'} ${step.commits.path})` : 'POST, PUT, PATCH or DELETE'} within ${RESPONSE_TIMEOUT_MS / 1000} s`,
    );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    request.response().catch(() => null),
    new Promise((resolve) => {
      timer = setTimeout(resolve, RESPONSE_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
}

/** Sets a write's idempotency key in the field the site reads it from (often a hidden input). */
async function setKey(page: Page, step: ScriptedStep, ctx: StepContext): Promise<void> {
  if (!step.idempotencyKey) return;
  const el = await locate(page, step.idempotencyKey.field, (t) => render(t, ctx));
  if (!el || !(await el.count()))
    throw new StepActionError(
      step.id,
      `the idempotency key's field ${describeTarget(step.idempotencyKey.field)} is not on the page`,
    );
  await el.evaluate((node, value) => {
    (node as HTMLInputElement).value = value;
  }, ctx.idempotencyKey);
}

/**
 * Does the step report the fault point `mid-action` when it runs? Every step of more than one
 * action does, before its last (a step of one action has no middle).
 */
export function reportsMidAction(step: Pick<ScriptedStep, 'actions'>): boolean {
  return step.actions.length > 1;
}

/** Runs the step's actions in order (see the file's comment for the last one). */
export async function runActions(page: Page, step: ScriptedStep, ctx: StepContext): Promise<void> {
  await prepareActions(page, step, ctx);
  await commitAction(page, step, ctx);
}

/** Every action but the last: everything a write does before its commit. */
export async function prepareActions(page: Page, step: ScriptedStep, ctx: StepContext): Promise<void> {
  for (const action of step.actions.slice(0, -1)) await runAction(page, step, action, ctx);
}

/** The last action (a write's commit): the idempotency key set first, then the fault point `mid-action`. */
export async function commitAction(page: Page, step: ScriptedStep, ctx: StepContext): Promise<void> {
  const last = step.actions.at(-1);
  if (!last) return;
  if (step.kind === 'write') await setKey(page, step, ctx);
  if (reportsMidAction(step)) await ctx.faultPoint('mid-action');
  await runAction(page, step, last, ctx);
}

/**
 * The element the last action works on (the commit button), for reading what the form would
 * submit; undefined when the last action names none (a goto, a key press on the page).
 */
export async function commitTarget(
  page: Page,
  step: ScriptedStep,
  ctx: StepContext,
): Promise<Locator | undefined> {
  const last = step.actions.at(-1);
  if (!last) return undefined;
  const target =
    'click' in last
      ? optionsOf(last.click).target
      : 'press' in last
        ? last.press.target
        : 'fill' in last
          ? last.fill.target
          : 'select' in last
            ? last.select.target
            : 'check' in last
              ? optionsOf(last.check).target
              : undefined;
  return target === undefined ? undefined : locate(page, target, (t) => render(t, ctx));
}
