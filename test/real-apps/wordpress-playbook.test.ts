/**
 * The WordPress playbook (`examples/wordpress`, a declarative playbook for a real application
 * nobody here wrote) through Belay, with every record counted in WordPress's own database:
 *
 * - `npm run playbook -- test` judges every step safe: the Quick Draft's save is the committing
 *   request (the dashboard's Heartbeat posts apart), a draft an earlier run left with the same
 *   title does not complete a later run's write, and each run leaves exactly one draft of its own;
 * - jobs whose RunStep worker is SIGKILLed after the save, and a job whose whole stack is
 *   SIGKILLed while the save is in flight and then restarted, each leave exactly one draft.
 *
 * Needs `bash scripts/install-real-apps.sh` (`npm run test:real-apps`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectAccount } from '../../lambdas/lib/api/accounts/manage.ts';
import { decide } from '../../lambdas/lib/api/jobs/decide.ts';
import { submitJob } from '../../lambdas/lib/api/jobs/submit.ts';
import { idempotencyKeyOf } from '../../lambdas/lib/engine/job-identity.ts';
import { freePorts } from '../../local/ports.ts';
import { localFunctionArn } from '../../local/stack.ts';
import { type RunningWordPress, startWordPress } from '../../tools/real-apps/wordpress.ts';
import { wordpressApplications, writeAccountFile } from '../../tools/real-apps/wordpress-application.ts';
import { apiDepsForChild, startChildStack } from '../support/child-stack.ts';
import {
  type EngineStack,
  type JobsClient,
  startEngineStack,
  stopEngineStack,
} from '../support/engine-stack.ts';
import { PERSON } from '../support/fixtures.ts';
import { diagnose, waitForJob } from '../support/jobs.ts';
import { leftoverProcesses, runToExit } from '../support/processes.ts';
import { ofType } from '../support/records.ts';

const REPO = resolve(import.meta.dirname, '../..');
const PLAYBOOKS = join(REPO, 'examples', 'wordpress');
const PLAYBOOK = 'wordpress-quick-draft@1';

let wp: RunningWordPress;
let tmp: string;

beforeAll(async () => {
  wp = await startWordPress();
  tmp = await mkdtemp(join(tmpdir(), 'belay-wp-playbook-'));
  await writeAccountFile(wp, join(tmp, 'account.json'));
}, 180_000);

afterAll(async () => {
  await wp?.stop();
  await rm(tmp, { recursive: true, force: true });
}, 60_000);

/** Drafts holding `key` in WordPress's database. */
const draftsOf = (key: string): Promise<number> =>
  wp.posts.count({ status: 'draft', contentContains: `Ref: ${key}` });

describe.sequential('WordPress through Belay', () => {
  it('is safe to retry at every step by npm run playbook -- test, with one draft per run in its database', async () => {
    // An earlier draft with the example's title is already listed on the dashboard.
    const before = await wp.posts.count({ status: 'draft' });
    const { code, output } = await runToExit(
      [
        '--import',
        'tsx',
        'tools/playbook/main.ts',
        'test',
        PLAYBOOK,
        '--playbooks',
        PLAYBOOKS,
        '--applications',
        JSON.stringify(wordpressApplications(wp)),
        '--account',
        `wordpress=@${join(tmp, 'account.json')}`,
      ],
      { cwd: REPO, timeoutMs: 1_500_000 },
    );
    expect(code, output).toBe(0);
    expect(output).toMatch(/create-draft\s+write\s+ok\s+ok\s+-\s+ok\s+ok\s+ok\s+[\d.]+ s\s+yes/);
    // The save counted, the Heartbeat apart.
    expect(output).toMatch(
      /drop-response@create-draft: ok, 1 committed write \(POST \^\/wp-admin\/post\\\.php\$\); background \d+ POST \/wp-admin\/admin-ajax\.php/,
    );
    expect(output).toContain('every step is safe to retry (3 steps)');
    // Counted in WordPress's database: each run saved exactly one draft of its own key.
    const runs = Number(/(\d+) runs \(/.exec(output)?.[1]);
    expect(runs).toBeGreaterThan(10);
    const made = await wp.posts.list({ status: 'draft', contentContains: 'Ref: pbtest-' });
    expect(made).toHaveLength(runs);
    expect((await wp.posts.count({ status: 'draft' })) - before).toBe(runs);
  }, 1_600_000);

  it('leaves one draft per job when RunStep is killed after the save, and after the whole stack is killed mid-save', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'belay-wp-stack-'));
    const [anchor = 0, shop = 0, crm = 0, billing = 0] = await freePorts(4);
    const ports = { anchor, shop, crm, billing, dynamodb: 0, sfn: 0 };
    const more = { applications: wordpressApplications(wp), playbookDirs: [PLAYBOOKS] };
    let restarted: EngineStack | undefined;
    const child = await startChildStack(dataDir, ports, 180_000, more);
    try {
      const api = await apiDepsForChild(child, [PLAYBOOKS]);
      const jobs: JobsClient = { api, ledger: api.engine.ledger };
      const account = (
        await connectAccount(api, PERSON, { application: 'wordpress', label: 'wp', credentials: wp.admin })
      ).accountId;
      const submit = async (jobId: string): Promise<void> => {
        await submitJob(
          api,
          PERSON,
          {
            jobId,
            playbook: PLAYBOOK,
            inputs: { title: `Stack notes ${jobId}`, content: 'Written by a job that is killed.' },
            accounts: { wordpress: account },
          },
          undefined,
        );
        const { job } = await waitForJob(jobs, jobId, ({ job: j }) => j.status === 'WAITING_APPROVAL', {
          timeoutMs: 180_000,
          what: 'the approval of the draft',
        });
        expect(job.wait?.step).toBe('create-draft');
      };

      // The whole stack SIGKILLed as the save goes out (its intent is in the ledger).
      await submit('wp-stack-kill');
      await decide(api, PERSON, 'wp-stack-kill', { step: 'create-draft', decision: 'approve' });
      await waitForJob(
        jobs,
        'wp-stack-kill',
        ({ entries }) => entries.some((x) => x.type === 'step-started' && x.step === 'create-draft'),
        { timeoutMs: 120_000, what: "the write's intent", pollMs: 20 },
      );
      await child.kill();
      api.sfn.destroy();
      api.doc.destroy();
      restarted = await startEngineStack({ dataDir, ports, ...more });
      const e = restarted;
      const killed = await waitForJob(
        e,
        'wp-stack-kill',
        ({ job }) => ['SUCCEEDED', 'FAILED'].includes(job.status),
        {
          timeoutMs: 240_000,
          what: 'the end of the job after the restart',
        },
      );
      expect(killed.job.status, await diagnose(e, 'wp-stack-kill')).toBe('SUCCEEDED');
      expect(await draftsOf(idempotencyKeyOf(killed.job, 'create-draft'))).toBe(1);

      // RunStep SIGKILLed after the save committed (twice), and during its checkpoint.
      const account2 = (
        await connectAccount(e.api, PERSON, { application: 'wordpress', label: 'wp', credentials: wp.admin })
      ).accountId;
      for (const [jobId, point] of [
        ['wp-kill-after', 'after-action'],
        ['wp-kill-checkpoint', 'during-checkpoint'],
      ] as const) {
        await submitJob(
          e.api,
          PERSON,
          {
            jobId,
            playbook: PLAYBOOK,
            inputs: { title: 'Launch notes', content: 'The same title as other drafts.' },
            accounts: { wordpress: account2 },
          },
          undefined,
        );
        await waitForJob(e, jobId, ({ job }) => job.status === 'WAITING_APPROVAL', { timeoutMs: 180_000 });
        e.stack.lambdas.arm({
          functionName: localFunctionArn('RunStep'),
          point,
          match: { jobId, stepIndex: 1 },
          times: 1,
        });
        await decide(e.api, PERSON, jobId, { step: 'create-draft', decision: 'approve' });
        const done = await waitForJob(e, jobId, ({ job }) => ['SUCCEEDED', 'FAILED'].includes(job.status), {
          timeoutMs: 240_000,
          what: 'the end of the job',
        });
        expect(done.job.status, await diagnose(e, jobId)).toBe('SUCCEEDED');
        expect(e.faultPoints.some((p) => p.info.jobId === jobId && p.point === point && p.fired)).toBe(true);
        const key = idempotencyKeyOf(done.job, 'create-draft');
        expect(await draftsOf(key), jobId).toBe(1);
        // The job's own draft is its evidence, never an earlier one with the same title.
        const completed = ofType(done.entries, 'step-completed').find((x) => x.step === 'create-draft');
        const mine = await wp.posts.list({ status: 'draft', contentContains: `Ref: ${key}` });
        expect(completed?.evidence?.postId).toBe(mine[0]?.id);
      }
    } finally {
      await child.kill();
      if (restarted) await stopEngineStack(restarted);
      else {
        const left = await leftoverProcesses(new Set(), dataDir, 0);
        for (const p of left) process.kill(p.pid, 'SIGKILL');
      }
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 900_000);
});
