/**
 * One death reported three times at once: EventBridge delivers the status change twice (it
 * delivers at least once) while the scheduled sweep finds the same job. The recovery's core runs
 * in this process against DynamoDB Local, with a browser and executions kept in memory. All three
 * read the job before any of them writes; one goes on alone, and the other two go on only once
 * the next generation has started and opened its session, with the job as they read it. Exactly
 * one may write `recovered`, release what the dead execution held and start the next generation;
 * the session that generation opens must stay alive.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionControl, ExecutionState } from '../../../lambdas/lib/engine/execution-control.ts';
import { executionName } from '../../../lambdas/lib/engine/executions.ts';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import type { Step } from '../../../lambdas/lib/playbooks/contract.ts';
import {
  DEFAULT_RECOVERY_SETTINGS,
  handleRecoveryEvent,
  type RecoverDeps,
} from '../../../lambdas/recover/recover.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { depsFor, fakeBrowser, oneWritePlaybook, runningJob } from '../../support/in-process.ts';
import { newId } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenantId = newId('tenant');
let ledger: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

const submit: Step = {
  id: 'submit',
  title: 'Submit',
  kind: 'write',
  app: 'site',
  precondition: async () => ({ ok: true }),
  restore: async () => undefined,
  run: async () => undefined,
  verify: async () => null,
  probe: async () => ({ status: 'absent' }),
} as unknown as Step;

interface Session {
  tags: Record<string, string>;
  ended: boolean;
}

describe('Recovery: one death reported by two events and the sweep at once', () => {
  it('writes one recovered entry, starts one execution, and leaves the new generation its session', async () => {
    const jobId = await runningJob(ledger, tenantId, 'report@1');
    const { job } = await ledger.readJob(tenantId, jobId);
    const dead = executionName(job, 0);
    const sessions = new Map<string, Session>([
      [`${jobId}-s`, { tags: { tenantId, jobId, application: 'site' }, ended: false }],
    ]);
    const browser = {
      ...fakeBrowser(),
      endSession: async (id: string) => {
        const s = sessions.get(id);
        if (s) s.ended = true;
      },
      runningSessions: async (tags: Record<string, string>) =>
        [...sessions.entries()]
          .filter(([, s]) => !s.ended && Object.entries(tags).every(([k, v]) => s.tags[k] === v))
          .map(([id]) => id),
    };
    const engine = depsFor(ledger, oneWritePlaybook(submit), browser);

    // The three read the job before anyone writes; the first goes on, the others after the start.
    const states = new Map<string, ExecutionState>([[dead, { name: dead, status: 'ABORTED' }]]);
    const gate = (): { promise: Promise<void>; open: () => void } => {
      let open: () => void = () => undefined;
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      return { promise, open };
    };
    const allRead = gate();
    const startDone = gate();
    const bounded = (p: Promise<void>): Promise<unknown> =>
      Promise.race([p, new Promise((r) => setTimeout(r, 5_000))]);
    let reads = 0;
    const readJob = engine.ledger.readJob.bind(engine.ledger);
    engine.ledger = {
      ...engine.ledger,
      readJob: async (t: string, j: string) => {
        const read = await readJob(t, j);
        const ticket = ++reads;
        if (ticket > 3) return read;
        if (ticket === 3) allRead.open();
        await bounded(allRead.promise);
        if (ticket > 1) await bounded(startDone.promise);
        return read;
      },
    };
    const started: string[] = [];
    let newSession = '';
    const executions: ExecutionControl = {
      async describe(name) {
        return states.get(name);
      },
      async runningNames() {
        return new Set([...states.values()].filter((s) => s.status === 'RUNNING').map((s) => s.name));
      },
      async start(name) {
        if (states.has(name)) return 'exists';
        states.set(name, { name, status: 'RUNNING' });
        started.push(name);
        // The next generation opens its own session at once (OpenSession), tagged with the job.
        newSession = `${jobId}-g1`;
        sessions.set(newSession, { tags: { tenantId, jobId, application: 'site' }, ended: false });
        const current = await ledger.getJob(tenantId, jobId);
        await ledger.updateJob(tenantId, jobId, {
          expectedVersion: current.version,
          set: { sessions: { site: { sessionId: newSession, openedAt: new Date().toISOString() } } },
        });
        startDone.open();
        return 'started';
      },
    };
    const deps: RecoverDeps = {
      engine,
      executions,
      settings: { ...DEFAULT_RECOVERY_SETTINGS, graceSeconds: 0 },
    };
    const statusChange = {
      'detail-type': 'Step Functions Execution Status Change' as const,
      source: 'aws.states' as const,
      detail: { name: dead, status: 'ABORTED', input: JSON.stringify({ tenantId, jobId }) },
    };

    await Promise.all([
      handleRecoveryEvent(deps, statusChange),
      handleRecoveryEvent(deps, statusChange),
      handleRecoveryEvent(deps, { 'detail-type': 'Scheduled Event', source: 'aws.events' }),
    ]);

    const { job: after, entries } = await ledger.readJob(tenantId, jobId);
    expect(entries.filter((e) => e.type === 'recovered')).toHaveLength(1);
    expect(started).toEqual([executionName(job, 1)]);
    expect(after.executionName).toBe(executionName(job, 1));
    // The dead execution's session was ended, the new generation's was not.
    expect(sessions.get(`${jobId}-s`)?.ended).toBe(true);
    expect(sessions.get(newSession)?.ended).toBe(false);
    expect(after.sessions.site?.sessionId).toBe(newSession);
  }, 60_000);
});
