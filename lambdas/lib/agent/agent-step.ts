import type { Page } from 'playwright-core';
import type { Evidence } from '../ledger/types.ts';
import type {
  ActionCacheKey,
  ActionEntryType,
  Application,
  ProbeResult,
  Step,
  StepContext,
  StepKind,
} from '../playbooks/contract.ts';
import { PersonAskedError } from '../playbooks/errors.ts';
import { appUrl, checkStart } from '../playbooks/page.ts';
import { render } from '../playbooks/template.ts';
import { type AgentAction, describeAction, targetOf } from './actions.ts';
import { type AgentProbe, isAgentProbe, runAgentProbe } from './agent-probe.ts';
import { goalTemplateOf, normalisedPath, pageFingerprint } from './cache/key.ts';
import { offerFrom } from './cache/offer.ts';
import { instantiate, valueScope, valuesOf } from './cache/placeholders.ts';
import { HealAfterWriteError, TargetNotFoundError } from './errors.ts';
import { executeAction, onAllowedDomain, resolvesToOne } from './execute.ts';
import { modelCallRecord } from './model-call.ts';
import { observe, type Seen } from './observe.ts';
import type { Decision, Observation, Policy } from './policy.ts';
import { policyForStep } from './registry.ts';
import { type Planned, planReplay } from './replay.ts';

/** Most actions an agent step takes when its definition does not say. */
export const DEFAULT_MAX_ACTIONS = 12;

/**
 * An agent step: a goal in words whose actions a model chooses as the step runs. Each chosen
 * action is written to the ledger (`action-chosen`) before it is executed; a retried step
 * re-executes its recorded actions in order with no model call and asks the model only from
 * where the record ends. A recorded target that no longer resolves to exactly one element is
 * chosen again (one call, an `action-healed` entry). Done is what `verify` says, as for any step.
 * A write's probe is a function, or an agent probe (`agentProbe`): the model answers from the page.
 *
 * @example
 * agentStep<Inputs>({
 *   id: 'update-contact', title: 'Update the contact', kind: 'write', app: 'crm', application: crmApplication,
 *   start: (ctx) => `/customers/${ctx.inputs.customerId}/edit`,
 *   goal: 'Set the contact of {{inputs.customerId}} to {{inputs.contactName}} and save.',
 *   fields: { 'Contact name': '{{inputs.contactName}}' },
 *   verify: async (page) => (page.url().includes('saved=') ? { saved: true } : null),
 *   probe: async (page, ctx) => ({ status: 'absent' }),
 * });
 */
export interface AgentStepOptions<I> {
  id: string;
  title: string;
  kind: StepKind;
  app: string;
  application: Application;
  needsApproval?: boolean;
  sensitive?: string[];
  /** Where in the application the step starts (a path), from the job's inputs. */
  start(ctx: StepContext<I>): string;
  /**
   * The goal in words, in the playbooks' template language: `{{inputs.x}}`, `{{evidence.step.key}}`,
   * filters (`{{inputs.q | lower}}`). Only inputs and evidence are filled in (what the action
   * cache can put placeholders for); any other reference, or one with no value, stays as written.
   */
  goal: string;
  /** label -> value the goal sets (templated like the goal; `{{secret:name}}` for secrets). */
  fields?: Readonly<Record<string, string>>;
  /** Secret values the step may type, by placeholder name; the model sees only `{{secret:name}}`. */
  secrets?(ctx: StepContext<I>): Promise<Record<string, string>>;
  /** Bound on actions (model decisions) per attempt. */
  maxActions?: number;
  /** The model, unless the job names one: `local` (default), `bedrock:<id>`, `anthropic:<id>`, `openai:<id>`. */
  model?: string;
  verify(page: Page, ctx: StepContext<I>): Promise<Evidence | null>;
  /** The verify as the page is now, without waiting (see `Step.check`). */
  check?(page: Page, ctx: StepContext<I>): Promise<Evidence | null>;
  /** Writes: what the write does (see `Step.effect`): `creates` (default) or `sets`. */
  effect?: Step['effect'];
  /** Writes that create: evidence fields that must be new (see `Step.newEvidence`). */
  newEvidence?: Step['newEvidence'];
  /** Writes: the request that commits the write (see `Step.commits`). */
  commits?: Step['commits'];
  /** Writes: a probe function, or `agentProbe({ start, question })` for the step's model to answer from the page. */
  probe?: ((page: Page, ctx: StepContext<I>) => Promise<ProbeResult>) | AgentProbe<I>;
  refusal?(page: Page, ctx: StepContext<I>): Promise<string | null>;
}

/** A step whose actions were chosen by a model (the engine and the ledger view tell them apart by this). */
export type AgentStep<I> = Step<I> & { agent: { goal: string; model: string; maxActions: number } };

export function agentStep<I>(options: AgentStepOptions<I>): AgentStep<I> {
  const model = options.model ?? 'local';
  const probe = options.probe;
  const startUrl = (ctx: StepContext<I>): string => appUrl(ctx, options.app, options.start(ctx));
  const startPath = (ctx: StepContext<I>): RegExp =>
    new RegExp(`^${escapeRegExp(new URL(startUrl(ctx)).pathname)}$`);
  const step: AgentStep<I> = {
    id: options.id,
    title: options.title,
    kind: options.kind,
    app: options.app,
    ...(options.needsApproval ? { needsApproval: true } : {}),
    ...(options.sensitive ? { sensitive: options.sensitive } : {}),
    agent: {
      goal: options.goal,
      model,
      maxActions: options.maxActions ?? DEFAULT_MAX_ACTIONS,
    },
    precondition: (page, ctx) =>
      checkStart(page, ctx, {
        app: options.app,
        application: options.application,
        path: startPath(ctx),
        ready: 'body',
      }),
    restore: async (page, ctx) => {
      await page.goto(startUrl(ctx), { waitUntil: 'load' });
    },
    run: async (page, ctx) => {
      await new AgentRun(options, step.agent, page, ctx).run(startUrl(ctx));
    },
    verify: (page, ctx) => options.verify(page, ctx),
    ...(options.check ? { check: options.check } : {}),
    ...(options.effect ? { effect: options.effect } : {}),
    ...(options.newEvidence ? { newEvidence: options.newEvidence } : {}),
    ...(options.commits ? { commits: options.commits } : {}),
    ...(probe === undefined
      ? {}
      : {
          probe: isAgentProbe<I>(probe)
            ? (page, ctx) =>
                runAgentProbe(
                  probe.agentProbe,
                  {
                    app: options.app,
                    application: options.application,
                    model,
                    secrets: (c) => stepSecrets(options, c),
                  },
                  page,
                  ctx,
                )
            : probe,
        }),
    ...(options.refusal ? { refusal: options.refusal } : {}),
  };
  return step;
}

/** The app's password (placeholder `password`) and the step's own secrets: what the model sees only as placeholders. */
async function stepSecrets<I>(
  options: AgentStepOptions<I>,
  ctx: StepContext<I>,
): Promise<Record<string, string>> {
  const own = (await options.secrets?.(ctx)) ?? {};
  const creds = await ctx.credentials.get(options.app).catch(() => undefined);
  return { ...(creds?.password ? { password: creds.password } : {}), ...own };
}

/** A cache entry this attempt runs from, its actions filled with the job's values. */
interface CachedRun {
  entryId: string;
  actions: AgentAction[];
}

/** One attempt of an agent step: replay the record, then decide, record and execute until done or the bound. */
class AgentRun<I> {
  #policy: Policy | undefined;
  #secrets: Record<string, string> = {};
  readonly #history: string[] = [];
  #answers: string[] = [];
  #asked = 0;
  #mayHaveWritten = false;
  readonly #goal: string;
  readonly #fields: Record<string, string>;
  readonly #spec: string;

  constructor(
    private readonly options: AgentStepOptions<I>,
    private readonly agent: AgentStep<I>['agent'],
    private readonly page: Page,
    private readonly ctx: StepContext<I>,
  ) {
    const scope = valueScope({ inputs: ctx.inputs, evidence: ctx.actions.evidence });
    this.#goal = render(options.goal, scope, 'keep');
    this.#fields = Object.fromEntries(
      Object.entries(options.fields ?? {}).map(([k, v]) => [k, render(v, scope, 'keep')]),
    );
    // The job's model, else the step's (its default already applied).
    this.#spec = ctx.actions.model ?? agent.model;
  }

  async run(startUrl: string): Promise<void> {
    this.#secrets = await stepSecrets(this.options, this.ctx);
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
        this.#history.push(`refused: ${describeAction(item.action)} (off the job's domains)`);
        continue;
      }
      if ((await this.#replay(item)) === 'done') return this.#offer(key, plan);
    }
    if (plan) {
      if ((await this.#fromCache(plan, n)) === 'done') return this.#offer(key, plan);
      n = Math.max(n, plan.actions.length);
    }
    const max = this.agent.maxActions;
    while (n < max) {
      n++;
      const seen = await observe(this.page, this.#secrets);
      const decision = await this.#decide(seen);
      if (this.#refused(decision.action)) {
        await this.#record('action-refused', n, decision, seen, { refused: "goto off the job's domains" });
        this.#history.push(`refused: ${describeAction(decision.action)} (off the job's domains)`);
        continue;
      }
      await this.#record('action-chosen', n, decision, seen);
      await this.ctx.faultPoint('action-recorded', { action: n });
      if ((await this.#perform(decision.action)) === 'done') return this.#offer(key, plan);
      await this.ctx.faultPoint('action-executed', { action: n });
    }
    this.ctx.log.warn('the agent step reached its bound on actions', { step: this.options.id, actions: max });
  }

  /** The key this step's actions are cached under: names, structure and ids only, never the job's values. */
  async #cacheKey(startUrl: string): Promise<ActionCacheKey> {
    const values = valuesOf(this.ctx.inputs, this.ctx.actions.evidence);
    return {
      step: this.options.id,
      app: this.options.app,
      goal: goalTemplateOf(this.options.goal, this.options.fields ?? {}).hash,
      path: normalisedPath(startUrl, values),
      fingerprint: await pageFingerprint(this.page),
    };
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
    const actions: AgentAction[] = [];
    for (const cached of entry.actions) {
      const action = instantiate(cached, { inputs: this.ctx.inputs, evidence: this.ctx.actions.evidence });
      if (!action) return undefined;
      actions.push(action);
    }
    this.ctx.actions.cache.serving(key, entry.entryId);
    return { entryId: entry.entryId, actions };
  }

  /**
   * The cached actions from number `after + 1` on, each recorded (source `cache`, no model
   * call) before it runs, under the same checks as a replay: the page's load state first, then
   * a target that resolves to exactly one element. The first that does not is healed (one
   * model call, `action-healed`), unless an earlier action of this write may have committed it.
   */
  async #fromCache(plan: CachedRun, after: number): Promise<'done' | 'next'> {
    for (let i = after; i < plan.actions.length; i++) {
      const n = i + 1;
      let action = plan.actions[i] as AgentAction;
      await this.page.waitForLoadState('load');
      const target = targetOf(action);
      if (target && !(await resolvesToOne(this.page, target))) {
        if (this.#mayHaveWritten) throw new HealAfterWriteError(this.options.id, describeAction(action));
        action = await this.#heal(n, action, { cache: { entryId: plan.entryId } });
      } else {
        await this.ctx.actions.record({
          type: 'action-chosen',
          detail: {
            n,
            action,
            describe: describeAction(action),
            model: 'cache',
            source: 'cache',
            cache: { entryId: plan.entryId },
            usage: { input: 0, output: 0 },
          },
          cost: { modelTokens: 0, modelUsd: 0 },
        });
      }
      await this.ctx.faultPoint('action-recorded', { action: n });
      if ((await this.#perform(action)) === 'done') return 'done';
      await this.ctx.faultPoint('action-executed', { action: n });
    }
    return 'next';
  }

  /** The step ended on `done`: its action list, with placeholders, is offered to the cache (kept only if the step verifies). */
  #offer(key: ActionCacheKey, plan: CachedRun | undefined): void {
    const offer = offerFrom(planReplay(this.ctx.actions.recorded()).planned, {
      key,
      goalTemplate: goalTemplateOf(this.options.goal, this.options.fields ?? {}).template,
      values: valuesOf(this.ctx.inputs, this.ctx.actions.evidence),
      secrets: this.#secrets,
      served: plan?.entryId,
    });
    if ('skipped' in offer) {
      this.ctx.log.info('the agent step is not cached', { step: this.options.id, why: offer.skipped });
      return;
    }
    this.ctx.actions.cache.offer(offer);
  }

  /** A recorded action again, with no model call, unless its target is gone (then it is healed). */
  async #replay(item: Planned): Promise<'done' | 'next'> {
    let action = item.action;
    const target = targetOf(action);
    if (target && !(await resolvesToOne(this.page, target))) {
      action = await this.#heal(
        item.n,
        action,
        item.cacheEntry ? { cache: { entryId: item.cacheEntry } } : {},
      );
    }
    return this.#perform(action);
  }

  /** Action `n` no longer resolves: the model chooses it again (one call), recorded as `action-healed`. */
  async #heal(n: number, action: AgentAction, extra: Record<string, unknown>): Promise<AgentAction> {
    const seen = await observe(this.page, this.#secrets);
    const decision = await this.#decide(seen, describeAction(action));
    if (this.#refused(decision.action)) {
      await this.#record('action-refused', n, decision, seen, { refused: "goto off the job's domains" });
      throw new TargetNotFoundError(
        `${describeAction(action)} no longer resolves, and healing chose a refused goto`,
      );
    }
    await this.#record('action-healed', n, decision, seen, { replaces: action, ...extra });
    return decision.action;
  }

  /** Executes one action (done and ask_person end the attempt); its line joins the history. */
  async #perform(action: AgentAction): Promise<'done' | 'next'> {
    if (action.name === 'done') return 'done';
    if (action.name === 'ask_person') {
      const answer = this.#answers[this.#asked++];
      if (answer === undefined) throw new PersonAskedError(this.options.id, action.question);
      this.#history.push(`${describeAction(action)} -> answered: ${answer}`);
      return 'next';
    }
    await executeAction(this.page, action, this.#secrets);
    // A click, a key or a navigation may have sent a write step's write: no heal after it.
    if (this.options.kind === 'write' && ['click', 'press', 'goto'].includes(action.name)) {
      this.#mayHaveWritten = true;
    }
    this.#history.push(describeAction(action));
    return 'next';
  }

  #refused(action: AgentAction): boolean {
    if (action.name !== 'goto') return false;
    const app = this.ctx.apps[this.options.app];
    return !onAllowedDomain(action.url, app?.allowedDomains ?? []);
  }

  async #decide(seen: Seen, healing?: string): Promise<Decision> {
    this.#policy ??= policyForStep(this.#spec, this.options.id);
    const observation: Observation = {
      goal: this.#goal,
      fields: this.#fields,
      url: seen.url,
      snapshot: seen.snapshot,
      history: [...this.#history],
      answers: this.#answers.slice(0, this.#asked),
      ...(healing ? { healing } : {}),
    };
    return this.#policy.decide(observation);
  }

  /** Writes the decision to the ledger: the action (placeholders only), what was seen, model, tokens, dollars. */
  async #record(
    type: ActionEntryType,
    n: number,
    decision: Decision,
    seen: Seen,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const call = modelCallRecord(decision, seen);
    await this.ctx.actions.record({
      type,
      detail: {
        n,
        action: decision.action,
        describe: describeAction(decision.action),
        ...call.detail,
        ...extra,
      },
      cost: call.cost,
    });
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
