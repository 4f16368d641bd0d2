/**
 * Playbooks written outside the repository, as a new user writes them: a folder in a temporary
 * directory (a TypeScript playbook importing only `belay/sdk` and `zod`, and a declarative one)
 * and a site of one's own, run through the local stack with `--playbooks` and `--applications`
 * and the public HTTP API (connect an account, submit, poll), with no file of the project changed.
 * And `npm start` refusing, before it starts anything, a playbook folder with two playbooks of
 * one id or an invalid playbook, and a bad `--applications`, naming the file or the field.
 */
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStackProcess } from '../../support/child-stack.ts';
import { type ExpensesSite, startExpensesSite } from '../../support/expenses-site.ts';
import { sleep } from '../../support/fixtures.ts';
import { killQuietly, leftoverProcesses, runToExit } from '../../support/processes.ts';
import { call } from '../api/support/http.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const FIXTURES = join(REPO, 'test', 'fixtures');
const USER = { username: 'ada@example.com', password: 'expenses-pass-1' };

let tmp: string;
let site: ExpensesSite;
let stack: Awaited<ReturnType<typeof startStackProcess>>;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'belay-outside-'));
  // The playbooks live in a folder of their own, outside the repository.
  await cp(join(FIXTURES, 'outside-playbooks'), join(tmp, 'my-playbooks'), { recursive: true });
  await mkdir(join(tmp, 'data'));
  site = await startExpensesSite({ [USER.username]: USER.password });
  stack = await startStackProcess(
    {
      dataDir: join(tmp, 'data'),
      ports: { anchor: 0, shop: 0, crm: 0, billing: 0, dynamodb: 0, sfn: 0 },
      apiPort: 0,
      resume: false,
      playbookDirs: [join(tmp, 'my-playbooks')],
      applications: { expenses: { baseUrl: site.baseUrl } },
    },
    180_000,
  );
}, 200_000);

afterAll(async () => {
  const { child, exited } = stack ?? {};
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  if (exited) {
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000));
    if ((await Promise.race([exited, timeout])) === 'timeout') child?.kill('SIGKILL');
  }
  await site?.stop();
  if (stack) {
    const left = await leftoverProcesses(new Set(child?.pid ? [child.pid] : []), join(tmp, 'data'));
    for (const p of left) killQuietly(p.pid);
    expect(left.map((p) => p.cmdline.slice(0, 120))).toEqual([]);
  }
  await rm(tmp, { recursive: true, force: true });
}, 90_000);

const api = (method: string, path: string, body?: unknown) =>
  call(stack.info.apiUrl, method, path, {
    key: stack.info.demoApiKey,
    ...(body === undefined ? {} : { body }),
  });

async function finished(jobId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const job = (await api('GET', `/jobs/${jobId}`)).json?.job as Record<string, unknown>;
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(String(job?.status))) return job;
    if (Date.now() > deadline)
      throw new Error(`${jobId} did not finish: ${JSON.stringify(job).slice(0, 500)}`);
    await sleep(300);
  }
}

describe('Playbooks from a folder outside the repository', () => {
  let accountId: string;

  it('connects an account at a site of its own', async () => {
    const res = await api('POST', '/accounts', {
      application: 'expenses',
      label: 'Expenses (Ada)',
      credentials: USER,
    });
    expect(res.status).toBe(201);
    accountId = res.json.account.accountId as string;
    expect(accountId).toBeTruthy();
  });

  it('lists the outside playbooks (steps, inputs as JSON Schema) and the configured application', async () => {
    const listed = await api('GET', '/playbooks');
    expect(listed.status).toBe(200);
    const byId = Object.fromEntries(
      (listed.json.playbooks as { id: string }[]).map((p) => [p.id, p as Record<string, unknown>]),
    );
    expect(Object.keys(byId)).toEqual(
      expect.arrayContaining(['checkout@1', 'expenses@1', 'expense-report@1']),
    );
    expect(byId['expenses@1']?.steps).toEqual([
      { id: 'sign-in', title: 'Sign in to expenses', kind: 'read', app: 'expenses', needsApproval: false },
      {
        id: 'create-report',
        title: 'Create the report',
        kind: 'write',
        app: 'expenses',
        needsApproval: false,
      },
      { id: 'add-line', title: 'Add the line', kind: 'write', app: 'expenses', needsApproval: false },
    ]);
    expect(byId['expenses@1']?.inputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['title', 'line', 'amount']),
      properties: { title: { type: 'string', minLength: 1 } },
    });
    expect(byId['expense-report@1']?.inputSchema).toMatchObject({ required: ['title'] });
    const one = await api('GET', '/playbooks/expense-report@1');
    expect(one.json.playbook.id).toBe('expense-report@1');
    expect((await api('GET', '/playbooks/nope@1')).status).toBe(404);

    const apps = await api('GET', '/applications');
    expect(apps.status).toBe(200);
    const names = (apps.json.applications as { name: string; baseUrl: string }[]).map((a) => [
      a.name,
      a.baseUrl,
    ]);
    expect(names).toContainEqual(['expenses', site.baseUrl]);
    expect(names.map(([n]) => n)).toEqual(expect.arrayContaining(['shop', 'crm', 'billing']));
  });

  it('runs a TypeScript playbook importing only belay/sdk to SUCCEEDED: one report, one line', async () => {
    const submitted = await api('POST', '/jobs', {
      jobId: 'outside-ts',
      playbook: 'expenses@1',
      inputs: { title: 'Trip to Leeds', line: 'Train', amount: '42.50' },
      accounts: { expenses: accountId },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const job = await finished('outside-ts');
    expect(job.status, JSON.stringify(job).slice(0, 800)).toBe('SUCCEEDED');
    const reports = site.reports().filter((r) => r.title === 'Trip to Leeds');
    expect(reports).toHaveLength(1);
    // The line went to the report the earlier step made (its id from that step's evidence).
    expect(reports[0]?.lines.map((l) => [l.description, l.amount])).toEqual([['Train', '42.50']]);
  }, 200_000);

  it('runs a declarative playbook to SUCCEEDED: one report', async () => {
    const submitted = await api('POST', '/jobs', {
      jobId: 'outside-yaml',
      playbook: 'expense-report@1',
      inputs: { title: 'Conference' },
      accounts: { expenses: accountId },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const job = await finished('outside-yaml');
    expect(job.status, JSON.stringify(job).slice(0, 800)).toBe('SUCCEEDED');
    expect(site.reports().filter((r) => r.title === 'Conference')).toHaveLength(1);
  }, 200_000);

  it('runs the demo declarative playbook crm-address@1 on the demo CRM to SUCCEEDED, its write verified with evidence', async () => {
    const listed = (await api('GET', '/playbooks/crm-address@1')).json.playbook;
    const submitted = await api('POST', '/jobs', {
      jobId: 'declarative-crm',
      playbook: 'crm-address@1',
      inputs: listed.exampleInputs,
      accounts: { crm: 'acct_demo_crm' },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const job = await finished('declarative-crm');
    expect(job.status, JSON.stringify(job).slice(0, 800)).toBe('SUCCEEDED');
    const ledger = (await api('GET', '/jobs/declarative-crm/ledger')).json.entries as {
      type: string;
      step?: string;
      evidence?: Record<string, unknown>;
    }[];
    const done = (step: string) => ledger.findLast((e) => e.type === 'step-completed' && e.step === step);
    expect(done('update-crm-address')?.evidence).toMatchObject({
      customerId: expect.any(String),
      version: expect.any(Number),
    });
    expect(done('verify-crm-address')?.evidence).toMatchObject({
      customerId: done('update-crm-address')?.evidence?.customerId,
      addressMatches: true,
    });
  }, 200_000);

  it("neither lists nor runs another tenant's playbook", async () => {
    const listed = (await api('GET', '/playbooks')).json.playbooks as { id: string }[];
    expect(listed.map((p) => p.id)).not.toContain('private@1');
    expect((await api('GET', '/playbooks/private@1')).status).toBe(404);
    const res = await api('POST', '/jobs', {
      jobId: 'outside-private',
      playbook: 'private@1',
      inputs: {},
      accounts: { expenses: accountId },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error.code).toBe('unknown_playbook');
  });

  it('refuses inputs that do not fit the declarative playbook, naming the field', async () => {
    const res = await api('POST', '/jobs', {
      jobId: 'outside-bad',
      playbook: 'expense-report@1',
      inputs: { title: '' },
      accounts: { expenses: accountId },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.text).toContain('title');
  });
});

/** `npm start` with these arguments: its exit code and what it printed (it must stop by itself). */
async function npmStart(args: string[]): Promise<{ code: number; output: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'belay-start-'));
  try {
    return await runToExit(
      ['--import', 'tsx', 'local/main.ts', '--data-dir', dataDir, '--port', '0', ...args],
      {
        cwd: REPO,
        timeoutMs: 60_000,
      },
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

describe('npm start refuses bad playbooks and applications before it starts anything', () => {
  it('two playbooks with one id: both files named', async () => {
    const pb = join(FIXTURES, 'playbooks');
    const { code, output } = await npmStart(['--playbooks', join(pb, 'ok'), '--playbooks', join(pb, 'dup')]);
    expect(code).not.toBe(0);
    expect(output).toContain('test/fixtures/playbooks/ok/tiny/index.ts');
    expect(output).toContain('test/fixtures/playbooks/dup/tiny/index.ts');
    expect(output).not.toContain('starting DynamoDB Local');
  }, 70_000);

  it('an invalid declarative playbook: its file, line and field named', async () => {
    const { code, output } = await npmStart(['--playbooks', join(FIXTURES, 'playbooks', 'bad-yaml')]);
    expect(code).not.toBe(0);
    expect(output).toContain('test/fixtures/playbooks/bad-yaml/broken.playbook.yaml');
    expect(output).toContain('line 24, column 9: steps[0].actions[1]');
  }, 70_000);

  it('a bad --applications value: the field named', async () => {
    const { code, output } = await npmStart(['--applications', '{"expenses":{"baseUrl":"ftp://x"}}']);
    expect(code).not.toBe(0);
    expect(output).toContain('--applications: expenses.baseUrl: must be an http or https URL');
  }, 70_000);
});
