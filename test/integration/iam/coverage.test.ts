/**
 * Every AWS call each handler can make, read from the code, is one the local enforcement checks:
 * for each handler (`lambdas/<name>/handler.ts`) the files its bundle is made of (esbuild's
 * metafile) are searched for the SDK commands they send (`new XCommand(`, the commands the
 * handlers take from `lambdas/lib/aws/sdk/`) and for the AI SDK's Bedrock provider (which signs
 * and sends with `fetch`). Each must map to the IAM requests AWS authorizes it by: a known
 * service's action on a concrete resource (DynamoDB's item calls with `dynamodb:LeadingKeys`). A
 * new command, client or service that the enforcement does not map fails here. The synthesized
 * template's condition keys and operators are ones the evaluator models, and the state machine's
 * role may invoke every task function, so the local stack holds the machine to its own policy.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { STATE_MACHINE_FUNCTIONS, type StateMachineFunction } from '../../../lambdas/lib/engine/functions.ts';
import { fetchRequests } from '../../../local/iam/fetch.ts';
import {
  invokeAsStateMachine,
  type ResourceFacts,
  type StackPolicies,
  stackPolicies,
  synthesizedTemplate,
} from '../../../local/iam/index.ts';
import { iamRequests } from '../../../local/iam/requests.ts';
import { LOCAL_FUNCTIONS, localFunctionArn } from '../../../local/stack-functions.ts';

const SDK_FOLDER = join('lambdas', 'lib', 'aws', 'sdk');
const FACTS: ResourceFacts = {
  region: 'us-east-1',
  account: '000000000000',
  tables: { ledger: { hashKey: 'pk', indexes: { gsi1: 'gsi1pk' } } },
  stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:jobs',
};

/** The SDK client each module of `lambdas/lib/aws/sdk/` is for (its `<Service>Client`). */
const CLIENT_OF: Record<string, string> = {
  'client-dynamodb.ts': 'DynamoDBClient',
  'lib-dynamodb.ts': 'DynamoDBClient',
  'client-sfn.ts': 'SFNClient',
  'client-secrets-manager.ts': 'SecretsManagerClient',
  'client-eventbridge.ts': 'EventBridgeClient',
  'client-s3.ts': 'S3Client',
};

/** The document client's commands send these DynamoDB operations. */
const DOCUMENT_OPERATIONS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  Query: 'Query',
  Scan: 'Scan',
  TransactWrite: 'TransactWriteItems',
  TransactGet: 'TransactGetItems',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
};

/** Services whose calls the enforcement maps to their own actions and resources. */
const MAPPED_SERVICES = ['dynamodb', 'states', 'secretsmanager', 'events', 's3', 'bedrock'];

/** DynamoDB's item-level actions: IAM authorizes each with the partition keys it touches. */
const ITEM_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:Query',
];

/** Calls IAM authorizes on no resource of their own (`*`), each with why. */
const NO_RESOURCE: Record<string, string> = {
  'states:ListExecutions': 'authorized on the state machine, which the request names',
};

/** A sample input with every field a mapping reads, so the request is as concrete as it can be. */
const SAMPLE = {
  TableName: 'ledger',
  Key: { pk: 'T#a#J#1', sk: 'JOB' },
  Item: { pk: 'T#a#J#1', sk: 'JOB' },
  KeyConditionExpression: 'pk = :pk',
  ExpressionAttributeValues: { ':pk': 'T#a#J#1' },
  TransactItems: [{ Put: { TableName: 'ledger', Item: { pk: 'T#a#J#1', sk: 'E#1' } } }],
  stateMachineArn: FACTS.stateMachineArn,
  executionArn: 'arn:aws:states:us-east-1:000000000000:execution:jobs:x',
  taskToken: 'token',
  SecretId: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:belay/a/b-x',
  Name: 'belay/a/b',
  Entries: [{ EventBusName: 'bus', Source: 'belay', DetailType: 'x', Detail: '{}' }],
  Bucket: 'screenshots',
  Key_: 'tenants/a/jobs/1/x.jpg',
};

/** Command name -> its client, from the SDK modules the handlers import. */
function sdkCommands(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of readdirSync(SDK_FOLDER)) {
    const client = CLIENT_OF[file];
    const text = readFileSync(join(SDK_FOLDER, file), 'utf8');
    const exported = /export const \{([^}]*)\} = sdk/.exec(text)?.[1] ?? '';
    for (const name of exported.split(',').map((n) => n.trim())) {
      if (!name.endsWith('Command')) continue;
      if (!client) throw new Error(`${file} exports ${name}, but this test knows no client for ${file}`);
      out.set(name, client);
    }
  }
  return out;
}

interface HandlerCalls {
  handler: string;
  sdk: { client: string; command: string }[];
  bedrock: boolean;
}

async function callsOf(entry: string, commands: Map<string, string>): Promise<HandlerCalls> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const sdk = new Map<string, { client: string; command: string }>();
  let bedrock = false;
  for (const input of Object.keys(result.metafile.inputs)) {
    if (!input.endsWith('.ts') || input.startsWith(SDK_FOLDER)) continue;
    const text = readFileSync(input, 'utf8');
    if (text.includes("'@ai-sdk/amazon-bedrock'")) bedrock = true;
    for (const m of text.matchAll(/\bnew\s+(\w+Command)\s*\(/g)) {
      const command = m[1] as string;
      const client = commands.get(command);
      if (client) sdk.set(command, { client, command });
    }
  }
  return { handler: entry, sdk: [...sdk.values()], bedrock };
}

function operationOf(client: string, command: string): string {
  const name = command.replace(/Command$/, '');
  return client === 'DynamoDBClient' ? (DOCUMENT_OPERATIONS[name] ?? name) : name;
}

describe('Local IAM: every AWS call of every handler is checked', () => {
  const handlers = readdirSync('lambdas', { withFileTypes: true })
    .filter((d) => d.isDirectory() && readdirSync(join('lambdas', d.name)).includes('handler.ts'))
    .map((d) => join('lambdas', d.name, 'handler.ts'));
  let calls: HandlerCalls[] = [];

  beforeAll(async () => {
    const commands = sdkCommands();
    calls = await Promise.all(handlers.map((h) => callsOf(h, commands)));
    // The list, for the reader of the test's output.
    for (const c of calls) {
      console.log(
        `${c.handler}: ${[...c.sdk.map((s) => `${s.client}.${s.command}`), ...(c.bedrock ? ['Bedrock Converse (fetch)'] : [])].join(', ') || 'no AWS call'}`,
      );
    }
  }, 120_000);

  it('finds the calls (the search is not blind)', () => {
    const all = calls.flatMap((c) => c.sdk.map((s) => s.command));
    expect(handlers.length).toBeGreaterThan(10);
    expect(all).toContain('TransactWriteCommand');
    expect(all).toContain('GetSecretValueCommand');
    expect(all).toContain('SendTaskSuccessCommand');
    expect(calls.some((c) => c.bedrock)).toBe(true);
  });

  it('maps each SDK call to a known service action on a concrete resource', () => {
    const gaps: string[] = [];
    for (const c of calls) {
      for (const { client, command } of c.sdk) {
        const operation = operationOf(client, command);
        const input = client === 'S3Client' ? { ...SAMPLE, Key: SAMPLE.Key_ } : SAMPLE;
        const requests = iamRequests(FACTS, client, `${operation}Command`, input);
        const where = `${c.handler}: ${client}.${command}`;
        if (requests.length === 0) gaps.push(`${where} maps to no IAM request`);
        for (const r of requests) {
          const service = r.action.split(':')[0] ?? '';
          if (!MAPPED_SERVICES.includes(service)) gaps.push(`${where}: ${r.action} is not a mapped service`);
          if (r.resource === '*' && !NO_RESOURCE[r.action]) gaps.push(`${where}: ${r.action} on no resource`);
          const itemCall = ITEM_ACTIONS.includes(r.action);
          if (itemCall && !r.context?.['dynamodb:LeadingKeys']?.length)
            gaps.push(`${where}: ${r.action} without dynamodb:LeadingKeys`);
        }
      }
    }
    expect(gaps).toEqual([]);
  });

  it("maps the AI SDK's Bedrock calls (sent with fetch) to bedrock:InvokeModel on the model", () => {
    const converse = fetchRequests(
      FACTS,
      new URL(
        'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
      ),
    );
    expect(converse?.requests).toEqual([
      {
        action: 'bedrock:InvokeModel',
        resource: 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0',
      },
    ]);
  });
});

describe('Local IAM: the template is modelled whole', () => {
  let policies: StackPolicies;

  beforeAll(async () => {
    policies = stackPolicies(await synthesizedTemplate(), {
      region: 'us-east-1',
      account: '000000000000',
      stackName: 'Belay',
      tableName: 'ledger',
      stateMachineArn: FACTS.stateMachineArn ?? '',
      functions: LOCAL_FUNCTIONS,
    });
  }, 180_000);

  it('uses only condition keys and operators the evaluator models', () => {
    const statements = [
      ...Object.values(policies.specs).flatMap((s) => s.policy.statements),
      ...(policies.stateMachine?.statements ?? []),
    ];
    const used = new Set<string>();
    for (const s of statements) {
      for (const [operator, block] of Object.entries(s.Condition ?? {})) {
        for (const key of Object.keys(block)) used.add(`${operator} ${key}`);
      }
    }
    expect([...used].sort()).toEqual(['ForAllValues:StringLike dynamodb:LeadingKeys']);
  });

  it("lets the state machine's role invoke every task function, and nothing else of the stack's", async () => {
    const machine = policies.stateMachine;
    if (!machine) throw new Error('the template has no state machine role');
    const invoked: string[] = [];
    const invoke = invokeAsStateMachine(machine, async (arn: string) => {
      invoked.push(arn);
    });
    const tasks = Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[];
    for (const name of tasks) await invoke(localFunctionArn(name));
    expect(invoked).toHaveLength(tasks.length);
    await expect(invoke(localFunctionArn('ApiHandler'))).rejects.toMatchObject({
      name: 'Lambda.AWSLambdaException',
    });
  });
});
