import type { Page } from 'playwright-core';
import type { ActionCacheKey, ActionEntryType, Effect, StepContext } from '../playbooks/contract.ts';
import { PersonAskedError } from '../playbooks/errors.ts';
import { render } from '../playbooks/template.ts';
import { type AgentAction, describeAction, targetOf } from './actions.ts';
import { goalTemplateOf, normalisedPath, pageFingerprint } from './cache/key.ts';
import { offerFrom } from './cache/offer.ts';
import { type JobValues, type Scalar, valueScope, valuesOf } from './cache/placeholders.ts';
import { effectAt, type ReachedCommit } from './effect.ts';
import {
  CommitNotReachedError,
  HealAfterWriteError,
  paidUsage,
  RequestRefusedError,
  TargetNotFoundError,
} from './errors.ts';
import { executeAction, resolvesToOne } from './execute.ts';
import { failedCallRecord, modelCallRecord } from './model-call.ts';
import {
  forModel,
  type ModelView,
  sensitiveInputs,
  withoutSensitive,
  withValuesHidden,
} from './model-view.ts';
import { observe, type Seen } from './observe.ts';
import type { Decision, Observation, Policy } from './policy.ts';
import {
  cachedForJob,
  holdsMask,
  mapTexts,
  resolveAction,
  toRecorded,
  unresolvedReferences,
} from './references.ts';
import { policyForStep } from './registry.ts';
import { type Planned, planReplay } from './replay.ts';
import { settleAfter } from './settle.ts';
import { type AgentSpec, type AgentStepOptions, stepSecrets } from './step-options.ts';
import { declaredTargets, type VetRules, vetAction } from './vet.ts';

/** How an action, a replay or a cached list ended: go on, the step is done, or (preparing) the commit is reached. */
type Next = 'next' | 'done' | 'commit';

/** A cache entry this attempt runs from: each action as stored (placeholders) and as it runs (the job's values). */
interface CachedRun {
  entryId: string;
  actions: { stored: AgentAction; resolved: AgentAction }[];
}

/**
 * One attempt of an agent step: replay the record, then (from the cache, else the model) decide,
 * check, record and execute until done or the bound. Every action, replayed or fresh, runs on the
 * page its predecessor settled on (`settle.ts`), against exactly one element (`vet.ts`), with the
 * job's values as the record says (`references.ts`), and a model sees only what `model-view.ts`
 * lets through.
 */
export class AgentRun<I> {
  #policy: Policy | undefined;
  #secrets: Record<string, string> = {};
  #view!: ModelView;
  #rules!: VetRules;
  readonly #history: string[] = [];
  #answers: string[] = [];
  #asked = 0;
  #mayHaveWritten = false;
  /** `approve: 'effect'`: preparing up to the commit (see {@link AgentRun.prepare}). */
  #preparing = false;
  /** The page actions this attempt executed, in order, each with its line as recorded (the planned actions). */
  readonly #performed: { line: string; action: AgentAction }[] = [];
  /** Preparing: where the commit was reached. */
  #reached: ReachedCommit | undefined;
  /** Preparing: the cache offer, made once the commit has run. */
  #offerAtCommit: (() => void) | undefined;
  #startUrl = '';
  readonly #goal: string;
  readonly #fields: Record<string, string>;
  readonly #spec: string;
  readonly #job: JobValues;
  readonly #values: [string, Scalar][];
  readonly #sensitive: [string, string][];

  constructor(
    private readonly options: AgentStepOptions<I>,
    private readonly agent: AgentSpec,
    private readonly page: Page,
    private readonly ctx: StepContext<I>,
  ) {
    this.#job = { inputs: ctx.inputs, evidence: ctx.actions.evidence };
    this.#values = valuesOf(ctx.inputs, ctx.actions.evidence);
    this.#sensitive = sensitiveInputs(ctx.inputs, options.sensitiveInputs ?? []);
    // Sensitive inputs stay references in what the model reads (`{{inputs.ssn}}`).
    const scope = valueScope({
      inputs: withoutSensitive(ctx.inputs, this.#sensitive),
      evidence: ctx.actions.evidence,
    });
    this.#goal = render(options.goal, scope, 'keep');
    this.#fields = Object.fromEntries(
      Object.entries(options.fields ?? {}).map(([k, v]) => [k, render(v, scope, 'keep')]),
    );
    // The job's model, else the step's (its default already applied).
    this.#spec = ctx.actions.model ?? agent.model;
  }

  async run(startUrl: string): Promise<void> {
    this.#startUrl = startUrl;
    // The job's model must be one the deployment offers, even when the cache would answer every
    // decision: a misconfigured job fails at once, before the page is touched.
    this.#policy ??= policyForStep(this.#spec, this.options.id);
    this.#secrets = await stepSecrets(this.options, this.ctx);
    const hidden = new Set(this.#sensitive.map(([, v]) => v));
    this.#view = {
      secrets: this.#secrets,
      sensitive: this.#sensitive,
      values: this.#values.map(([, v]) => String(v)).filter((v) => !hidden.has(v)),
    };
    const protectedNames = new Set([
      ...Object.keys(this.#secrets).map((name) => `secret:${name}`),
      ...this.#sensitive.map(([name]) => name),
    ]);
    this.#rules = {
      allowedDomains: this.ctx.apps[this.options.app]?.allowedDomains ?? [],
      protectedNames,
      declared: declaredTargets(this.options.fields ?? {}, this.options.secretTargets ?? {}, protectedNames),
    };
    // Every attempt starts from the step's start, so its recorded actions replay on the page they were chosen on.
    await this.page.goto(startUrl, { waitUntil: 'load' });
    const key = await this.#cacheKey(startUrl);
    const { planned, answers } = planReplay(this.ctx.actions.recorded());
    this.#answers = answers;
    const plan = await this.#cachedPlan(key, planned);
    let n = 0;
    for (const item of planned) {
      n = item.n;
      if (item.type === 'action-refused') {
        this.#history.push(`refused: ${this.#describeForModel(this.#resolved(item))}`);
        continue;
      }
      const next = await this.#replay(item);
      if (next !== 'next') return this.#ended(next, key, plan);
    }
    if (plan) {
      const next = await this.#fromCache(plan, n);
      if (next !== 'next') return this.#ended(next, key, plan);
      n = Math.max(n, plan.actions.length);
    }
    const max = this.agent.maxActions;
    while (n < max) {
      n++;
      const seen = await observe(this.page, this.#view);
      const decision = await this.#decide(seen);
      const resolved = resolveAction(decision.action, this.#job);
      const refused = await this.#vet(decision.action, resolved);
      if (refused) {
        await this.#record('action-refused', n, decision, seen, { refused });
        this.#history.push(`refused: ${this.#describeForModel(resolved)} (${refused})`);
        continue;
      }
      await this.#record('action-chosen', n, decision, seen);
      await this.ctx.faultPoint('action-recorded', { action: n });
      const next = await this.#perform(resolved);
      if (next !== 'next') return this.#ended(next, key, plan);
      await this.ctx.faultPoint('action-executed', { action: n });
    }
    this.ctx.log.warn('the agent step reached its bound on actions', { step: this.options.id, actions: max });
  }

  /**
   * `approve: 'effect'`: runs the step up to the action that commits it, which is not run for
   * its effect (the engine refuses the committing request meanwhile): before each action the
   * effect of committing with it is read, and when the engine says it is the one approved the
   * prepare stops short of it; otherwise the action runs, and the first whose request the engine
   * refuses is the commit (its effect as read just before it). The page is then brought back to
   * where that commit would run (from the start, this attempt's actions again, no model call) so
   * the person's screenshot shows the form, not the refused request's error page.
   *
   * @throws CommitNotReachedError when the agent ends without reaching a commit
   */
  async prepare(startUrl: string): Promise<Effect> {
    this.#preparing = true;
    await this.run(startUrl);
    const reached = this.#reached;
    if (!reached) throw new CommitNotReachedError(this.options.id);
    if (reached.ran) await this.#restore();
    return reached.effect;
  }

  /**
   * The approved commit: the one action `prepare` stopped short of, run now (under the engine's
   * write guard), then the action list is offered to the cache. Nothing else runs after it: the
   * step's verify decides.
   */
  async commit(): Promise<void> {
    const reached = this.#reached;
    if (!reached || reached.ran) throw new CommitNotReachedError(this.options.id);
    this.#preparing = false;
    await this.#perform(reached.action);
    this.#offerAtCommit?.();
  }

  /** The loop ended: done offers the list to the cache; a reached commit offers it once the commit has run. */
  #ended(next: Exclude<Next, 'next'>, key: ActionCacheKey, plan: CachedRun | undefined): void {
    if (next === 'done') this.#offer(key, plan);
    else this.#offerAtCommit = () => this.#offer(key, plan);
  }

  /** Back to where the reached commit would run: the start, then this attempt's actions before it. */
  async #restore(): Promise<void> {
    try {
      await this.page.goto(this.#startUrl, { waitUntil: 'load' });
      for (const { action } of this.#performed)
        await settleAfter(this.page, () => executeAction(this.page, action, this.#secrets));
    } catch (err) {
      this.ctx.log.warn('the prepared page could not be brought back for its screenshot', {
        step: this.options.id,
        error: err instanceof Error ? err.name : 'unknown',
      });
    }
  }

  /**
   * Preparing: the effect of committing with `action` now; stops short of it when that is the
   * approved effect, else runs it and, when the engine refused its request, that was the commit.
   */
  async #prepareOne(action: AgentAction): Promise<Next> {
    const line = describeAction(toRecorded(action, this.#values, this.#job).action);
    const shows = (await this.options.shows?.(this.page, this.ctx)) ?? {};
    const hidden = [...Object.values(this.#secrets), ...this.#sensitive.map(([, v]) => v)];
    const effect = await effectAt(
      this.page,
      action,
      [...this.#performed.map((p) => p.line), line],
      shows,
      hidden,
    );
    if (this.ctx.approvedEffect?.(effect)) {
      this.#reached = { action, effect, ran: false };
      return 'commit';
    }
    try {
      await settleAfter(this.page, () => executeAction(this.page, action, this.#secrets));
    } catch (err) {
      if (!(err instanceof RequestRefusedError)) throw err;
      this.#reached = { action, effect, ran: true };
      return 'commit';
    }
    this.#performed.push({ line, action });
    return 'next';
  }

  /** The key this step's actions are cached under: names, structure and ids only, never the job's values. */
  async #cacheKey(startUrl: string): Promise<ActionCacheKey> {
    return {
      step: this.options.id,
      app: this.options.app,
      goal: goalTemplateOf(this.options.goal, this.options.fields ?? {}).hash,
      path: normalisedPath(startUrl, this.#values),
      fingerprint: await pageFingerprint(this.page),
    };
  }

  /** A recorded action as it runs: its references resolved from the job, unless recorded literal. */
  #resolved(item: Pick<Planned, 'action' | 'literal'>): AgentAction {
    return item.literal ? item.action : resolveAction(item.action, this.#job);
  }

  /**
   * The cached action list this attempt runs from, filled with this job's values: when the
   * cache has a verified entry for the key and the step's record so far (a crashed attempt's)
   * came from that same entry. Anything else is a miss: the model decides.
   */
  async #cachedPlan(key: ActionCacheKey, planned: readonly Planned[]): Promise<CachedRun | undefined> {
    const entry = await this.ctx.actions.cache.lookup(key);
    if (!entry) return undefined;
    if (planned.some((p) => p.cacheEntry !== entry.entryId)) return undefined;
    const actions = cachedForJob(entry.actions, this.#job);
    if (!actions) return undefined;
    this.ctx.actions.cache.serving(key, entry.entryId);
    return { entryId: entry.entryId, actions };
  }

  /**
   * The cached actions from number `after + 1` on, each recorded (source `cache`, no model
   * call) before it runs, under the same checks as a model's: the target must name exactly one
   * element, a secret go only into its field. The first that fails is healed (one model call,
   * `action-healed`), unless an earlier action of this write may have committed it.
   */
  async #fromCache(plan: CachedRun, after: number): Promise<Next> {
    for (let i = after; i < plan.actions.length; i++) {
      const n = i + 1;
      const { stored, resolved } = plan.actions[i] as CachedRun['actions'][number];
      let action = resolved;
      if (await this.#vet(stored, resolved)) {
        if (this.#mayHaveWritten) throw new HealAfterWriteError(this.options.id, describeAction(stored));
        action = await this.#heal(n, stored, { cache: { entryId: plan.entryId } });
      } else {
        const recorded = toRecorded(resolved, this.#values, this.#job);
        await this.ctx.actions.record({
          type: 'action-chosen',
          detail: {
            n,
            action: recorded.action,
            ...(recorded.literal ? { literal: true } : {}),
            describe: this.#describeForLedger(resolved),
            model: 'cache',
            source: 'cache',
            cache: { entryId: plan.entryId },
            usage: { input: 0, output: 0 },
          },
          cost: { modelTokens: 0, modelUsd: 0 },
        });
      }
      await this.ctx.faultPoint('action-recorded', { action: n });
      const next = await this.#perform(action);
      if (next !== 'next') return next;
      await this.ctx.faultPoint('action-executed', { action: n });
    }
    return 'next';
  }

  /** The step ended on `done`: its action list, with placeholders, is offered to the cache (kept only if the step verifies). */
  #offer(key: ActionCacheKey, plan: CachedRun | undefined): void {
    const planned = planReplay(this.ctx.actions.recorded()).planned.map((p) => ({
      ...p,
      action: this.#resolved(p),
    }));
    const offer = offerFrom(planned, {
      key,
      goalTemplate: goalTemplateOf(this.options.goal, this.options.fields ?? {}).template,
      values: this.#values,
      secrets: this.#secrets,
      served: plan?.entryId,
    });
    if ('skipped' in offer) {
      this.ctx.log.info('the agent step is not cached', { step: this.options.id, why: offer.skipped });
      return;
    }
    this.ctx.actions.cache.offer(offer);
  }

  /**
   * A recorded action again, with no model call, exactly as recorded, unless it cannot run so:
   * its target is gone, or an older ledger masked one of its values. Then it is healed.
   */
  async #replay(item: Planned): Promise<Next> {
    let action = this.#resolved(item);
    const target = targetOf(action);
    if (holdsMask(action) || (target && !(await resolvesToOne(this.page, target)))) {
      action = await this.#heal(
        item.n,
        action,
        item.cacheEntry ? { cache: { entryId: item.cacheEntry } } : {},
      );
    }
    return this.#perform(action);
  }

  /** Action `n` cannot run as recorded: the model chooses it again (one call), recorded as `action-healed`. */
  async #heal(n: number, action: AgentAction, extra: Record<string, unknown>): Promise<AgentAction> {
    const seen = await observe(this.page, this.#view);
    const decision = await this.#decide(seen, this.#describeForModel(action));
    const resolved = resolveAction(decision.action, this.#job);
    const refused = await this.#vet(decision.action, resolved);
    if (refused) {
      await this.#record('action-refused', n, decision, seen, { refused });
      throw new TargetNotFoundError(
        `${describeAction(action)} cannot run, and healing chose one that may not (${refused})`,
      );
    }
    const replaces = toRecorded(action, this.#values, this.#job).action;
    await this.#record('action-healed', n, decision, seen, { replaces, ...extra });
    return resolved;
  }

  /**
   * Executes one action (done and ask_person end the attempt) and waits until the page has
   * settled (`settleAfter`); its line joins the history.
   */
  async #perform(action: AgentAction): Promise<Next> {
    if (action.name === 'done') return 'done';
    if (action.name === 'ask_person') {
      const answer = this.#answers[this.#asked++];
      if (answer === undefined) throw new PersonAskedError(this.options.id, action.question);
      this.#history.push(`${this.#describeForModel(action)} -> answered: ${forModel(answer, this.#view)}`);
      return 'next';
    }
    // A click, a key or a navigation may send a write step's write: no heal after it.
    if (this.options.kind === 'write' && ['click', 'press', 'goto'].includes(action.name)) {
      this.#mayHaveWritten = true;
    }
    if (this.#preparing) {
      const next = await this.#prepareOne(action);
      if (next === 'next') this.#history.push(this.#describeForModel(action));
      return next;
    }
    await settleAfter(this.page, () => executeAction(this.page, action, this.#secrets));
    this.#history.push(this.#describeForModel(action));
    return 'next';
  }

  /** Why the action may not run (see `vet.ts`), or undefined. */
  #vet(chosen: AgentAction, resolved: AgentAction): Promise<string | undefined> {
    return vetAction(this.page, chosen, resolved, this.#rules, unresolvedReferences(chosen, this.#job));
  }

  /** One line about an action, as the model may read it (history, healing). */
  #describeForModel(action: AgentAction): string {
    return forModel(describeAction(action), this.#view);
  }

  /** One line about an action, as the ledger keeps it: secrets and sensitive inputs as placeholders, the rest exact. */
  #describeForLedger(action: AgentAction): string {
    return describeAction(mapTexts(action, (text) => withValuesHidden(text, this.#view)));
  }

  /** Asks the model; a call that failed after the provider counted its tokens is recorded with them first. */
  async #decide(seen: Seen, healing?: string): Promise<Decision> {
    this.#policy ??= policyForStep(this.#spec, this.options.id);
    const view = this.#view;
    const observation: Observation = {
      goal: forModel(this.#goal, view),
      fields: Object.fromEntries(Object.entries(this.#fields).map(([k, v]) => [k, forModel(v, view)])),
      url: seen.url,
      snapshot: seen.snapshot,
      history: [...this.#history],
      answers: this.#answers.slice(0, this.#asked).map((a) => forModel(a, view)),
      ...(healing ? { healing } : {}),
    };
    try {
      return await this.#policy.decide(observation);
    } catch (err) {
      const usage = paidUsage(err);
      if (usage) await this.ctx.actions.recordFailedCall(failedCallRecord(usage, 'decide', err));
      throw err;
    }
  }

  /**
   * Writes the decision to the ledger: the action with the job's values as references (secrets
   * as placeholders), a line for people, what was seen, model, tokens, dollars.
   */
  async #record(
    type: ActionEntryType,
    n: number,
    decision: Decision,
    seen: Seen,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const call = modelCallRecord(decision, seen);
    const recorded = toRecorded(decision.action, this.#values, this.#job);
    await this.ctx.actions.record({
      type,
      detail: {
        n,
        action: recorded.action,
        ...(recorded.literal ? { literal: true } : {}),
        describe: this.#describeForLedger(resolveAction(decision.action, this.#job)),
        ...call.detail,
        ...extra,
      },
      cost: call.cost,
    });
  }
}
