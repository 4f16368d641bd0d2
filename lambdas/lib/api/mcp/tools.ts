import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { PlaybookView } from '../catalog/views.ts';
import {
  type JobListSchema,
  type JobResponseSchema,
  type LedgerResponseSchema,
  SubmitJobBodySchema,
} from '../jobs/schemas.ts';
import { type BelayApi, expectJson, seg } from './api.ts';
import { AnswerWaitInput, JobIdInput, ListJobsInput, QuestionInput, WaitInput } from './inputs.ts';
import { type ToolBody, toolRunner } from './results.ts';
import { jobBrief, jobSummary, playbookBrief, playbookDetail } from './views.ts';
import { type WaitDeps, waitForJob } from './wait.ts';

/**
 * The tools of Belay's MCP server, each over the HTTP API's own routes. Inputs are the API's
 * zod schemas (their JSON Schema is what `tools/list` shows; a call that does not fit gets the
 * schema's message and reaches nothing); results are short structured views (`views.ts`); a
 * refusal is an MCP tool error with the API's code and message.
 */

type JobResponse = z.infer<typeof JobResponseSchema>;
type LedgerResponse = z.infer<typeof LedgerResponseSchema>;

/** What the tools need: the API (as the caller's key) and how `wait_for_job` waits. */
export interface ToolDeps {
  api: BelayApi;
  wait: Omit<WaitDeps, 'api'>;
  /** Called with an error no tool expected (a bug); the tool answers a generic error. */
  onUnexpectedError(err: unknown): void;
}

const READ = { readOnlyHint: true, openWorldHint: false } as const;

/** Registers every tool of `TOOL_NAMES` (`names.ts`) on `server`. */
export function registerTools(server: McpServer, deps: ToolDeps): void {
  const { api } = deps;
  const run = <A>(body: ToolBody<A>) => toolRunner(deps.onUnexpectedError, body);
  const getJob = async (jobId: string): Promise<JobResponse['job']> =>
    expectJson<JobResponse>(await api({ method: 'GET', path: `/jobs/${seg(jobId)}` })).job;
  const getLedger = async (jobId: string): Promise<LedgerResponse['entries']> =>
    expectJson<LedgerResponse>(await api({ method: 'GET', path: `/jobs/${seg(jobId)}/ledger` })).entries;

  server.registerTool(
    'list_playbooks',
    {
      title: 'List playbooks',
      description:
        'The playbooks this tenant may run: id (name@version), what each does, its applications, how many steps, which steps write (a side effect outside the browser) and which a person approves first.',
      inputSchema: z.strictObject({}),
      annotations: READ,
    },
    run(async () => {
      const { playbooks } = expectJson<{ playbooks: PlaybookView[] }>(
        await api({ method: 'GET', path: '/playbooks' }),
      );
      return { playbooks: playbooks.map(playbookBrief) };
    }),
  );

  server.registerTool(
    'describe_playbook',
    {
      title: 'Describe a playbook',
      description:
        'One playbook in full: its inputs as JSON Schema (with an example when it has one) and its steps in order, each with its application, whether it writes and whether it needs a person’s approval.',
      inputSchema: z.strictObject({ playbook: SubmitJobBodySchema.shape.playbook }),
      annotations: READ,
    },
    run(async ({ playbook }: { playbook: string }) => {
      const found = expectJson<{ playbook: PlaybookView }>(
        await api({ method: 'GET', path: `/playbooks/${seg(playbook)}` }),
      );
      return playbookDetail(found.playbook);
    }),
  );

  server.registerTool(
    'submit_job',
    {
      title: 'Submit a job',
      description:
        'Hands a durable browser job to Belay: it runs step by step on its own (a crash loses at most the step in flight and never repeats a write), and survives this conversation. Give a jobId of your own: a repeat with the same jobId and request returns the same job and starts nothing twice. Follow it with wait_for_job or get_job. Approvals, one-time codes and reviews go to people.',
      inputSchema: z.strictObject(SubmitJobBodySchema.shape),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    run(async (args: z.infer<typeof SubmitJobBodySchema>) => {
      const reply = await api({ method: 'POST', path: '/jobs', body: args });
      const { job } = expectJson<JobResponse>(reply);
      return { created: reply.status === 202, job: jobSummary(job) };
    }),
  );

  server.registerTool(
    'get_job',
    {
      title: 'Get a job',
      description:
        'Where a job is: status, step n of N, the wait a person must answer (kind, step, question, who may answer and how), evidence of the steps verified so far, screenshots (as resources), retries and cost.',
      inputSchema: z.strictObject(JobIdInput),
      annotations: READ,
    },
    run(async ({ jobId }: { jobId: string }) => {
      const job = await getJob(jobId);
      return jobSummary(job, await getLedger(jobId));
    }),
  );

  server.registerTool(
    'wait_for_job',
    {
      title: 'Wait for a job',
      description:
        'Follows a job until it ends (SUCCEEDED, FAILED, CANCELLED) or waits for a person, for at most timeoutSeconds; sends a progress notification per step completed when the request carries a progressToken. outcome says why it returned: finished, waiting_for_person, timed_out (the job goes on: call again), cancelled_by_client. Over HTTP one call waits at most what the API allows (cappedAtSeconds).',
      inputSchema: WaitInput,
      annotations: READ,
    },
    run(async ({ jobId, timeoutSeconds }: z.infer<typeof WaitInput>, extra) => {
      const token = extra._meta?.progressToken;
      const waited = await waitForJob(
        { ...deps.wait, api },
        jobId,
        timeoutSeconds,
        async (p) => {
          if (token === undefined) return;
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: p.progress, total: p.total, message: p.message },
          });
        },
        extra.signal,
      );
      const entries = waited.outcome === 'timed_out' ? undefined : await getLedger(jobId);
      return {
        outcome: waited.outcome,
        waitedSeconds: waited.waitedSeconds,
        ...(waited.cappedAtSeconds === undefined ? {} : { cappedAtSeconds: waited.cappedAtSeconds }),
        job: jobSummary(waited.job, entries),
      };
    }),
  );

  server.registerTool(
    'list_jobs',
    {
      title: 'List jobs',
      description:
        "The tenant's jobs, newest first, optionally of one status: id, playbook, status, steps done, what each waits for.",
      inputSchema: ListJobsInput,
      annotations: READ,
    },
    run(async (args: z.infer<typeof ListJobsInput>) => {
      const query = new URLSearchParams();
      if (args.status) query.set('status', args.status);
      if (args.limit !== undefined) query.set('limit', String(args.limit));
      if (args.cursor) query.set('cursor', args.cursor);
      const qs = query.toString();
      const page = expectJson<z.infer<typeof JobListSchema>>(
        await api({ method: 'GET', path: `/jobs${qs ? `?${qs}` : ''}` }),
      );
      return { jobs: page.jobs.map(jobBrief), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    }),
  );

  server.registerTool(
    'cancel_job',
    {
      title: 'Cancel a job',
      description:
        'Stops a job and ends its browser sessions. A write in flight is settled first (settling: true): the job cancels itself once it knows whether the write happened. A finished job cannot be cancelled.',
      inputSchema: z.strictObject(JobIdInput),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    run(async ({ jobId }: { jobId: string }) => {
      const out = expectJson<JobResponse & { cancelled: boolean; settling?: boolean }>(
        await api({ method: 'POST', path: `/jobs/${seg(jobId)}/cancel` }),
      );
      return {
        cancelled: out.cancelled,
        ...(out.settling ? { settling: true } : {}),
        job: jobSummary(out.job),
      };
    }),
  );

  server.registerTool(
    'answer_question',
    {
      title: "Answer an agent step's question",
      description:
        'An agent step that could not go on asked its requester a question (the job waits for a review, reason agent-question; get_job shows the question). Answer it here with the key that submitted the job; the step reads the answer when it runs again. Approvals, codes and other reviews are not answered here.',
      inputSchema: QuestionInput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    run(async ({ jobId, ...answer }: z.infer<typeof QuestionInput>) =>
      expectJson<Record<string, unknown>>(
        await api({ method: 'POST', path: `/jobs/${seg(jobId)}/answers`, body: answer }),
      ),
    ),
  );

  server.registerTool(
    'answer_wait',
    {
      title: 'Answer a person’s wait (off unless the deployment allows it)',
      description:
        'Approvals, one-time codes and reviews are for people. This tool answers one only where the deployment allows agents to for this tenant (BELAY_MCP_ANSWER_TENANTS), with a key holding the approver role that did not submit the job; otherwise it is refused and a person answers in the console. decision (approve|reject, with step) answers an approval or a review; code answers a sign-in’s one-time code.',
      inputSchema: AnswerWaitInput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    run(async ({ jobId, code, ...decision }: z.infer<typeof AnswerWaitInput>) => {
      if (code !== undefined) {
        return expectJson<Record<string, unknown>>(
          await api({ method: 'POST', path: `/jobs/${seg(jobId)}/mfa`, body: { code } }),
        );
      }
      return expectJson<Record<string, unknown>>(
        await api({ method: 'POST', path: `/jobs/${seg(jobId)}/decisions`, body: decision }),
      );
    }),
  );
}
