import type { Page } from 'playwright-core';
import type { z } from 'zod';
import type { JobFiles } from '../files/job-files.ts';
import type { Cost, Evidence } from '../ledger/types.ts';

/**
 * The step contract. A playbook is versioned code: an ordered list of steps, each of which
 * says whether it has a side effect, how to verify that it happened and, for writes, how to
 * look in the target application for the effect of an attempt whose outcome is unknown.
 */

export type StepKind = 'read' | 'write';

/**
 * What a write would submit, as a person approves it (`approve: 'effect'`): each field with its
 * value as the page holds it (a secret masked, never its value), and texts the step names (an
 * amount the site computed). The engine hashes it; the approval is recorded against the hash.
 */
export interface Effect {
  fields: EffectField[];
}

/** One field of an {@link Effect}: its name for people, its value, and whether the value is a secret. */
export interface EffectField {
  name: string;
  value: string;
  secret?: true;
}

/** What a write does: makes something new, or sets state to a value (see `Step.effect`). */
export type WriteEffect = 'creates' | 'sets';

/** How long the engine lets a step's `verify` run as the pre-action check when the step has no `check`. */
export const PRE_ACTION_CHECK_MS = 1_500;

/**
 * The request that commits a write (see `Step.commits`): its method (default any unsafe one)
 * and a regular expression on its URL's path.
 */
export interface CommittingRequest {
  method?: string;
  /** A regular expression (JavaScript syntax) on the path, e.g. `^/wp-admin/post\.php$`. */
  path: string;
  /**
   * The step sends this request more than once on purpose (lines saved one by one). Without it,
   * once the committing request has gone a second one in the same step is refused (never sent)
   * and the write is left to its probe.
   */
  repeats?: boolean;
}

/** What the precondition saw. `wrong_page` means the step can start after `restore`. */
export type PreconditionResult =
  | { ok: true }
  | { ok: false; reason: 'signed_out' | 'layout_changed' | 'wrong_page'; detail: string };

/**
 * The application's own answer to "did the write happen?": once (`done`), not at all
 * (`absent`), more than once (`duplicate`: the application holds `count` records of this one
 * write; most sites de-duplicate nothing, and a browser may send a write again by itself), or
 * it cannot tell (`unknown`). A probe should count what it finds wherever the application
 * lets it: a duplicate goes to a person, never counts as success.
 */
export type ProbeResult =
  | { status: 'done'; evidence: Evidence }
  | { status: 'absent'; detail?: string }
  | { status: 'duplicate'; count: number; evidence: Evidence; detail: string }
  | { status: 'unknown'; detail: string };

export type SignInResult = { status: 'signed_in' } | { status: 'mfa_required'; detail: string };

/** Credentials of an account. Never logged, never put in evidence. */
export interface Credentials {
  username: string;
  password: string;
  /** Base32 TOTP secret, for accounts with an authenticator the engine may use itself. */
  totpSecret?: string;
}

export interface CredentialsProvider {
  get(application: string): Promise<Credentials>;
}

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Points inside a step where a fault injector may kill the worker (the local Lambda runner's hook).
 * `action-recorded` and `action-executed` are an agent step's: after a model-chosen action is in
 * the ledger (before it runs), and after it ran.
 */
export type FaultPoint =
  | 'before-action'
  | 'mid-action'
  | 'after-action'
  | 'during-checkpoint'
  | 'action-recorded'
  | 'action-executed';

/** Ledger entries an agent step writes about its own actions (see {@link StepActions}). */
export type ActionEntryType = 'action-chosen' | 'action-healed' | 'action-refused';

/** One entry of a step's action record, as the step reads it back: what it wrote, or a person's answer. */
export interface RecordedEntry {
  /** `answer`: a person's answer to the step's question (a review decision's comment). */
  type: ActionEntryType | 'answer';
  detail: Record<string, unknown>;
  at: string;
}

/** An entry a step records about one of its actions, with what it cost (model tokens and dollars). */
export interface ActionEntryInput {
  type: ActionEntryType;
  detail: Record<string, unknown>;
  cost?: Partial<Pick<Cost, 'modelTokens' | 'modelUsd'>>;
}

/**
 * A model call a step records outside its action record: a model's answer to the step's agent
 * probe (a `probe-answered` entry: the question, what the model was shown, its answer), or a call
 * that failed after the provider counted its tokens (`model-call-failed`: why); each with the
 * model, tokens and dollars.
 */
export interface ModelCallInput {
  detail: Record<string, unknown>;
  cost?: Partial<Pick<Cost, 'modelTokens' | 'modelUsd'>>;
}

/** A model's answer to a step's agent probe (see {@link ModelCallInput}). */
export type ProbeAnswerInput = ModelCallInput;

/**
 * What an agent step's action list is cached under: with the tenant and the playbook's id
 * and version (which the engine adds), the step, its application, its goal as written (input
 * names, never values), the normalised path it starts on and the structure of that page.
 */
export interface ActionCacheKey {
  step: string;
  app: string;
  /** sha256 (first 16 hex) of the goal and field templates, before any input is filled in. */
  goal: string;
  /** The start URL's path with input values and ids replaced (`/customers/{inputs.customerId}/edit`). */
  path: string;
  /** The start page's structure: roles of its controls and landmarks, no names and no text. */
  fingerprint: string;
}

/** A cached action list, with placeholders (`{{inputs.x}}`, `{{secret:name}}`) for every value. */
export interface CachedPlan {
  entryId: string;
  /** Actions as plain data; the step parses each one before it runs it. */
  actions: readonly Record<string, unknown>[];
}

/** The action list an attempt leaves, for the cache once (and only if) its step verifies. */
export interface CacheOffer {
  key: ActionCacheKey;
  actions: readonly Record<string, unknown>[];
  /** The goal and fields as written, for people reading the cache (names only). */
  goalTemplate: string;
  /** The entry the attempt ran from, if it did; with `healed`, the entry is replaced by `actions`. */
  served?: string;
  healed: boolean;
}

/**
 * The action cache as a step sees it. Nothing is written while the step runs: the engine
 * keeps the offer after the step verified, and demotes the entry an attempt ran from when
 * that attempt did not verify.
 */
export interface StepCache {
  lookup(key: ActionCacheKey): Promise<CachedPlan | undefined>;
  /** The attempt runs from this entry (so a failure demotes it). */
  serving(key: ActionCacheKey, entryId: string): void;
  offer(offer: CacheOffer): void;
}

/**
 * The step's own record in the ledger, for steps whose actions are chosen as they run (agent
 * steps): a small port, so playbook code never holds the ledger. Entries are durable once
 * `record` resolves, and fenced by the job's version like every other write of the attempt.
 */
export interface StepActions {
  /** The job's choice of model for its agent steps (`model` in the job request), if it made one. */
  readonly model: string | undefined;
  /** Verified action lists of earlier jobs (the action cache), scoped to the job's tenant and playbook version. */
  readonly cache: StepCache;
  /** Evidence of the job's verified steps so far, by step id (goals templated with earlier evidence). */
  readonly evidence: Readonly<Record<string, Evidence>>;
  /**
   * This step's record in force, oldest first: its action entries and the answers people gave
   * it. A failed attempt (`step-failed`, or a write found not to have happened after it acted)
   * clears it: the next attempt starts afresh.
   */
  recorded(): readonly RecordedEntry[];
  /** Records one entry, before what it describes is done. */
  record(entry: ActionEntryInput): Promise<void>;
  /**
   * Records a model's answer to the step's agent probe (`probe-answered`), from RunStep,
   * Reconcile and Finish alike: appended without fencing (it moves no version), since an answer
   * is an observation that changes nothing an attempt decides on; the probe's caller records
   * the outcome. It is no part of the action record.
   */
  recordProbeAnswer(entry: ProbeAnswerInput): Promise<void>;
  /**
   * Records a model call that failed or was refused after the provider counted its tokens
   * (`model-call-failed`), appended like a probe's answer: every token paid for reaches the
   * job's cost, the call having changed nothing.
   */
  recordFailedCall(entry: ModelCallInput): Promise<void>;
}

export interface StepContext<I = Record<string, unknown>> {
  tenantId: string;
  jobId: string;
  stepId: string;
  /**
   * `jobId:stepId:<12 hex>` (the job's generation makes a job id reused after its expiry a new
   * key): passed to the target application wherever it accepts one.
   */
  idempotencyKey: string;
  inputs: I;
  /**
   * application name -> its base URL (e.g. `http://127.0.0.1:8801`) and the domains its pages
   * may reach (the job's navigation allowlist for it).
   */
  apps: Record<string, { baseUrl: string; allowedDomains: readonly string[] }>;
  credentials: CredentialsProvider;
  log: Logger;
  /**
   * Playbooks call this between the parts of a multi-part action ('mid-action'); agent steps
   * after recording and after executing each action, with its number. No-op unless a fault is armed.
   */
  faultPoint(point: FaultPoint, at?: { action: number }): Promise<void>;
  /**
   * The evidence an earlier step of this job verified (its latest completion, as the ledger
   * keeps it: exactly, but for registered secrets and secret-named keys, which are masked), or undefined when that step has not completed (or its evidence was too
   * large to keep inline). A report id made in step 3 is what step 7's `restore` needs.
   * @example
   * const reportId = ctx.evidence('create-report')?.reportId;
   */
  evidence(stepId: string): Evidence | undefined;
  /**
   * Writes: what the step's verify read on the page just before the action (`null`: it did not
   * hold), set by the engine once it has looked; undefined before that and in reads. A write that
   * creates something must not complete on evidence that was already there (see `Step.effect`).
   */
  beforeAction?: { evidence: Evidence | null } | undefined;
  /** The step's own action record (agent steps); see {@link StepActions}. */
  actions: StepActions;
  /**
   * The job's files in the team's volume (`tenants/<tenant>/jobs/<job>/`): a download saved
   * there by one step, read back by a later one in another session or application. The
   * application's sessions mount the volume when the playbook says so (`Playbook.files`).
   * @example
   * const invoice = await ctx.files.download('invoice.pdf', () => page.click('#download'));
   */
  files: JobFiles;
  /**
   * Asks a person to act in the live browser (solve a challenge, pick what no rule can): the
   * job waits with the session's interactive live view in the console and the notification,
   * until the person presses Done and the step's precondition holds on the live page. This
   * attempt ends here (it throws); when the job goes on, the step runs again from its
   * precondition and this call returns at once, so the code after it continues where the
   * person left the page. A failed attempt after it asks again.
   * @example
   * async run(page, ctx) {
   *   if (await page.getByText('Verify you are human').isVisible())
   *     await ctx.takeover({ reason: 'Solve the check on the page, then press Done' });
   *   await page.getByRole('button', { name: 'Continue' }).click();
   * }
   */
  takeover(request: TakeoverRequest): Promise<void>;
}

/** What a step asks of the person who takes over (`ctx.takeover`). */
export interface TakeoverRequest {
  /** What to do in the browser, in words for the person (shown in the console and the notification). */
  reason: string;
}

/**
 * When RunStep keeps a screenshot of the page as evidence (masked, in the screenshot store):
 * - `default`: before each approval and review, after each write, and when an attempt fails;
 * - `writes`: after each write only;
 * - `every-step`: after every verified step, and at the moments of `default`;
 * - `none`: never (for pages that must not be kept at all).
 */
export type ScreenshotPolicy = 'default' | 'writes' | 'every-step' | 'none';

export interface Step<I = Record<string, unknown>> {
  id: string;
  /** One line for people: what the step does. */
  title: string;
  kind: StepKind;
  /** Name of the application the step works on (key of `Playbook.applications`). */
  app: string;
  /** A person approves before this step runs. */
  needsApproval?: boolean;
  /**
   * CSS selectors of elements on this step's pages that a screenshot must mask, besides the
   * ones always masked (password, card and one-time-code fields: `DEFAULT_MASK_SELECTORS` in
   * `lambdas/lib/evidence/capture.ts`) and the playbook's own `sensitive`.
   * @example sensitive: ['[data-testid="account-number"]', '.iban']
   */
  sensitive?: string[];
  /** Is the page ready for this step? Recognises a signed-out page and a changed layout. */
  precondition(page: Page, ctx: StepContext<I>): Promise<PreconditionResult>;
  /** Brings a fresh page (new session, or another page) to where this step starts, from server-side state. */
  restore(page: Page, ctx: StepContext<I>): Promise<void>;
  run(page: Page, ctx: StepContext<I>): Promise<void>;
  /** Evidence that the step's effect is there, or null. A visible error on the page is null. */
  verify(page: Page, ctx: StepContext<I>): Promise<Evidence | null>;
  /**
   * The verify as the page is now, without waiting for anything: the engine asks it just before
   * a write's action, to know what already held. Optional: without it the engine asks `verify`
   * and counts it as not holding when it takes longer than {@link PRE_ACTION_CHECK_MS}.
   */
  check?(page: Page, ctx: StepContext<I>): Promise<Evidence | null>;
  /**
   * Writes only: what the write does to the application. `creates` (the default, also for a
   * write that does not say) makes something new: a record, an order, a submission. Evidence
   * that already held before the action proves nothing about it, so the step completes on its
   * verify only if the verify did not hold before the action, or if every field named in
   * `newEvidence` changed; otherwise the write is unconfirmed and its probe decides.
   * `sets` puts state to a value (a field, a status): when the verify already holds before the
   * action, the step is done without acting, recorded as already satisfied (not as a write of
   * this job).
   */
  effect?: WriteEffect;
  /**
   * Writes that create: evidence fields that name the new thing (its id) and so must differ
   * from what the verify read before the action, when it held then.
   * @example newEvidence: ['postId']
   */
  newEvidence?: readonly string[];
  /**
   * Writes only: the request that commits the write, when the step's action makes several
   * unsafe requests or the page sends some of its own (a heartbeat, autosave): the engine and
   * the test tools count and watch this one, and list the others as background. Once it has
   * gone, a second one in the same step is refused unless `repeats` is set (an agent step, with
   * or without `commits`, commits at most once: without it, its first unsafe request commits).
   * @example commits: { method: 'POST', path: '^/api/drafts$' }
   */
  commits?: CommittingRequest;
  /**
   * Writes only: `effect` binds the approval to what will be submitted. The engine prepares the
   * write up to its commit (`prepare`), reads what the page would submit (`effectOf`) and asks a
   * person, with a screenshot; at execution it prepares again and commits (`commit`) only if
   * what the page would submit is what was approved, else it asks again with the changes shown.
   * Such a step has `prepare`, `commit` and `effectOf`; `run` is the two in one.
   */
  approve?: 'effect';
  /** `approve: 'effect'`: everything the write does before its commit (fill the form). */
  prepare?(page: Page, ctx: StepContext<I>): Promise<void>;
  /** `approve: 'effect'`: the commit (the click that submits), on the page as `prepare` left it. */
  commit?(page: Page, ctx: StepContext<I>): Promise<void>;
  /** `approve: 'effect'`: what the page would submit now (fields and values; secrets marked). */
  effectOf?(page: Page, ctx: StepContext<I>): Promise<Effect>;
  /**
   * Writes, for a drift check: what of the commit is missing on the page as `prepare` left it
   * (the commit button's target, described), or null when the commit could go. A check never
   * commits; without this it checks the write up to its start.
   */
  commitMissing?(page: Page, ctx: StepContext<I>): Promise<string | null>;
  /**
   * The earlier steps whose evidence this step reads (its pages, values or checks name it). A
   * drift check skips a step that reads the evidence of a write it did not make.
   */
  readsEvidenceOf?: readonly string[];
  /** Writes only: look in the application's own state for the effect of this step's idempotency key. */
  probe?(page: Page, ctx: StepContext<I>): Promise<ProbeResult>;
  /**
   * Writes only, optional: what the page says when the application visibly refused the write
   * (a declined card, a validation error), or null when the page shows no refusal. Asked when
   * `verify` found no evidence. A refused write is a failed attempt: it spends the job's retry
   * budget with the page's words recorded, where an unexplained missing confirmation is an
   * uncertain write for the probe to settle.
   */
  refusal?(page: Page, ctx: StepContext<I>): Promise<string | null>;
}

/**
 * An application a playbook works on: how to tell and restore its sign-in. `formSignIn` in the
 * SDK builds one for an ordinary form sign-in; write one by hand only for what it cannot describe.
 */
export interface Application {
  name: string;
  /**
   * Is this page the application's sign-in (or one-time-code) form? The engine passes the step
   * context (so the page's origin can be checked against the application's); other callers may not.
   */
  isSignedOut(page: Page, ctx?: StepContext): Promise<boolean>;
  /**
   * Optional: does the page show the account signed in (its name, a "Sign out" button)? The
   * SDK's `signInStep` needs it; `formSignIn` gives it.
   */
  isSignedIn?(page: Page, ctx?: StepContext): Promise<boolean>;
  /**
   * Optional: does a page anyone may see (a public catalogue) show that the account is signed
   * out (a "Sign in" link)? A step that needs the account is then `signed_out` there.
   */
  showsSignedOut?(page: Page, ctx?: StepContext): Promise<boolean>;
  /** Sign in with the account's credentials; TOTP is handled here, an out-of-band code is not. */
  signIn(page: Page, ctx: StepContext): Promise<SignInResult>;
  /** Enter a one-time code a person supplied (MFA handoff). Returns whether the sign-in is now complete. */
  submitOneTimeCode(page: Page, ctx: StepContext, code: string): Promise<SignInResult>;
}

export interface Playbook<I = Record<string, unknown>> {
  name: string;
  version: number;
  /** `name@version` */
  id: string;
  description: string;
  inputSchema: z.ZodType<I>;
  applications: Record<string, Application>;
  steps: Step<I>[];
  /** When screenshots are kept as evidence. @default 'default' */
  screenshots?: ScreenshotPolicy;
  /** CSS selectors masked in every screenshot of this playbook (see `Step.sensitive`). */
  sensitive?: string[];
  /**
   * The inputs as JSON Schema, when the playbook was written against one (the declarative form);
   * otherwise `GET /playbooks` derives it from `inputSchema`.
   */
  inputJsonSchema?: Record<string, unknown>;
  /** Inputs that fit `inputSchema`: shown by `GET /playbooks`, used by `npm run playbook -- test` when given none. */
  exampleInputs?: I;
  /** Only these tenants may run the playbook (default: every tenant). */
  tenants?: readonly string[];
  /**
   * Applications whose sessions mount the deployment's files volume, and how: `read-write`
   * (the browser's downloads land in it) or `read-only`. Default: none mount it.
   * @example files: { billing: 'read-write' }
   */
  files?: Readonly<Record<string, 'read-write' | 'read-only'>>;
  /**
   * Whose action cache its agent steps use. `tenant` (the default): each tenant's own.
   * `shared`: an entry whose every text is the playbook's own (placeholders, and words of the
   * goal and field templates: no input value, no page text) is kept for every tenant that runs
   * this version, and a tenant with no entry of its own is served it; any other entry stays the
   * tenant's. A shared entry trusts other tenants' verified runs of the same playbook.
   */
  actionCache?: ActionCacheScope;
}

/** See {@link Playbook.actionCache}. */
export type ActionCacheScope = 'tenant' | 'shared';
