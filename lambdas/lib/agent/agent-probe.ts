import type { Page } from 'playwright-core';
import type { Evidence } from '../ledger/types.ts';
import type { Application, ProbeResult, StepContext } from '../playbooks/contract.ts';
import { appUrl, pageUrl } from '../playbooks/page.ts';
import { exactPath } from '../playbooks/starts-at.ts';
import { referencesOf, render } from '../playbooks/template.ts';
import { redactText } from '../redact.ts';
import { ModelCallError, NoProbeAnswerError } from './errors.ts';
import { modelCallRecord } from './model-call.ts';
import { observe, withPlaceholders } from './observe.ts';
import type { ProbeDecision } from './policy.ts';
import { policyForStep } from './registry.ts';

/**
 * An agent probe: a write's probe answered by a model from the page instead of by code. It opens
 * one page of the application (its `start`), observes it as an agent step does (accessibility
 * snapshot, secrets as placeholders, redacted, trimmed) and asks the model the question; the
 * model answers with one tool call, `answer_probe { status: done | absent | unknown }`, and has
 * no tool that acts on the page. The answer is recorded in the ledger (`probe-answered`: model,
 * tokens, dollars) before it is used. `unknown` goes to a person, as any probe's does.
 *
 * @example
 * agentStep<Inputs>({
 *   // ...
 *   probe: agentProbe({
 *     start: (ctx) => `/customers/${ctx.inputs.customerId}`,
 *     question: 'Does the record show contact "{{inputs.contactName}}" and phone "{{inputs.phone}}"?',
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
  /** Evidence of `done`, read off the page (null: a value is missing, so `unknown`). Default: what the model quoted. */
  evidence?(page: Page, ctx: StepContext<I>): Promise<Evidence | null>;
}

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
}

/** Longest page text of the model's quote kept as evidence. */
const SHOWN_MAX = 200;

const unknown = (detail: string): ProbeResult => ({ status: 'unknown', detail });

/** Runs an agent probe on `page`: `done` with evidence, `absent`, or `unknown` with what stood in the way. */
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
  const question = redactText(withPlaceholders(rendered, secrets));
  const seen = await observe(page, secrets);

  const spec = ctx.actions.model ?? step.model;
  const policy = policyForStep(spec, ctx.stepId);
  let decision: ProbeDecision;
  try {
    decision = await policy.answerProbe({ question, url: seen.url, snapshot: seen.snapshot });
  } catch (err) {
    // The model could not answer (after its own retries): a person looks, as for any probe that cannot tell.
    if (err instanceof ModelCallError || err instanceof NoProbeAnswerError) return unknown(err.message);
    throw err;
  }
  const { answer } = decision;
  const call = modelCallRecord(decision, seen);
  await ctx.actions.recordProbeAnswer({ detail: { question, answer, ...call.detail }, cost: call.cost });

  const why = `${decision.model}: ${answer.reason ?? `answered ${answer.status}`}`;
  if (answer.status === 'absent') return { status: 'absent', detail: why };
  if (answer.status === 'unknown') return unknown(why);
  if (probe.evidence) {
    const evidence = await probe.evidence(page, ctx);
    return evidence
      ? { status: 'done', evidence }
      : unknown(`${why}; but the page lacks the evidence the probe reads`);
  }
  return {
    status: 'done',
    evidence: {
      probedBy: decision.model,
      ...(answer.evidence ? { shown: answer.evidence.slice(0, SHOWN_MAX) } : {}),
    },
  };
}
