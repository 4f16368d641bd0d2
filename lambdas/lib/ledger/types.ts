/**
 * The data model of the checkpoint ledger: one job item per job and an append-only list
 * of ledger entries under the same partition, so a job and its whole history are one Query.
 */

export const JOB_STATUSES = [
  'QUEUED',
  'RUNNING',
  'WAITING_APPROVAL',
  'WAITING_MFA',
  'WAITING_REVIEW',
  'WAITING_TAKEOVER',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const TERMINAL_STATUSES: readonly JobStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** Which status may follow which. Anything else is refused with `IllegalTransitionError`. */
export const LEGAL_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  QUEUED: ['RUNNING', 'FAILED', 'CANCELLED'],
  RUNNING: [
    'QUEUED',
    'WAITING_APPROVAL',
    'WAITING_MFA',
    'WAITING_REVIEW',
    'WAITING_TAKEOVER',
    'SUCCEEDED',
    'FAILED',
    'CANCELLED',
  ],
  WAITING_APPROVAL: ['RUNNING', 'QUEUED', 'FAILED', 'CANCELLED'],
  WAITING_MFA: ['RUNNING', 'QUEUED', 'FAILED', 'CANCELLED'],
  WAITING_REVIEW: ['RUNNING', 'QUEUED', 'FAILED', 'CANCELLED'],
  WAITING_TAKEOVER: ['RUNNING', 'QUEUED', 'FAILED', 'CANCELLED'],
  SUCCEEDED: [],
  FAILED: [],
  CANCELLED: [],
};

/** The kinds of human wait, each a wait-for-task-token state of the state machine. */
export const WAIT_KINDS = ['approval', 'mfa', 'review', 'takeover'] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

/** A person must act before the job goes on. The task token never leaves the backend. */
export interface PendingWait {
  kind: WaitKind;
  /** Step id the wait is for. */
  step: string;
  stepIndex: number;
  taskToken: string;
  /** ISO time after which the wait times out. */
  expiresAt: string;
  requestedAt: string;
  /** Why the person is asked (e.g. `layout_changed`, `uncertain`, `needs_approval`). */
  reason?: string;
}

/** What a job has cost so far, by component. All counters; money is derived from rates. */
export interface Cost {
  browserSeconds: number;
  lambdaInvocations: number;
  lambdaMs: number;
  stateTransitions: number;
  dynamoWrites: number;
  proxyBytes: number;
  /** Model tokens (input and output): agent decisions', and what a browser provider reports for a session. */
  modelTokens: number;
  /**
   * Dollars of those tokens, priced when they were spent (per model, at the dated rates of
   * `cost/rates.ts`): a job's tokens mix models with different prices, so they cannot be
   * priced from the total afterwards.
   */
  modelUsd: number;
  humanInterventions: number;
}

export const ZERO_COST: Readonly<Cost> = Object.freeze({
  browserSeconds: 0,
  lambdaInvocations: 0,
  lambdaMs: 0,
  stateTransitions: 0,
  dynamoWrites: 0,
  proxyBytes: 0,
  modelTokens: 0,
  modelUsd: 0,
  humanInterventions: 0,
});

/** The browser session a job holds for one application (an account's profile). */
export interface SessionRef {
  sessionId: string;
  profileName?: string;
  identityId?: string;
  openedAt: string;
  /**
   * The provider's live view of the session (Anchor returns it only when the session is
   * created): the console links it while the session runs. Interactive: shown only to the tenant.
   */
  liveViewUrl?: string;
  /** Set when the engine ended it (with its `session-ended` entry): the job's record of the session stays. */
  endedAt?: string;
}

/** What a client asks for. Hashed (`requestHash`) to tell a repeat from a conflicting reuse of a job id. */
export interface JobRequest {
  playbook: string;
  inputs: Record<string, unknown>;
  /** application name -> the tenant's connected account id to act as. */
  accounts: Record<string, string>;
  /** Step ids that need a person's approval before they run (in addition to the playbook's own). */
  approvals: string[];
  retryBudget: number;
  deadline?: string;
  /**
   * The model the job's agent steps use (`bedrock:<id>`, `anthropic:<id>`, `openai:<id>` or
   * `local`), over each step's own; one the deployment does not offer fails the step.
   */
  model?: string;
  /**
   * `check`: a drift check, not a job that acts. It runs the playbook read-only against the live
   * site: every read, and each write up to (not including) its commit, with every unsafe request
   * of a write step refused; nobody is asked anything. It ends SUCCEEDED when every step
   * was as the playbook expects, FAILED (`drift-found`) at the first that was not.
   */
  mode?: 'check';
}

/**
 * Who submitted a job: kept on the job, outside its request (a repeat of the submission by
 * another key of the tenant is the same job, and the job keeps its first submitter).
 */
export interface JobOrigin {
  /** Id of the API key that submitted the job (`blk_...`, not the key itself). */
  submittedBy?: string;
}

export interface Job extends JobRequest, JobOrigin {
  tenantId: string;
  jobId: string;
  requestHash: string;
  status: JobStatus;
  /** Index of the next step to run (0-based); equals `stepCount` when every step is done. */
  nextStep: number;
  stepCount: number;
  /** application -> the session the job holds for it. */
  sessions: Record<string, SessionRef>;
  /** Step failures spent from `retryBudget`. */
  retriesUsed: number;
  cost: Cost;
  wait?: PendingWait;
  /** Optimistic-lock version; every write to the job item increments it. */
  version: number;
  createdAt: string;
  updatedAt: string;
  /** When the job first left the queue (took its browser lease and went RUNNING). */
  startedAt?: string;
  /** When the job last went QUEUED (submitted, or waiting for a slot again after parking). */
  queuedSince?: string;
  /**
   * When the job last asked for a browser lease and was told to wait (QUEUED). A QUEUED job
   * that has not asked for a while (its execution is gone) holds no one behind it back.
   */
  capacityAskedAt?: string;
  finishedAt?: string;
  failure?: { reason: string; message: string };
  /** Epoch seconds at which a terminal job expires (DynamoDB TTL). */
  expiresAt?: number;
  /** Name of the latest execution coordinating the job. */
  executionName?: string;
  /** The attempt that owns the job's latest write intent, and its signs of life. */
  writeOwner?: WriteOwner;
  /**
   * Someone cancelled the job while a write was in flight: the engine settles the write
   * (waits for it, or probes it) and then cancels, instead of abandoning it half done.
   */
  cancelRequested?: { at: string; by: string };
  /**
   * The hash of the job's last ledger entry (`chain.ts`): every entry write is conditioned on
   * it and moves it. Absent on a job none of whose entries is chained yet.
   */
  chainHead?: string;
}

/**
 * The attempt that wrote a write step's intent. While it lives it renews `heartbeatAt`
 * (without moving the job's version); it sets `releasedAt` when its invocation ends. Another
 * attempt trusts a probe's `absent` only once the owner released or went silent, so two
 * attempts of one write never overlap (a retried task may start while the first still runs).
 */
export interface WriteOwner {
  step: string;
  attemptId: string;
  heartbeatAt: string;
  releasedAt?: string;
}

export const LEDGER_ENTRY_TYPES = [
  'job-created',
  'step-started',
  'step-completed',
  'step-failed',
  /** A write's attempt acted but its application confirmed nothing: the probe settles whether it happened. */
  'step-unconfirmed',
  'approval-requested',
  'approval-recorded',
  'session-opened',
  'session-replaced',
  'session-ended',
  'reauth',
  'mfa-requested',
  'mfa-completed',
  'reconciled',
  'review-requested',
  'review-recorded',
  /** A step asked a person to act in the live browser (a takeover); the wait follows. */
  'takeover-requested',
  /** The person said they were done and the step's precondition held on the live page. */
  'takeover-completed',
  'parked',
  'cancelled',
  /** A cancellation asked for while a write was in flight: applied once the write is settled. */
  'cancel-requested',
  'failed',
  'succeeded',
  /** Finish looked for a write and could not conclude (it tries again, then asks a person). */
  'finish-check',
  /** An engine invocation that wrote no entry of its own: which function ran, how it ended, its cost. */
  'invocation',
  /** A screenshot taken when the invocation's own entry was already written (a review asked after a sign-in). */
  'screenshot',
  /** The job's execution died outside its handlers; the recovery function started the next one. */
  'recovered',
  /**
   * An agent step's action, chosen by its model and recorded before it runs: the action, its
   * target, its arguments (placeholders for secrets), what the model saw, model, tokens, cost.
   */
  'action-chosen',
  /** A recorded action whose target no longer resolved, chosen again by the model (one call) for that action only. */
  'action-healed',
  /**
   * An action the model chose that the engine refused, never run: a `goto` off the job's domains,
   * a secret or sensitive input typed where the playbook does not put it, a target that does not
   * name exactly one element, a value the job does not have.
   */
  'action-refused',
  /**
   * A model's answer to a write's agent probe (done, absent or unknown, read from the page):
   * the question, what the model saw, model, tokens, cost. Appended, fencing nothing.
   */
  'probe-answered',
  /**
   * A model call that failed or was refused after the provider answered with its usage (no tool
   * call, arguments that do not parse, a refusal): the model, tokens, cost, and why. Appended,
   * fencing nothing, so every token paid for reaches the job's cost.
   */
  'model-call-failed',
  /**
   * A write approved on its effect (`approve: 'effect'`) was prepared up to its commit: what it
   * would submit (fields and values as the page holds them, secrets masked), its hash and a
   * screenshot. The approval that follows is recorded against that hash.
   */
  'effect-prepared',
  /**
   * At execution the effect differed from the one approved (the page's values, the inputs, the
   * model's plan): nothing was submitted, the changes are listed, and a person is asked again.
   */
  'effect-changed',
  /**
   * A drift check found a step not as the playbook expects: `layout-changed` (which target no
   * longer resolves), `not-verified`, `signed-out` (the sign-in failed or needs a person),
   * `failed`; with the step's time, the writes it refused, and a screenshot. (A step as expected
   * is a `step-completed` entry whose detail says what was checked.)
   */
  'step-checked',
] as const;
export type LedgerEntryType = (typeof LEDGER_ENTRY_TYPES)[number];

/** Why a screenshot was taken (see `lambdas/lib/evidence/policy.ts`). */
export type ScreenshotReason =
  | 'after-write'
  | 'after-step'
  | 'before-approval'
  | 'before-review'
  | 'on-failure';

/**
 * A screenshot of the job's page kept as evidence: the object's key in the screenshot store
 * (`tenants/<tenant>/jobs/<job>/...`), its size and sha256, so what a person is shown can be
 * checked against what the ledger recorded. The image itself never enters the ledger.
 */
export interface ScreenshotRef {
  key: string;
  bytes: number;
  /** Hex sha256 of the stored JPEG. */
  sha256: string;
  contentType: 'image/jpeg';
  reason: ScreenshotReason;
  /** How many elements were masked (password, card and one-time-code fields, the playbook's sensitive selectors). */
  masked: number;
  width: number;
  height: number;
}

/** Evidence that a step happened, as observed in the target application. Small; stored exactly but for secrets (people see it redacted). */
export type Evidence = Record<string, string | number | boolean | null>;

export interface LedgerEntry {
  tenantId: string;
  jobId: string;
  /** Sort key suffix: time-ordered and unique within the job. */
  entryId: string;
  type: LedgerEntryType;
  step?: string;
  stepIndex?: number;
  attempt?: number;
  sessionId?: string;
  identityId?: string;
  /** The step's idempotency key (`idempotencyKeyOf`: job id, step id, tenant and incarnation) on intents and completions of writes. */
  idempotencyKey?: string;
  evidence?: Evidence;
  /** Set instead of `evidence` when the evidence was too large to store inline. */
  evidenceRef?: string;
  /** Who did it (a worker, or the key id of a person). */
  actor?: string;
  /** The page as it was when the entry was written (masked JPEG in the screenshot store). */
  screenshot?: ScreenshotRef;
  detail?: Record<string, unknown>;
  cost: Cost;
  at: string;
  /**
   * The hash chain (`chain.ts`): the random salt of the entry's value digests (never shown to
   * people: it would let a redacted value be guessed), the hash of its content, the hash of the
   * entry before it in the job's chain, and its own hash. Absent on entries written before the chain existed.
   */
  hashSalt?: string;
  contentHash?: string;
  prevHash?: string;
  hash?: string;
}
