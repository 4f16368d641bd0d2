import type { Effect, Step, StepContext } from '../playbooks/contract.ts';
import { appUrl, checkStart } from '../playbooks/page.ts';
import { isAgentProbe, runAgentProbe } from './agent-probe.ts';
import { AgentRun } from './agent-run.ts';
import { CommitNotReachedError } from './errors.ts';
import { type AgentSpec, type AgentStepOptions, stepSecrets } from './step-options.ts';

export type { AgentStepOptions } from './step-options.ts';

/** Most actions an agent step takes when its definition does not say. */
export const DEFAULT_MAX_ACTIONS = 12;

/** A step whose actions were chosen by a model (the engine and the ledger view tell them apart by this). */
export type AgentStep<I> = Step<I> & { agent: AgentSpec };

/**
 * An agent step: a goal in words whose actions a model chooses as the step runs. Each chosen
 * action is written to the ledger (`action-chosen`) before it is executed; a retried step
 * re-executes its recorded actions in order with no model call and asks the model only from
 * where the record ends. A recorded target that no longer resolves to exactly one element is
 * chosen again (one call, an `action-healed` entry). Done is what `verify` says, as for any step.
 * A write's probe is a function, or an agent probe (`agentProbe`): the model reads the page, and
 * its answer is checked against what the probe reads off it (`facts`).
 *
 * Each action runs on the page the previous one settled on (its requests answered, its navigation
 * committed), against exactly one element; a secret or sensitive input goes only into the field
 * the step declares for it; the ledger records the job's values as references (`{{inputs.phone}}`)
 * and replays exactly those; a write step commits at most once (the write guard refuses a second
 * committing request unless `commits.repeats`).
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
      sensitiveInputs: options.sensitiveInputs ?? [],
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
    ...(options.approve === 'effect' && options.kind === 'write'
      ? effectParts(options, () => step.agent)
      : {}),
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
                    sensitiveInputs: options.sensitiveInputs ?? [],
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

/**
 * `approve: 'effect'`: the write in two parts around its commit. `prepare` runs the agent up to
 * the action that commits and keeps that attempt's run (per step context: one attempt's), so
 * `effectOf` gives what it read and `commit` runs exactly the action it stopped short of.
 */
function effectParts<I>(
  options: AgentStepOptions<I>,
  agent: () => AgentSpec,
): Pick<Step<I>, 'approve' | 'prepare' | 'effectOf' | 'commit'> {
  const prepared = new WeakMap<StepContext<I>, { run: AgentRun<I>; effect: Effect }>();
  const preparedFor = (ctx: StepContext<I>): { run: AgentRun<I>; effect: Effect } => {
    const found = prepared.get(ctx);
    if (!found) throw new CommitNotReachedError(options.id);
    return found;
  };
  return {
    approve: 'effect',
    prepare: async (page, ctx) => {
      const run = new AgentRun(options, agent(), page, ctx);
      prepared.delete(ctx);
      const effect = await run.prepare(appUrl(ctx, options.app, options.start(ctx)));
      prepared.set(ctx, { run, effect });
    },
    effectOf: async (_page, ctx) => preparedFor(ctx).effect,
    commit: async (_page, ctx) => {
      const { run } = preparedFor(ctx);
      prepared.delete(ctx);
      await run.commit();
    },
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
