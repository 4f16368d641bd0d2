import { readFileSync } from 'node:fs';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  GetExecutionHistoryCommand,
  InvalidToken,
  ListExecutionsCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSfnServer, startLocalSfnServer } from '../../../local/sfn/http.ts';
import { createLocalStepFunctions, type LocalStepFunctions } from '../../../local/sfn/runner.ts';

const definition = readFileSync(
  new URL('../../fixtures/local-sfn/callback.asl.json', import.meta.url),
  'utf8',
);
const notified = new Map<string, Record<string, unknown>>();

let sfn: LocalStepFunctions;
let server: LocalSfnServer;
let client: SFNClient;

beforeAll(async () => {
  sfn = createLocalStepFunctions({
    definition,
    substitutions: { NotifyFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:notify' },
    invoke: async (_arn, payload) => {
      const p = payload as Record<string, unknown>;
      notified.set(String(p.jobId), p);
      return { notified: true };
    },
    waitTimeOverrides: { Pause: 0 },
  });
  server = await startLocalSfnServer(sfn, { port: 0 });
  client = new SFNClient({
    endpoint: server.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});

afterAll(async () => {
  client?.destroy();
  await server?.stop();
  await sfn?.shutdown();
});

async function start(name: string, input: Record<string, unknown>): Promise<string> {
  const r = await client.send(
    new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn, name, input: JSON.stringify(input) }),
  );
  return r.executionArn ?? '';
}

async function tokenOf(jobId: string): Promise<string> {
  const end = Date.now() + 5000;
  while (!notified.has(jobId)) {
    if (Date.now() > end) throw new Error(`no notification for ${jobId}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return String(notified.get(jobId)?.taskToken);
}

async function finished(executionArn: string) {
  await sfn.waitForExecution(executionArn, 10_000);
  return client.send(new DescribeExecutionCommand({ executionArn }));
}

describe('Function: startLocalSfnServer with the real SFNClient', () => {
  it('resumes a waitForTaskToken state with SendTaskSuccess output', async () => {
    const executionArn = await start('approve-1', { mode: 'approve' });
    const token = await tokenOf('approve-1');
    expect(notified.get('approve-1')).toMatchObject({
      kind: 'approval',
      jobId: 'approve-1',
      input: { mode: 'approve' },
    });
    await client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{"approvedBy":"ana"}' }));
    const d = await finished(executionArn);
    expect(d.status).toBe('SUCCEEDED');
    expect(d.startDate).toBeInstanceOf(Date);
    expect(JSON.parse(d.output ?? '')).toEqual({ mode: 'approve', decision: { approvedBy: 'ana' } });
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    const types = history.events?.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(['TaskScheduled', 'TaskSubmitted', 'TaskSucceeded', 'ExecutionSucceeded']),
    );
    const succeeded = history.events?.find((e) => e.type === 'TaskSucceeded');
    expect(succeeded?.taskSucceededEventDetails?.output).toBe('{"approvedBy":"ana"}');
    expect(succeeded?.timestamp).toBeInstanceOf(Date);
    // The token is spent.
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toThrow(
      TaskTimedOut,
    );
  });

  it('routes SendTaskFailure to the Catch of its error', async () => {
    const executionArn = await start('reject-1', { mode: 'approve' });
    const token = await tokenOf('reject-1');
    await client.send(
      new SendTaskFailureCommand({ taskToken: token, error: 'Rejected', cause: 'not today' }),
    );
    const d = await finished(executionArn);
    expect(d.status).toBe('SUCCEEDED');
    expect(JSON.parse(d.output ?? '').error).toEqual({ Error: 'Rejected', Cause: 'not today' });
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn, reverseOrder: true }));
    expect(history.events?.[0]?.type).toBe('ExecutionSucceeded');
    expect(history.events?.find((e) => e.type === 'PassStateEntered')?.stateEnteredEventDetails?.name).toBe(
      'WasRejected',
    );
  });

  it('fails a callback task with States.Timeout after its TimeoutSeconds', async () => {
    const executionArn = await start('short-1', { mode: 'short' });
    const token = await tokenOf('short-1');
    const d = await finished(executionArn);
    expect(d).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    const timedOut = history.events?.find((e) => e.type === 'TaskTimedOut');
    expect(timedOut?.taskTimedOutEventDetails?.error).toBe('States.Timeout');
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toThrow(
      TaskTimedOut,
    );
  });

  it('keeps a task alive with heartbeats and fails it with States.HeartbeatTimeout without them', async () => {
    const executionArn = await start('heartbeat-1', { mode: 'heartbeat' });
    const token = await tokenOf('heartbeat-1');
    const started = Date.now();
    while (Date.now() - started < 1600) {
      await client.send(new SendTaskHeartbeatCommand({ taskToken: token }));
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(sfn.describeExecution(executionArn).status).toBe('RUNNING');
    const d = await finished(executionArn);
    expect(d).toMatchObject({ status: 'FAILED', error: 'States.HeartbeatTimeout' });
    await expect(client.send(new SendTaskHeartbeatCommand({ taskToken: token }))).rejects.toThrow(
      TaskTimedOut,
    );
  });

  it('answers bad tokens and unknown executions with the AWS error types', async () => {
    await expect(
      client.send(new SendTaskSuccessCommand({ taskToken: 'not-a-token', output: '{}' })),
    ).rejects.toThrow(InvalidToken);
    await expect(
      client.send(new SendTaskSuccessCommand({ taskToken: `AQB${'A'.repeat(64)}`, output: '{}' })),
    ).rejects.toThrow(TaskDoesNotExist);
    await expect(
      client.send(
        new DescribeExecutionCommand({
          executionArn: `${sfn.stateMachineArn}:nope`.replace('stateMachine', 'execution'),
        }),
      ),
    ).rejects.toThrow(ExecutionDoesNotExist);
  });

  it('treats a duplicate execution name as AWS does', async () => {
    const arn = await start('dup-http', { mode: 'approve' });
    expect(await start('dup-http', { mode: 'approve' })).toBe(arn);
    const err = await start('dup-http', { mode: 'skip' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExecutionAlreadyExists);
    expect((err as ExecutionAlreadyExists).$metadata.httpStatusCode).toBe(400);
  });

  it('stops an execution and invalidates its token', async () => {
    const executionArn = await start('stop-http', { mode: 'approve' });
    const token = await tokenOf('stop-http');
    const stopped = await client.send(
      new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: 'user' }),
    );
    expect(stopped.stopDate).toBeInstanceOf(Date);
    const d = await finished(executionArn);
    expect(d).toMatchObject({ status: 'ABORTED', error: 'Cancelled', cause: 'user' });
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toThrow(
      TaskTimedOut,
    );
    const list = await client.send(
      new ListExecutionsCommand({ stateMachineArn: sfn.stateMachineArn, statusFilter: 'ABORTED' }),
    );
    expect(list.executions?.map((e) => e.name)).toContain('stop-http');
    expect(list.executions?.every((e) => e.status === 'ABORTED')).toBe(true);
  });

  it('answers an unknown operation and a body that is not a JSON object as Step Functions does (AWS JSON 1.0)', async () => {
    const raw = async (target: string, body: string) => {
      const res = await fetch(server.endpoint, {
        method: 'POST',
        headers: { 'x-amz-target': target, 'content-type': 'application/x-amz-json-1.0' },
        body,
      });
      return { status: res.status, json: await res.json(), type: res.headers.get('content-type') };
    };
    expect(await raw('AWSStepFunctions.CreateStateMachine', '{}')).toEqual({
      status: 400,
      json: {
        __type: 'UnknownOperationException',
        message: 'Unknown operation AWSStepFunctions.CreateStateMachine',
      },
      type: 'application/x-amz-json-1.0',
    });
    for (const body of ['{not json', '[1]', 'null']) {
      expect(await raw('AWSStepFunctions.ListExecutions', body)).toEqual({
        status: 400,
        json: { __type: 'ValidationException', message: 'Malformed JSON body' },
        type: 'application/x-amz-json-1.0',
      });
    }
  });
});
