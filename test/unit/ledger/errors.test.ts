import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createLedger,
  IllegalTransitionError,
  JobConflictError,
  JobNotFoundError,
  type Ledger,
  LedgerError,
  LedgerUnavailableError,
  StaleCheckpointError,
  translateError,
} from '../../../lambdas/lib/ledger/index.ts';
import { jobRequest } from '../../support/ledger.ts';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'local' }));
const ddb = mockClient(doc);
let ledger: Ledger;
const meta = { $metadata: {} };

/** The raw (marshalled) job item DynamoDB returns with ReturnValuesOnConditionCheckFailure: ALL_OLD. */
function rawJob(fields: {
  status: string;
  version: number;
  nextStep?: number;
  expiresAt?: number;
  requestHash?: string;
}) {
  const item: Record<string, AttributeValue> = {
    pk: { S: 'T#t1#J#j1' },
    sk: { S: 'JOB' },
    status: { S: fields.status },
    version: { N: String(fields.version) },
    nextStep: { N: String(fields.nextStep ?? 0) },
    stepCount: { N: '3' },
  };
  if (fields.expiresAt !== undefined) item.expiresAt = { N: String(fields.expiresAt) };
  if (fields.requestHash !== undefined) item.requestHash = { S: fields.requestHash };
  return item;
}

function cancelled(
  reasons: { Code: string; Item?: Record<string, AttributeValue> }[],
): TransactionCanceledException {
  return new TransactionCanceledException({
    message: 'Transaction cancelled',
    CancellationReasons: reasons,
    ...meta,
  });
}

const completion = {
  tenantId: 't1',
  jobId: 'j1',
  expectedVersion: 4,
  stepIndex: 1,
  step: 'add-to-cart',
  attempt: 1,
  evidence: { ok: true },
  cost: { lambdaMs: 10 },
};

beforeEach(() => {
  ddb.reset();
  ledger = createLedger({ doc, tableName: 'ledger' });
});

describe('Function: completeStep (error translation)', () => {
  it('sends ONE transaction: the entry and the guarded pointer update', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    ddb
      .on(GetCommand)
      .resolves({ Item: { pk: 'T#t1#J#j1', sk: 'JOB', jobId: 'j1', version: 5, nextStep: 2 } });
    await ledger.completeStep(completion);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    const input = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input;
    const update = input?.TransactItems?.[0]?.Update;
    expect(update?.ConditionExpression).toContain('#version = :');
    expect(update?.ConditionExpression).toContain('#nextStep = :');
    expect(update?.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expect(input?.TransactItems?.[1]?.Put?.Item).toMatchObject({ type: 'step-completed', stepIndex: 1 });
  });

  it('turns a refused condition into StaleCheckpointError with what the job held', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(
        cancelled([
          { Code: 'ConditionalCheckFailed', Item: rawJob({ status: 'RUNNING', version: 5, nextStep: 2 }) },
          { Code: 'None' },
        ]),
      );
    const attempt = ledger.completeStep(completion);
    await expect(attempt).rejects.toBeInstanceOf(StaleCheckpointError);
    await expect(attempt).rejects.toMatchObject({
      jobId: 'j1',
      stepIndex: 1,
      expectedVersion: 4,
      observed: { status: 'RUNNING', version: 5, nextStep: 2 },
    });
  });

  it('turns a refused condition on a missing job into JobNotFoundError', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled([{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }]));
    await expect(ledger.completeStep(completion)).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('turns a refused condition on an expired job into JobNotFoundError', async () => {
    const item = rawJob({ status: 'SUCCEEDED', version: 4, nextStep: 1, expiresAt: 1000 });
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled([{ Code: 'ConditionalCheckFailed', Item: item }, { Code: 'None' }]));
    await expect(ledger.completeStep(completion)).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('retries a transaction cancelled only by a conflicting transaction', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled([{ Code: 'TransactionConflict' }, { Code: 'None' }]))
      .resolves({});
    ddb.on(GetCommand).resolves({ Item: { pk: 'T#t1#J#j1', sk: 'JOB', jobId: 'j1', version: 5 } });
    await expect(ledger.completeStep(completion)).resolves.toMatchObject({ version: 5 });
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
  });

  it('gives up on a transaction that keeps conflicting with LedgerUnavailableError', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled([{ Code: 'TransactionConflict' }, { Code: 'None' }]));
    await expect(ledger.completeStep(completion)).rejects.toBeInstanceOf(LedgerUnavailableError);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 5);
  });

  it('turns a throttled transaction into LedgerUnavailableError', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled([{ Code: 'ThrottlingError' }, { Code: 'None' }]));
    await expect(ledger.completeStep(completion)).rejects.toBeInstanceOf(LedgerUnavailableError);
  });
});

describe('Function: transition and createJob (error translation)', () => {
  it('turns a refused status condition into IllegalTransitionError from the status the job had', async () => {
    const item = rawJob({ status: 'SUCCEEDED', version: 7 });
    ddb.on(TransactWriteCommand).rejects(cancelled([{ Code: 'ConditionalCheckFailed', Item: item }]));
    const attempt = ledger.transition('t1', 'j1', 'RUNNING');
    await expect(attempt).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(attempt).rejects.toMatchObject({ from: 'SUCCEEDED', to: 'RUNNING' });
  });

  it('turns a refused condition on a job already in the target status into a no-op that returns it', async () => {
    const item = rawJob({ status: 'RUNNING', version: 3 });
    ddb.on(TransactWriteCommand).rejects(cancelled([{ Code: 'ConditionalCheckFailed', Item: item }]));
    ddb
      .on(GetCommand)
      .resolves({ Item: { pk: 'T#t1#J#j1', sk: 'JOB', jobId: 'j1', status: 'RUNNING', version: 3 } });
    await expect(ledger.transition('t1', 'j1', 'RUNNING')).resolves.toEqual({
      jobId: 'j1',
      status: 'RUNNING',
      version: 3,
    });
  });

  it('sends every job write as a transaction with a client request token (idempotent SDK retries)', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(GetCommand).resolves({ Item: { pk: 'T#t1#J#j1', sk: 'JOB', jobId: 'j1', version: 2 } });
    await ledger.updateJob('t1', 'j1', { addCost: { lambdaMs: 5 } });
    await ledger.transition('t1', 'j1', 'RUNNING');
    const tokens = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.ClientRequestToken);
    expect(tokens).toHaveLength(2);
    expect(new Set(tokens).size).toBe(2);
    expect(tokens.every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
  });

  it('turns a refused create with another request hash into JobConflictError', async () => {
    const item = rawJob({ status: 'QUEUED', version: 1, requestHash: 'f'.repeat(64) });
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled([{ Code: 'ConditionalCheckFailed', Item: item }, { Code: 'None' }]));
    await expect(ledger.createJob('t1', 'j1', jobRequest(), 3)).rejects.toBeInstanceOf(JobConflictError);
  });

  it('turns a refused create with the same request hash into the existing job', async () => {
    ddb
      .on(TransactWriteCommand)
      .callsFake((input: { TransactItems: { Put?: { Item: Record<string, unknown> } }[] }) => {
        const hash = String(input.TransactItems[0]?.Put?.Item.requestHash);
        throw cancelled([
          {
            Code: 'ConditionalCheckFailed',
            Item: rawJob({ status: 'RUNNING', version: 2, requestHash: hash }),
          },
          { Code: 'None' },
        ]);
      });
    ddb
      .on(GetCommand)
      .resolves({ Item: { pk: 'T#t1#J#j1', sk: 'JOB', jobId: 'j1', status: 'RUNNING', version: 2 } });
    await expect(ledger.createJob('t1', 'j1', jobRequest(), 3)).resolves.toEqual({
      created: false,
      job: { jobId: 'j1', status: 'RUNNING', version: 2 },
    });
  });
});

describe('Function: translateError', () => {
  const network = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
  const serverError = Object.assign(new Error('Service Unavailable'), {
    name: 'UnknownError',
    $metadata: { httpStatusCode: 503 },
  });
  const throttling = Object.assign(new Error('Rate exceeded'), {
    name: 'ThrottlingException',
    $metadata: {},
  });

  it.each([
    [
      'ProvisionedThroughputExceededException',
      new ProvisionedThroughputExceededException({ message: 'slow down', ...meta }),
    ],
    ['RequestLimitExceeded', new RequestLimitExceeded({ message: 'limit', ...meta })],
    ['InternalServerError', new InternalServerError({ message: 'oops', ...meta })],
    ['ThrottlingException', throttling],
    ['a 503', serverError],
    ['ECONNREFUSED', network],
  ])('turns %s into the retryable LedgerUnavailableError, keeping the cause', (_name, err) => {
    const translated = translateError(err, { operation: 'readJob' });
    expect(translated).toBeInstanceOf(LedgerUnavailableError);
    expect(translated).toMatchObject({
      name: 'LedgerUnavailableError',
      retryable: true,
      operation: 'readJob',
    });
    expect(translated.cause).toBe(err);
  });

  it('explains a ConditionalCheckFailedException from the old item it carries', () => {
    const err = new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      Item: rawJob({ status: 'RUNNING', version: 9, nextStep: 4 }),
      ...meta,
    });
    const translated = translateError(err, {
      operation: 'completeStep',
      onConditionFailed: (s) =>
        new StaleCheckpointError('j1', 3, 8, {
          status: s?.status,
          version: s?.version,
          nextStep: s?.nextStep,
        }),
    });
    expect(translated).toBeInstanceOf(StaleCheckpointError);
    expect(translated).toMatchObject({ observed: { status: 'RUNNING', version: 9, nextStep: 4 } });
    expect(translated.cause).toBe(err);
    expect(translateError(err, { operation: 'completeStep' })).toBeInstanceOf(LedgerError);
  });

  it('turns a missing table into a non-retryable LedgerError', () => {
    const err = new ResourceNotFoundException({
      message: 'Cannot do operations on a non-existent table',
      ...meta,
    });
    const translated = translateError(err, { operation: 'getJob' });
    expect(translated).toBeInstanceOf(LedgerError);
    expect(translated).not.toBeInstanceOf(LedgerUnavailableError);
    expect(translated.message).toContain('non-existent table');
  });

  it('passes errors that are not from the SDK through unchanged', () => {
    const bug = new TypeError('x is undefined');
    expect(translateError(bug, { operation: 'append' })).toBe(bug);
  });

  it('translates errors of reads too (Query throttled during readJob)', async () => {
    ddb
      .on(QueryCommand)
      .rejects(new ProvisionedThroughputExceededException({ message: 'slow down', ...meta }));
    await expect(ledger.readJob('t1', 'j1')).rejects.toBeInstanceOf(LedgerUnavailableError);
    ddb.on(GetCommand).rejects(network);
    await expect(ledger.getJob('t1', 'j1')).rejects.toBeInstanceOf(LedgerUnavailableError);
  });
});
