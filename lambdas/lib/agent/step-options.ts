import type { Locator, Page } from 'playwright-core';
import type { Evidence } from '../ledger/types.ts';
import type { Application, ProbeResult, Step, StepContext, StepKind } from '../playbooks/contract.ts';
import type { AgentProbe } from './agent-probe.ts';

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
  /**
   * label -> value the goal sets (templated like the goal; `{{secret:name}}` for secrets). A
   * secret or a sensitive input may be typed only into the field whose label names it here (or in
   * `secretTargets`): the model cannot pick another.
   */
  fields?: Readonly<Record<string, string>>;
  /** Secret values the step may type, by placeholder name; the model sees only `{{secret:name}}`. */
  secrets?(ctx: StepContext<I>): Promise<Record<string, string>>;
  /**
   * Where else a secret may be typed: placeholder name (`password`, `secret:pin`, `inputs.ssn`) ->
   * the accessible names of the fields it may go into. The application's password may always go
   * into a password field (`<input type="password">`).
   * @example secretTargets: { pin: ['Card PIN'] }
   */
  secretTargets?: Readonly<Record<string, readonly string[]>>;
  /**
   * Inputs the model never sees (dot paths: `ssn`, `card.number`, `items.0.code`): it is shown
   * `{{inputs.ssn}}` wherever the value would be, types the placeholder, and the value is put in
   * as the action runs, only into a field declared for it. Inputs whose key names a secret
   * (`password`, `token`, `cardNumber`, ...) are sensitive without being named.
   */
  sensitiveInputs?: readonly string[];
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
  /**
   * Writes: `effect` binds the approval to what will be submitted (see `Step.approve`). The
   * agent runs up to the action that would commit, with the committing request refused, and a
   * person approves the form's fields and values as the page holds them (secrets masked) with
   * the planned actions and a screenshot; at execution the step is prepared again and commits
   * with exactly the approved action only if the fields and the actions are the same, else the
   * person is asked again with the differences. Replaces `needsApproval`.
   */
  approve?: 'effect';
  /**
   * `approve: 'effect'`: texts on the page that are part of what is approved, by a name for
   * people (an amount the site computed), read beside the form's fields.
   * @example shows: (page) => ({ Amount: page.getByTestId('amount') })
   */
  shows?(page: Page, ctx: StepContext<I>): Record<string, Locator> | Promise<Record<string, Locator>>;
  /** Writes: a probe function, or `agentProbe({ start, question })` for the step's model to answer from the page. */
  probe?: ((page: Page, ctx: StepContext<I>) => Promise<ProbeResult>) | AgentProbe<I>;
  refusal?(page: Page, ctx: StepContext<I>): Promise<string | null>;
}

/** What an agent step's model does: its goal, its model and its bound on actions; what it never sees. */
export interface AgentSpec {
  goal: string;
  model: string;
  maxActions: number;
  /** The step's sensitive inputs (`AgentStepOptions.sensitiveInputs`): kept out of the ledger too. */
  sensitiveInputs: readonly string[];
}

/** The app's password (placeholder `password`) and the step's own secrets: what the model sees only as placeholders. */
export async function stepSecrets<I>(
  options: Pick<AgentStepOptions<I>, 'app' | 'secrets'>,
  ctx: StepContext<I>,
): Promise<Record<string, string>> {
  const own = (await options.secrets?.(ctx)) ?? {};
  const creds = await ctx.credentials.get(options.app).catch(() => undefined);
  return { ...(creds?.password ? { password: creds.password } : {}), ...own };
}
