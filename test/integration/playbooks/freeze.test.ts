/**
 * `npm run playbook -- freeze` on the local stack: an agent job of crm-contact-decl@1 (the local
 * policy, real Chromium, the real ASL and RunStep) verifies; the command, run as a user runs it,
 * freezes that job's path into crm-contact-decl-frozen@1; a second stack loads the frozen file
 * from its folder and runs it for another customer with other values: the job succeeds with no
 * model decision and no model cost in its ledger, and the CRM commits exactly one write.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { agentCountersByStep } from '../../../lambdas/lib/agent/counters.ts';
import { submitJob } from '../../../lambdas/lib/api/jobs/submit.ts';
import { type EngineStack, startEngineStack, stopEngineStack } from '../../support/engine-stack.ts';
import { PERSON } from '../../support/fixtures.ts';
import { runToSuccess, submitContactAgent } from '../../support/jobs.ts';
import { runToExit } from '../../support/processes.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const SOURCE_JOB = 'freeze-source';
const FROZEN_JOB = 'frozen-run';
/** The frozen playbook's job: another customer, other values than the job it was frozen from. */
const OTHER = { customerId: 'C-1002', contactName: 'Omar Haddad-Reyes', phone: '+44 161 496 0777' };
const MODEL_ENTRIES = ['action-chosen', 'action-healed', 'action-refused', 'probe-answered'];

let tmp: string;
let engine: EngineStack | undefined;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'belay-freeze-'));
});

afterAll(async () => {
  if (engine) await stopEngineStack(engine);
  await rm(tmp, { recursive: true, force: true });
}, 120_000);

describe('npm run playbook -- freeze (crm-contact-decl@1 on the local stack)', () => {
  it("freezes an agent job's path; the frozen playbook runs for other inputs with no model and one write", {
    timeout: 420_000,
  }, async () => {
    // 1. The agent job, on a stack with the repository's playbooks.
    engine = await startEngineStack({ env: { BELAY_AGENT_LOCAL_LATENCY_MS: '0' } });
    await submitContactAgent(engine, {
      jobId: SOURCE_JOB,
      customerId: 'C-1003',
      contactName: 'Mei Chen-Frost',
      model: 'local',
      playbook: 'crm-contact-decl@1',
    });
    const source = await runToSuccess(engine, SOURCE_JOB, { timeoutMs: 180_000 });
    expect(source.entries.filter((e) => e.type === 'action-chosen').length).toBeGreaterThan(0);

    // 2. The command, reading that stack's ledger table.
    const out = join(tmp, 'frozen', 'crm-contact-decl-frozen.playbook.yaml');
    const { code, output } = await runToExit(
      [
        '--import',
        'tsx',
        'tools/playbook/main.ts',
        'freeze',
        'crm-contact-decl@1',
        '--job',
        SOURCE_JOB,
        '--out',
        out,
        '--table',
        engine.stack.env.TABLE_NAME as string,
        '--endpoint',
        engine.stack.env.DYNAMODB_ENDPOINT as string,
      ],
      { cwd: REPO, timeoutMs: 90_000 },
    );
    expect(code, output).toBe(0);
    expect(output).toContain('wrote crm-contact-decl-frozen@1 to');
    expect(output).toMatch(/update-contact: frozen, 3 actions from job freeze-source/);
    const text = await readFile(out, 'utf8');
    const frozen = parse(text) as { exampleInputs?: unknown; steps: Record<string, unknown>[] };
    expect(frozen.steps.map((s) => [s.id, 'agent' in s, 'actions' in s])).toEqual([
      ['crm-sign-in', false, false],
      ['update-contact', false, true],
    ]);
    // The source job's values are placeholders: none is in the steps.
    const steps = JSON.stringify(frozen.steps);
    for (const value of ['C-1003', 'Mei Chen-Frost', '+44 117 496 0999']) expect(steps).not.toContain(value);
    // The same data directory for the next stack: this process's metrics recorder keeps the file it opened there.
    const dataDir = engine.dataDir;
    await stopEngineStack(engine, { removeDataDir: false });
    engine = undefined;

    // 3. A new stack that loads the frozen file from its folder; the job names no model.
    engine = await startEngineStack({
      dataDir,
      resume: false,
      playbookDirs: [join(tmp, 'frozen')],
      env: { BELAY_AGENT_LOCAL_LATENCY_MS: '0' },
    });
    expect(engine.stack.playbooks.registry.get('crm-contact-decl-frozen@1').steps.map((s) => s.id)).toEqual([
      'crm-sign-in',
      'update-contact',
    ]);
    const writesBefore = (await engine.crm.writes()).count;
    await submitJob(
      engine.api,
      PERSON,
      {
        jobId: FROZEN_JOB,
        playbook: 'crm-contact-decl-frozen@1',
        inputs: OTHER,
        accounts: { crm: 'acct_demo_crm' },
      },
      undefined,
    );
    const { job, entries } = await runToSuccess(engine, FROZEN_JOB, { timeoutMs: 180_000 });
    expect(job.status).toBe('SUCCEEDED');
    // No model: no decision, no probe answer, no tokens, no model dollars, no agent counters.
    expect(entries.filter((e) => MODEL_ENTRIES.includes(e.type))).toEqual([]);
    expect(job.cost.modelTokens).toBe(0);
    expect(job.cost.modelUsd).toBe(0);
    expect(agentCountersByStep(entries)).toEqual({});
    const done = entries.filter((e) => e.type === 'step-completed' && e.step === 'update-contact');
    expect(done.map((e) => e.evidence)).toEqual([
      { customerId: OTHER.customerId, contact: OTHER.contactName, phone: OTHER.phone },
    ]);
    // The site's own count: exactly one committed write.
    expect((await engine.crm.writes()).count - writesBefore).toBe(1);
  });
});
