/**
 * `belay playbook check <id>` and `belay playbook health <id>`: a drift check of a playbook
 * against the live site (a job with `mode: check`: read-only, up to each write's commit, never
 * committing), followed to its end and printed step by step; and a playbook's recent checks.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { CheckView } from '../../../lambdas/lib/api/checks/views.ts';
import { CliError, EXIT } from './errors.ts';
import { table } from './io.ts';
import type { CommandContext } from './jobs.ts';
import { follow, type JobView } from './progress.ts';

/** `--account <app>=<accountId>`, repeatable. */
function collectAccount(value: string, list: Record<string, string>): Record<string, string> {
  const m = /^([a-z][a-z0-9-]*)=(acct_[A-Za-z0-9_-]+)$/.exec(value);
  if (!m) throw new InvalidArgumentError('expected <app>=<accountId>, e.g. shop=acct_demo_shop');
  return { ...list, [m[1] as string]: m[2] as string };
}

function stepRows(view: CheckView): string[][] {
  return [
    ['STEP', 'RESULT', 'TIME', 'DETAIL'],
    ...view.steps.map((s) => [
      s.step,
      s.result === 'ok' && s.slower ? 'ok, slower than usual' : s.result,
      s.ms === undefined
        ? '-'
        : `${(s.ms / 1000).toFixed(1)} s${s.slower ? ` (usually ${(s.slower.medianMs / 1000).toFixed(1)} s)` : ''}`,
      [s.detail ?? '', s.screenshot ? `screenshot ${s.screenshot}` : ''].filter(Boolean).join(' '),
    ]),
  ];
}

export function registerChecks(program: Command, ctx: CommandContext): void {
  const playbook = program.command('playbook').description("a playbook's drift checks");
  playbook
    .command('check <playbookId>')
    .description(
      'run the playbook read-only against the live site: every read, and each write up to (not including) its commit, its own writes refused; print what each step found (exit 0 all ok, 1 a step is not as the playbook expects)',
    )
    .requiredOption(
      '--account <app=accountId>',
      'the account per application (repeatable)',
      collectAccount,
      {},
    )
    .option('--inputs <file>', "the inputs (JSON); default: the playbook's example inputs")
    .option('--job-id <id>', 'the check job id (default: a new one)')
    .action(
      async (id: string, opts: { account: Record<string, string>; inputs?: string; jobId?: string }) => {
        const client = await ctx.client();
        let inputs: unknown;
        if (opts.inputs) {
          try {
            inputs = JSON.parse(await readFile(opts.inputs, 'utf8'));
          } catch {
            throw new CliError(`--inputs: ${opts.inputs} is not a readable JSON file`, EXIT.usage);
          }
        } else {
          const { playbook: found } = await client.request<{ playbook: { exampleInputs?: unknown } }>(
            'GET',
            `/playbooks/${encodeURIComponent(id)}`,
          );
          if (found.exampleInputs === undefined)
            throw new CliError(`${id} has no example inputs: give --inputs <file>`, EXIT.usage);
          inputs = found.exampleInputs;
        }
        const { job } = await client.request<{ job: JobView }>('POST', '/jobs', {
          ...(opts.jobId ? { jobId: opts.jobId } : {}),
          playbook: id,
          inputs,
          accounts: opts.account,
          mode: 'check',
        });
        if (!ctx.json()) ctx.io.err(`checking ${id} as job ${job.jobId}`);
        const final = await follow(client, job.jobId, ctx.io, { untilWaiting: false, quiet: ctx.json() });
        const { checks } = await client.request<{ checks: CheckView[] }>(
          'GET',
          `/playbooks/${encodeURIComponent(id)}/checks`,
        );
        const view = checks.find((c) => c.jobId === job.jobId);
        if (ctx.json()) ctx.io.out(JSON.stringify({ job: final, check: view }, null, 2));
        else if (view) {
          ctx.io.out(table(stepRows(view)));
          ctx.io.out(
            view.health === 'ok'
              ? `${id}: every step is as the playbook expects (${view.steps.length} steps, nothing committed)`
              : `${id}: ${final.failure?.message ?? `the check ended ${final.status}`}`,
          );
        }
        ctx.exit(
          final.status === 'SUCCEEDED'
            ? EXIT.ok
            : final.failure?.reason === 'drift-found'
              ? EXIT.error
              : EXIT.jobFailed,
        );
      },
    );

  playbook
    .command('health <playbookId>')
    .description("a playbook's recent drift checks, newest first, and what each step found")
    .action(async (id: string) => {
      const view = await (await ctx.client()).request<{ health: string; checks: CheckView[] }>(
        'GET',
        `/playbooks/${encodeURIComponent(id)}/checks`,
      );
      if (ctx.json()) return ctx.io.out(JSON.stringify(view, null, 2));
      ctx.io.out(`${id}: ${view.health}`);
      for (const c of view.checks) {
        ctx.io.out(`\n${c.jobId}  ${c.health}  ${c.createdAt}`);
        ctx.io.out(table(stepRows(c)));
      }
    });
}
