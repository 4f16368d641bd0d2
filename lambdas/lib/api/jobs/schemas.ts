import { z } from 'zod';
import { MODEL_SPEC_PATTERN } from '../../agent/model-spec.ts';
import { JOB_STATUSES, LEDGER_ENTRY_TYPES, WAIT_KINDS } from '../../ledger/types.ts';
import { CostSchema, Id } from '../schemas.ts';

/** The jobs routes' request and response schemas: handlers validate with these, `openapi.ts` documents them. */

export const JobStatusSchema = z.enum(JOB_STATUSES).meta({ id: 'JobStatus' });

export const SubmitJobBodySchema = z
  .object({
    jobId: Id.optional().meta({
      description:
        'Your id for the job: the idempotency key of submission (or send an Idempotency-Key header).',
    }),
    playbook: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,62}@[1-9][0-9]{0,5}$/, 'use name@version, e.g. checkout@1')
      .meta({ description: 'The playbook to run, as name@version.' }),
    inputs: z
      .record(z.string(), z.unknown())
      .meta({ description: "The playbook's inputs (its own schema applies)." }),
    accounts: z.record(z.string().min(1).max(64), Id).optional().meta({
      description:
        "Application -> the id of the tenant's connected account to act as. May be left out for an application in which the tenant has exactly one connected account.",
    }),
    approvals: z.array(z.string().min(1).max(100)).max(100).optional().meta({
      description: "Step ids that need a person's approval before they run, besides the playbook's own.",
    }),
    retryBudget: z
      .number()
      .int()
      .min(0)
      .max(20)
      .optional()
      .meta({ description: 'Step failures to retry (default 3).' }),
    deadline: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'ISO time after which the job fails instead of running on.' }),
    model: z
      .string()
      .regex(MODEL_SPEC_PATTERN, 'use local, bedrock:<model id>, anthropic:<model id> or openai:<model id>')
      .optional()
      .meta({
        description:
          "The model the playbook's agent steps use, over each step's own (one the deployment offers: BELAY_AGENT_MODELS).",
      }),
    mode: z.literal('check').optional().meta({
      description:
        "check: a drift check instead of a job that acts. The playbook runs read-only against the live site (every read, and each write up to, not including, its commit; a write step's unsafe requests are refused) and reports per step whether the site is still as the playbook expects. Nobody is asked anything; approvals do not apply.",
    }),
  })
  .strict()
  .meta({ id: 'SubmitJobRequest' });
export type SubmitJobBody = z.infer<typeof SubmitJobBodySchema>;

const EffectFieldSchema = z.object({
  name: z.string(),
  value: z.string().meta({ description: 'As the page holds it (a secret shows as [secret]).' }),
  secret: z.literal(true).optional(),
});

/** What a write approved on its effect would submit, as the approver is shown it. */
export const EffectViewSchema = z
  .object({
    hash: z
      .string()
      .meta({ description: 'sha256 of the effect: send it back as effectHash when you approve.' }),
    fields: z.array(EffectFieldSchema),
    changes: z
      .array(z.object({ name: z.string(), before: z.string().optional(), after: z.string().optional() }))
      .optional()
      .meta({
        description:
          'Asked again: what differs from the effect approved before (nothing was submitted). A field with no before is new; with no after, gone.',
      }),
    approvedBy: z.string().optional().meta({ description: 'Asked again: who approved the earlier effect.' }),
    screenshot: z
      .string()
      .optional()
      .meta({ description: 'The page as prepared, up to the commit (a path of this API).' }),
  })
  .meta({ id: 'Effect' });
export type EffectView = z.infer<typeof EffectViewSchema>;

export const DecisionBodySchema = z
  .object({
    step: z.string().min(1).max(100).meta({ description: 'Id of the step the job is waiting at.' }),
    decision: z.enum(['approve', 'reject']),
    comment: z.string().max(2000).optional(),
    resolution: z.enum(['done', 'absent']).optional().meta({
      description:
        'Reviews of an uncertain write: "done" = you saw the effect in the application, "absent" = it did not happen (the step runs again).',
    }),
    effectHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'the hash of the effect you were shown (64 hex digits)')
      .optional()
      .meta({
        description:
          "A write approved on its effect: the hash of the effect you were shown (the job's wait.effect.hash). Approving records the decision against it; if the job has since prepared another effect, the request is refused (409 effect_changed) so you look again. Without it, the effect the job shows now is the one approved.",
      }),
  })
  .strict()
  .meta({ id: 'DecisionRequest' });
export type DecisionBody = z.infer<typeof DecisionBodySchema>;

export const AnswerBodySchema = z
  .object({
    step: z.string().min(1).max(100).meta({ description: 'Id of the agent step that asked.' }),
    answer: z
      .string()
      .trim()
      .min(1, 'give the answer as text')
      .max(2000)
      .meta({ description: "The answer the step's model reads when the step runs again." }),
  })
  .strict()
  .meta({ id: 'AnswerRequest' });
export type AnswerBody = z.infer<typeof AnswerBodySchema>;

export const AnswerResponseSchema = z
  .object({
    jobId: z.string(),
    step: z.string(),
    answeredBy: z.string().meta({ description: 'Key id of whoever answered.' }),
    replayed: z.boolean().meta({ description: 'True when this answer had already been recorded.' }),
    resumed: z.boolean().meta({ description: 'True when this request resumed the job.' }),
  })
  .meta({ id: 'AnswerResult' });

export const MfaBodySchema = z
  .object({
    code: z
      .string()
      .regex(/^[A-Za-z0-9]{4,12}$/, 'a one-time code is 4-12 letters or digits')
      .optional()
      .meta({ description: 'The one-time code the application sent.' }),
    completed: z.literal(true).optional().meta({
      description: 'You completed the sign-in yourself (e.g. in the live view): verify it and resume.',
    }),
  })
  .strict()
  .refine((b) => (b.code === undefined) !== (b.completed === undefined), {
    message: 'send exactly one of code or completed',
    path: ['code'],
  })
  .meta({ id: 'MfaRequest' });
export type MfaBody = z.infer<typeof MfaBodySchema>;

export const TakeoverBodySchema = z
  .object({
    done: z.union([z.literal(true), z.literal('true')]).meta({
      description: 'You finished in the live browser: check the step’s precondition on the page and resume.',
    }),
    comment: z.string().max(2000).optional().meta({ description: 'Kept in the ledger with the completion.' }),
  })
  .strict()
  .meta({ id: 'TakeoverRequest' });

export const ListJobsQuerySchema = z
  .object({
    status: JobStatusSchema.optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
    cursor: z.string().min(1).max(4096).optional(),
  })
  .strict();

export const JobViewSchema = z
  .object({
    jobId: z.string(),
    playbook: z.string(),
    status: JobStatusSchema,
    step: z
      .object({ number: z.number().int(), of: z.number().int(), id: z.string(), title: z.string() })
      .nullable()
      .meta({ description: 'The step the job is at (1-based number of N); null once every step is done.' }),
    stepsCompleted: z.number().int(),
    stepCount: z.number().int(),
    wait: z
      .object({
        kind: z.enum(WAIT_KINDS),
        step: z.string(),
        stepTitle: z.string().optional(),
        reason: z.string().optional(),
        requestedAt: z.string(),
        expiresAt: z.string(),
        effect: EffectViewSchema.optional(),
      })
      .nullable()
      .meta({ description: 'What a person must do for the job to go on.' }),
    queue: z
      .object({
        position: z
          .number()
          .int()
          .min(1)
          .meta({ description: "1 = the next of the tenant's queued jobs to start." }),
        since: z.string().meta({
          description: 'When the job went QUEUED; past BELAY_MAX_QUEUE_SECONDS it fails with queue-timeout.',
        }),
      })
      .optional()
      .meta({
        description:
          "A QUEUED job's place: jobs over the tenant's browser cap wait and start in submission order.",
      }),
    inputs: z.record(z.string(), z.unknown()),
    accounts: z.record(z.string(), z.string()),
    approvals: z.array(z.string()),
    retryBudget: z.number().int(),
    retriesUsed: z.number().int(),
    deadline: z.string().optional(),
    model: z
      .string()
      .optional()
      .meta({ description: "The model the job's agent steps use, when it chose one." }),
    mode: z.literal('check').optional().meta({ description: 'check: a drift check (it commits nothing).' }),
    sessions: z.record(
      z.string(),
      z.object({
        sessionId: z.string(),
        identityId: z.string().optional(),
        openedAt: z.string(),
        endedAt: z
          .string()
          .optional()
          .describe('When the engine ended the session (job finished or parked).'),
      }),
    ),
    cost: CostSchema,
    failure: z.object({ reason: z.string(), message: z.string() }).optional(),
    submittedBy: z
      .string()
      .optional()
      .meta({ description: 'Id of the API key that submitted the job (answer_question needs that key).' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    startedAt: z
      .string()
      .optional()
      .describe('When the job first left the queue: it took its browser lease and went RUNNING.'),
    finishedAt: z.string().optional(),
  })
  .meta({ id: 'Job' });
export type JobView = z.infer<typeof JobViewSchema>;

export const JobLinksSchema = z
  .object({
    self: z.string(),
    ledger: z.string(),
    decisions: z.string(),
    mfa: z.string(),
    cancel: z.string(),
  })
  .meta({ id: 'JobLinks' });

export const JobResponseSchema = z
  .object({ job: JobViewSchema, links: JobLinksSchema })
  .meta({ id: 'JobResponse' });

export const JobListSchema = z
  .object({ jobs: z.array(JobViewSchema), nextCursor: z.string().optional() })
  .meta({ id: 'JobList' });

export const LedgerEntryViewSchema = z
  .object({
    entryId: z.string(),
    type: z.enum(LEDGER_ENTRY_TYPES),
    at: z.string(),
    step: z.string().optional(),
    stepIndex: z.number().int().optional(),
    attempt: z.number().int().optional(),
    sessionId: z.string().optional(),
    identityId: z.string().optional(),
    idempotencyKey: z.string().optional(),
    actor: z.string().optional(),
    evidence: z.record(z.string(), z.unknown()).optional(),
    evidenceRef: z.string().optional(),
    detail: z.record(z.string(), z.unknown()).optional(),
    screenshot: z
      .object({
        key: z.string(),
        url: z.string().meta({ description: 'Where the API serves it: GET with the same key.' }),
        bytes: z.number().int(),
        sha256: z.string(),
        contentType: z.literal('image/jpeg'),
        reason: z.enum(['after-write', 'after-step', 'before-approval', 'before-review', 'on-failure']),
        masked: z.number().int(),
        width: z.number().int(),
        height: z.number().int(),
      })
      .optional()
      .meta({ description: 'The page when the entry was written (masked JPEG).' }),
    cost: CostSchema,
  })
  .meta({ id: 'LedgerEntry' });

const AgentCountersShape = {
  modelCalls: z.number().int().meta({ description: 'Decisions a model made (heals included).' }),
  cachedActions: z
    .number()
    .int()
    .meta({ description: 'Actions the action cache served in the record the step verified with.' }),
  heals: z.number().int(),
  failedReplayActions: z
    .number()
    .int()
    .meta({ description: 'Cached actions of attempts that did not verify: a miss, not a saving.' }),
  usage: z.number().int().meta({ description: 'Model tokens, input and output together.' }),
  modelUsd: z.number(),
};

export const LedgerResponseSchema = z
  .object({
    jobId: z.string(),
    status: JobStatusSchema,
    entries: z.array(LedgerEntryViewSchema),
    agent: z
      .object({
        steps: z.record(
          z.string(),
          z.object({ ...AgentCountersShape, cache: z.enum(['hit', 'healed', 'miss', 'pending']) }),
        ),
        total: z.object(AgentCountersShape),
      })
      .optional()
      .meta({
        description:
          "An agent job's model calls and action-cache use, per agent step and in total, counted off its ledger (present only for jobs with agent steps).",
      }),
  })
  .meta({ id: 'Ledger' });

export const DecisionResponseSchema = z
  .object({
    jobId: z.string(),
    step: z.string(),
    decision: z.enum(['approve', 'reject']),
    resolution: z.enum(['done', 'absent']).optional(),
    decidedBy: z.string().meta({ description: 'Key id of whoever recorded the decision.' }),
    replayed: z.boolean().meta({ description: 'True when this decision had already been recorded.' }),
    resumed: z.boolean().meta({ description: 'True when this request resumed the job.' }),
  })
  .meta({ id: 'DecisionResult' });

export const TakeoverResponseSchema = z
  .object({ jobId: z.string(), step: z.string(), done: z.literal(true), resumed: z.boolean() })
  .meta({ id: 'TakeoverResult' });

export const MfaResponseSchema = z
  .object({ jobId: z.string(), step: z.string(), signedIn: z.literal(true), resumed: z.boolean() })
  .meta({ id: 'MfaResult' });
