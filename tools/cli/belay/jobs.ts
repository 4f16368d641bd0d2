import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { EffectView } from '../../../lambdas/lib/api/jobs/schemas.ts';
import type { BelayClient } from './client.ts';
import { CliError, EXIT } from './errors.ts';
import { type Io, table } from './io.ts';
import { answerHint, doing, dollars, exitFor, follow, type JobView } from './progress.ts';

/** What every command gets: how to reach Belay, where to write, and `--json`. */
export interface CommandContext {
  client(): Promise<BelayClient>;
  io: Io;
  json(): boolean;
  /** The command's exit code (0 unless it says otherwise). */
  exit(code: number): void;
}

const jobPath = (id: string): string => `/jobs/${encodeURIComponent(id)}`;

function jobLine(job: JobView): string[] {
  return [job.jobId, job.status, `${job.stepsCompleted}/${job.stepCount}`, doing(job), dollars(job.cost)];
}

/** Prints a job, follows it when asked, and sets the exit code scripts read. */
async function showAndMaybeWait(
  ctx: CommandContext,
  client: BelayClient,
  job: JobView,
  wait: boolean,
): Promise<void> {
  let final = job;
  if (wait) final = await follow(client, job.jobId, ctx.io, { untilWaiting: true, quiet: ctx.json() });
  if (ctx.json()) ctx.io.out(JSON.stringify({ job: final }, null, 2));
  else {
    ctx.io.out(table([jobLine(final)]));
    if (wait && final.wait) ctx.io.err(`the job waits for a person: ${answerHint(final)}`);
  }
  if (wait) ctx.exit(exitFor(final));
}

export function registerJobs(program: Command, ctx: CommandContext): void {
  const jobs = program.command('jobs').description('submit, list, follow and read jobs');

  jobs
    .command('submit <file>')
    .description('submit a job from a JSON file (the body of POST /jobs), e.g. demo/jobs/checkout.json')
    .option('--job-id <id>', 'use this job id instead of the file\'s "jobId"')
    .option(
      '--wait',
      'follow the job until it ends or waits for a person (exit 0 SUCCEEDED, 6 FAILED/CANCELLED, 10 waiting)',
    )
    .action(async (file: string, opts: { jobId?: string; wait?: boolean }) => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      } catch (err) {
        throw new CliError(`cannot read a job from ${file}: ${(err as Error).message}`, EXIT.usage, {
          cause: err,
        });
      }
      if (opts.jobId) body.jobId = opts.jobId;
      const client = await ctx.client();
      const { job } = await client.request<{ job: JobView }>('POST', '/jobs', body);
      if (!ctx.json())
        ctx.io.err(`submitted ${job.jobId} (${job.playbook}); follow it with: belay jobs watch ${job.jobId}`);
      await showAndMaybeWait(ctx, client, job, opts.wait === true);
    });

  jobs
    .command('list')
    .description("list the tenant's jobs, newest first")
    .option(
      '--status <status>',
      'only jobs with this status (QUEUED, RUNNING, WAITING_APPROVAL, WAITING_MFA, WAITING_REVIEW, WAITING_TAKEOVER, SUCCEEDED, FAILED, CANCELLED)',
    )
    .option('--limit <n>', 'at most this many (1-100)', '25')
    .action(async (opts: { status?: string; limit: string }) => {
      const query = new URLSearchParams({
        limit: opts.limit,
        ...(opts.status ? { status: opts.status } : {}),
      });
      const page = await (await ctx.client()).request<{ jobs: JobView[]; nextCursor?: string }>(
        'GET',
        `/jobs?${query}`,
      );
      if (ctx.json()) return ctx.io.out(JSON.stringify(page, null, 2));
      if (page.jobs.length === 0) return ctx.io.out('no jobs');
      ctx.io.out(table([['JOB', 'STATUS', 'STEP', 'DOING', 'COST'], ...page.jobs.map(jobLine)]));
    });

  jobs
    .command('get <id>')
    .description('show a job: status, step n/N, what it waits for, cost')
    .action(async (id: string) => {
      const { job } = await (await ctx.client()).request<{ job: JobView }>('GET', jobPath(id));
      if (ctx.json()) return ctx.io.out(JSON.stringify({ job }, null, 2));
      ctx.io.out(table([['JOB', 'STATUS', 'STEP', 'DOING', 'COST'], jobLine(job)]));
      if (job.wait?.effect) ctx.io.out(effectLines(job.wait.effect));
    });

  jobs
    .command('watch <id>')
    .description(
      'follow a job live until it ends: step n/N, what it waits for, cost (exit 0 SUCCEEDED, 6 FAILED/CANCELLED)',
    )
    .option('--until-waiting', 'stop when the job waits for a person (exit 10)')
    .action(async (id: string, opts: { untilWaiting?: boolean }) => {
      const client = await ctx.client();
      const job = await follow(client, id, ctx.io, {
        untilWaiting: opts.untilWaiting === true,
        quiet: ctx.json(),
      });
      if (ctx.json()) ctx.io.out(JSON.stringify({ job }, null, 2));
      else ctx.io.out(table([jobLine(job)]));
      ctx.exit(exitFor(job));
    });

  jobs
    .command('ledger <id>')
    .description("print a job's audit trail (redacted): every entry with its evidence, who and when")
    .action(async (id: string) => {
      const ledger = await (await ctx.client()).request<{ entries: Record<string, unknown>[] }>(
        'GET',
        `${jobPath(id)}/ledger`,
      );
      if (ctx.json()) return ctx.io.out(JSON.stringify(ledger, null, 2));
      ctx.io.out(
        table(
          ledger.entries.map((e) => [
            String(e.at ?? ''),
            String(e.type ?? ''),
            String(e.step ?? ''),
            e.actor ? `by ${String(e.actor)}` : '',
            [
              e.evidence ? JSON.stringify(e.evidence) : '',
              e.detail ? JSON.stringify(e.detail) : '',
              e.screenshot ? `screenshot ${(e.screenshot as { url: string }).url}` : '',
            ]
              .filter(Boolean)
              .join(' '),
          ]),
        ),
      );
    });
}

/** `approve`, `reject`, `mfa`, `cancel`: a person's answers. */
export function registerAnswers(program: Command, ctx: CommandContext): void {
  const decide = async (
    id: string,
    decision: 'approve' | 'reject',
    opts: { step?: string; comment?: string; resolution?: string; wait?: boolean; effect?: string },
  ): Promise<void> => {
    const client = await ctx.client();
    const { job: waiting } = await client.request<{ job: JobView }>('GET', jobPath(id));
    let step = opts.step;
    if (!step) {
      if (!waiting.wait || waiting.wait.kind === 'mfa') {
        throw new CliError(
          `job ${id} is ${waiting.status} and waits for no decision${waiting.wait ? ' (it waits for a one-time code: belay mfa)' : ''}`,
          EXIT.refused,
        );
      }
      step = waiting.wait.step;
    }
    // A write approved on its effect: the decision is recorded against what this person was shown.
    const effect = waiting.wait?.step === step ? waiting.wait.effect : undefined;
    if (effect && decision === 'approve' && !ctx.json())
      ctx.io.err(`approving what step ${step} will submit:\n${effectLines(effect)}`);
    const result = await client.request('POST', `${jobPath(id)}/decisions`, {
      step,
      decision,
      ...(opts.comment ? { comment: opts.comment } : {}),
      ...(opts.resolution ? { resolution: opts.resolution } : {}),
      ...(opts.effect || effect ? { effectHash: opts.effect ?? effect?.hash } : {}),
    });
    if (ctx.json() && !opts.wait) return ctx.io.out(JSON.stringify(result, null, 2));
    if (!ctx.json()) ctx.io.err(`${decision === 'approve' ? 'approved' : 'rejected'} step ${step} of ${id}`);
    if (opts.wait) {
      const job = await follow(client, id, ctx.io, { untilWaiting: true, quiet: ctx.json() });
      if (ctx.json()) ctx.io.out(JSON.stringify({ decision: result, job }, null, 2));
      else ctx.io.out(table([jobLine(job)]));
      ctx.exit(exitFor(job));
    }
  };
  const decision = (name: 'approve' | 'reject', what: string): void => {
    program
      .command(`${name} <jobId>`)
      .description(what)
      .option('--step <id>', 'the step the job waits at (default: the one it waits at now)')
      .option('--comment <text>', 'why; kept in the ledger with your decision')
      .option(
        '--resolution <done|absent>',
        'reviews of an uncertain write: done = it happened, absent = it did not (the step runs again)',
      )
      .option(
        '--effect <hash>',
        'a write approved on its effect: the hash of the effect you approve (default: the one the job shows now, printed before it is sent)',
      )
      .option('--wait', 'then follow the job until it ends or waits again')
      .action(
        (
          id: string,
          opts: { step?: string; comment?: string; resolution?: string; wait?: boolean; effect?: string },
        ) => decide(id, name, opts),
      );
  };
  decision('approve', 'approve the step a job waits at (approvals and reviews; role approver)');
  decision('reject', 'reject the step a job waits at: the job fails with reason rejected (role approver)');

  program
    .command('mfa <jobId> <code>')
    .description(
      "send the one-time code a job's sign-in waits for (the job resumes once the sign-in is verified)",
    )
    .action(async (id: string, code: string) => {
      const result = await (await ctx.client()).request('POST', `${jobPath(id)}/mfa`, { code });
      if (ctx.json()) return ctx.io.out(JSON.stringify(result, null, 2));
      ctx.io.out(`code accepted; job ${id} goes on`);
    });

  program
    .command('cancel <jobId>')
    .description('cancel a job: its execution stops and its browser sessions end (role submitter)')
    .action(async (id: string) => {
      const result = await (await ctx.client()).request<{ job: JobView; cancelled: boolean }>(
        'POST',
        `${jobPath(id)}/cancel`,
      );
      if (ctx.json()) return ctx.io.out(JSON.stringify(result, null, 2));
      ctx.io.out(result.cancelled ? `cancelled ${id}` : `${id} was already ${result.job.status}`);
    });
}

/** What a write approved on its effect would submit, as lines for a terminal (and what changed). */
function effectLines(effect: EffectView): string {
  const changes = effect.changes?.length
    ? `changed since approved${effect.approvedBy ? ` by ${effect.approvedBy}` : ''}:\n${table([
        ['FIELD', 'APPROVED', 'NOW'],
        ...effect.changes.map((c) => [c.name, c.before ?? '(none)', c.after ?? '(none)']),
      ])}\n`
    : '';
  return `${changes}would submit (effect ${effect.hash.slice(0, 16)}):\n${table([
    ['FIELD', 'VALUE'],
    ...effect.fields.map((f) => [f.name, f.value]),
  ])}`;
}
