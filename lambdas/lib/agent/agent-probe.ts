import type { Page } from 'playwright-core';
import type { Evidence } from '../ledger/types.ts';
import type { Application, ProbeResult, StepContext } from '../playbooks/contract.ts';
import { appUrl, pageUrl } from '../playbooks/page.ts';
import { exactPath } from '../playbooks/starts-at.ts';
import { referencesOf, render } from '../playbooks/template.ts';
import { valuesOf } from './cache/placeholders.ts';
import { ModelCallError, NoProbeAnswerError, paidUsage } from './errors.ts';
import { failedCallRecord, modelCallRecord } from './model-call.ts';
import { forModel, type ModelView, sensitiveInputs } from './model-view.ts';
import { observe } from './observe.ts';
import type { ProbeAnswer, ProbeDecision } from './policy.ts';
import { policyForStep } from './registry.ts';

/**
 * An agent probe: a write's probe answered by a model from the page instead of by code, and
 * checked against what code reads there. It opens one page of the application (its `start`),
 * observes it as an agent step does (accessibility snapshot, secrets and sensitive inputs as
 * placeholders, redacted, trimmed) and asks the model the question; the model answers with one
 * tool call, `answer_probe { status: done | absent | duplicate | unknown }`, and has no tool that
 * acts on the page. The answer is recorded in the ledger (`probe-answered`: model, tokens,
 * dollars) before it is used.
 *
 * Page text is untrusted: a note saying "this record was not updated" must not make a write run
 * twice. So the model's answer only stands where the page's own data (`facts`, read by code: the
 * job's record and whether its fields hold the step's values) agrees with it:
 *
 * | model says | facts: matches | facts: differs | facts: several | facts: unread, or none |
 * |---|---|---|---|---|
 * | done | done (the facts' evidence) | unknown | duplicate | unknown (with only `evidence`: done) |
 * | absent | unknown | absent | duplicate | unknown |
 * | duplicate | duplicate | duplicate | duplicate | duplicate |
 * | unknown | unknown | unknown | duplicate | unknown |
 *
 * Page text alone never yields `absent`; a write found more than once goes to a person; what
 * cannot be told is `unknown`, for a person, as any probe's.
 *
 * @example
 * agentStep<Inputs>({
 *   // ...
 *   probe: agentProbe({
 *     start: (ctx) => `/customers/${ctx.inputs.customerId}`,
 *     question: 'Does the record show contact "{{inputs.contactName}}" and phone "{{inputs.phone}}"?',
 *     facts: async (page, ctx) => {
 *       const contact = await page.getByTestId('record-contact').textContent().catch(() => null);
 *       if (contact === null) return { record: 'unread', detail: 'no record on the page' };
 *       return contact.trim() === ctx.inputs.contactName
 *         ? { record: 'matches', evidence: { contact: contact.trim() } }
 *         : { record: 'differs', detail: 'the contact is another' };
 *     },
 *   }),
 * });
 */
export interface AgentProbeOptions<I> {
  /** The page of the step's application that shows the write's effect (a path), from the job's inputs. */
  start(ctx: StepContext<I>): string;
  /** The page's path there (default: exactly `start`'s path); another page is `unknown`. */
  at?: RegExp;
  /**
   * The question, in the playbooks' template language (`{{inputs.x}}`, `{{evidence.step.key}}`,
   * `{{idempotencyKey}}`, filters). Quote the values the page must show: that is what the local
   * policy looks for, and what a model is asked to compare.
   */
  question: string;
  /**
   * What the page's own data says, read by code (never by the model): the job's record with the
   * step's values (`matches`, with its evidence), the record with other values (`differs`), the
   * record more than once (`several`), or nothing readable (`unread`). The model's answer is
   * checked against it (see the table above); without it, `absent` is never concluded.
   */
  facts?(page: Page, ctx: StepContext<I>): Promise<ProbeFacts>;
  /** Evidence of `done` when there are no `facts`, read off the page (null: a value is missing, so `unknown`). */
  evidence?(page: Page, ctx: StepContext<I>): Promise<Evidence | null>;
}

/** What the page's own data says about the write (see {@link AgentProbeOptions.facts}). */
export type ProbeFacts =
  | { record: 'matches'; evidence: Evidence }
  | { record: 'differs'; detail: string }
  | { record: 'several'; count: number; evidence: Evidence }
  | { record: 'unread'; detail: string };

/** An agent probe as a step definition holds it: bound to its step's application and model by `agentStep`. */
export interface AgentProbe<I> {
  readonly agentProbe: AgentProbeOptions<I>;
}

/** Declares a write's probe as an agent probe (see {@link AgentProbeOptions}); `agentStep` runs it. */
export function agentProbe<I>(options: AgentProbeOptions<I>): AgentProbe<I> {
  return { agentProbe: options };
}

/** Is `probe` an agent probe (rather than a probe function)? */
export function isAgentProbe<I>(probe: unknown): probe is AgentProbe<I> {
  return typeof probe === 'object' && probe !== null && 'agentProbe' in probe;
}

/** What an agent probe takes from its step. */
export interface ProbeBinding<I> {
  app: string;
  application: Application;
  /** The step's model (the job's choice, if it made one, wins). */
  model: string;
  /** The secret values the step may type, by placeholder name: never shown to the model. */
  secrets(ctx: StepContext<I>): Promise<Record<string, string>>;
  /** The step's sensitive inputs (see `AgentStepOptions.sensitiveInputs`): never shown to the model. */
  sensitiveInputs: readonly string[];
}

const unknown = (detail: string): ProbeResult => ({ status: 'unknown', detail });

/**
 * The probe's result from the model's answer and the page's facts (the table of
 * {@link AgentProbeOptions}). Pure. `evidence` is what the probe's `evidence` read, for a probe
 * without facts (undefined: it has none).
 */
export function checkedAnswer(
  answer: ProbeAnswer,
  model: string,
  facts: ProbeFacts | undefined,
  evidence: Evidence | null | undefined,
): ProbeResult {
  const why = `${model}: ${answer.reason ?? `answered ${answer.status}`}`;
  if (facts?.record === 'several')
    return {
      status: 'duplicate',
      count: facts.count,
      evidence: facts.evidence,
      detail: `${why}; the page lists the record ${facts.count} times`,
    };
  if (answer.status === 'duplicate') {
    const count = Math.max(2, answer.count ?? 2);
    return {
      status: 'duplicate',
      count,
      evidence: {
        probedBy: model,
        ...(answer.evidence ? { shown: answer.evidence.slice(0, SHOWN_MAX) } : {}),
      },
      detail: `${why} (found more than once: a person looks)`,
    };
  }
  if (answer.status === 'unknown') return unknown(why);
  if (facts === undefined || facts.record === 'unread') {
    const gap = facts ? facts.detail : 'nothing read off the page to check the answer against';
    if (answer.status === 'done' && facts === undefined && evidence) return { status: 'done', evidence };
    if (answer.status === 'done' && facts === undefined && evidence === null)
      return unknown(`${why}; but the page lacks the evidence the probe reads`);
    return unknown(`${why}; ${gap}: page text alone cannot settle a write`);
  }
  if (answer.status === 'done')
    return facts.record === 'matches'
      ? { status: 'done', evidence: facts.evidence }
      : unknown(`${why}; but the page's data differs (${facts.detail}): a person looks`);
  // absent
  return facts.record === 'differs'
    ? { status: 'absent', detail: `${why}; the page's data agrees (${facts.detail})` }
    : unknown(`${why}; but the page's data shows the job's values: a person looks`);
}

/** Longest page text of the model's quote kept as evidence. */
const SHOWN_MAX = 200;

/** Runs an agent probe on `page`: `done` with evidence, `absent`, `duplicate`, or `unknown` with what stood in the way. */
export async function runAgentProbe<I>(
  probe: AgentProbeOptions<I>,
  step: ProbeBinding<I>,
  page: Page,
  ctx: StepContext<I>,
): Promise<ProbeResult> {
  const url = appUrl(ctx, step.app, probe.start(ctx));
  const path = new URL(url).pathname;
  let status: number | undefined;
  try {
    status = (await page.goto(url, { waitUntil: 'load' }))?.status();
  } catch (err) {
    return unknown(`${step.app} did not load ${path}: ${(err as Error).message}`);
  }
  // What no answer could make right: another page, an error page, the sign-in form.
  if (status !== undefined && status >= 400)
    return unknown(`${step.app} answered ${path} with HTTP ${status}`);
  // The application's own sign of a signed-out page (its checks take the untyped context).
  if (await step.application.isSignedOut(page, ctx as unknown as StepContext).catch(() => false))
    return unknown(`signed out of ${step.app}`);
  const at = probe.at ?? exactPath(path);
  const shown = pageUrl(page);
  if (shown?.origin !== new URL(url).origin || !at.test(shown.pathname))
    return unknown(`${step.app} did not show ${at}`);

  const secrets = await step.secrets(ctx);
  const rendered = render(probe.question, ctx, 'keep');
  // A value the job does not have would be looked for as written, and not found: absent, wrongly.
  const gaps = referencesOf(rendered).filter((r) => !r.path[0]?.startsWith('secret:'));
  if (gaps.length > 0)
    return unknown(`the probe's question has no value for ${gaps.map((g) => g.text).join(', ')}`);
  // The page's own data, read by code before the model is asked (the model cannot change it).
  const facts = probe.facts
    ? await probe.facts(page, ctx).catch((err: unknown) => ({
        record: 'unread' as const,
        detail: `the probe could not read the page: ${(err as Error).message}`.slice(0, 300),
      }))
    : undefined;
  const sensitive = sensitiveInputs(ctx.inputs, step.sensitiveInputs);
  const hidden = new Set(sensitive.map(([, v]) => v));
  const view: ModelView = {
    secrets,
    sensitive,
    values: valuesOf(ctx.inputs, ctx.actions.evidence)
      .map(([, v]) => String(v))
      .filter((v) => !hidden.has(v)),
  };
  const question = forModel(rendered, view);
  const seen = await observe(page, view);

  const spec = ctx.actions.model ?? step.model;
  const policy = policyForStep(spec, ctx.stepId);
  let decision: ProbeDecision;
  try {
    decision = await policy.answerProbe({ question, url: seen.url, snapshot: seen.snapshot });
  } catch (err) {
    // Tokens of a call that failed after the provider counted them are paid for: recorded first.
    const usage = paidUsage(err);
    if (usage) await ctx.actions.recordFailedCall(failedCallRecord(usage, 'probe', err));
    // The model could not answer (after its own retries): a person looks, as for any probe that cannot tell.
    if (err instanceof ModelCallError || err instanceof NoProbeAnswerError) return unknown(err.message);
    throw err;
  }
  const { answer } = decision;
  const evidence =
    facts === undefined && answer.status === 'done' && probe.evidence
      ? await probe.evidence(page, ctx)
      : undefined;
  const result = checkedAnswer(answer, decision.model, facts, evidence);
  const call = modelCallRecord(decision, seen);
  await ctx.actions.recordProbeAnswer({
    detail: {
      question,
      answer,
      ...(facts ? { facts: facts.record } : {}),
      checked: result.status,
      ...call.detail,
    },
    cost: call.cost,
  });
  return result;
}
