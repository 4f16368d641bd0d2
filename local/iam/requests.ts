/**
 * What IAM is asked for an SDK call: the action(s) and resource ARN(s) AWS authorizes the call
 * by, per the service authorization reference. A DynamoDB transaction is authorized item by
 * item under each item's own action (Put -> PutItem, Update -> UpdateItem, Delete -> DeleteItem,
 * ConditionCheck -> ConditionCheckItem), a Query on an index on the index's ARN, and every
 * item-level call carries `dynamodb:LeadingKeys`, the partition key values it touches.
 */
import { createHash } from 'node:crypto';
import type { IamRequest } from './evaluate.ts';
import type { ResourceFacts } from './policies.ts';

type Input = Record<string, unknown>;

/** SDK client name (`DynamoDBClient`) -> IAM service prefix. */
const PREFIXES: Record<string, string> = {
  DynamoDB: 'dynamodb',
  SFN: 'states',
  SecretsManager: 'secretsmanager',
  EventBridge: 'events',
  S3: 's3',
  BedrockRuntime: 'bedrock',
  Bedrock: 'bedrock',
  Lambda: 'lambda',
  CloudWatch: 'cloudwatch',
  CloudWatchLogs: 'logs',
  SQS: 'sqs',
  SNS: 'sns',
  KMS: 'kms',
  STS: 'sts',
  XRay: 'xray',
};

/** The service prefix of an SDK client (`DynamoDBClient` -> `dynamodb`), for actions it maps nothing special for. */
export function servicePrefix(clientName: string): string {
  const service = clientName.replace(/Client$/, '');
  return PREFIXES[service] ?? service.toLowerCase();
}

/** A key attribute's value, from the document client's plain form or the marshalled `{ S: ... }`. */
function keyText(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (value && typeof value === 'object') {
    const v = value as { S?: string; N?: string; B?: Uint8Array | string };
    if (v.S !== undefined) return v.S;
    if (v.N !== undefined) return v.N;
    if (v.B !== undefined) return typeof v.B === 'string' ? v.B : Buffer.from(v.B).toString('base64');
  }
  return undefined;
}

function tableArn(facts: ResourceFacts, table: string): string {
  return table.startsWith('arn:')
    ? table
    : `arn:aws:dynamodb:${facts.region}:${facts.account}:table/${table}`;
}

function tableName(table: string): string {
  return table.startsWith('arn:') ? (table.split('/')[1] ?? table) : table;
}

function leadingKeys(values: (string | undefined)[]): Record<string, string[]> {
  const present = values.filter((v): v is string => v !== undefined);
  return present.length > 0 ? { 'dynamodb:LeadingKeys': [...new Set(present)] } : {};
}

/** The partition key value of an item or key, by the table's key schema. */
function partitionOf(facts: ResourceFacts, table: string, item: unknown): string | undefined {
  const hashKey = facts.tables[tableName(table)]?.hashKey;
  if (!hashKey || !item || typeof item !== 'object') return undefined;
  return keyText((item as Record<string, unknown>)[hashKey]);
}

/** The partition key value a Query's key condition names (`#pk = :pk`). */
function queryPartition(facts: ResourceFacts, input: Input): string | undefined {
  const table = String(input.TableName ?? '');
  const schema = facts.tables[tableName(table)];
  const index = typeof input.IndexName === 'string' ? input.IndexName : undefined;
  const hashKey = index ? schema?.indexes[index] : schema?.hashKey;
  if (!hashKey) return undefined;
  const legacy = (input.KeyConditions as Record<string, { AttributeValueList?: unknown[] }> | undefined)?.[
    hashKey
  ];
  if (legacy) return keyText(legacy.AttributeValueList?.[0]);
  const expression = typeof input.KeyConditionExpression === 'string' ? input.KeyConditionExpression : '';
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const m of expression.matchAll(/([#\w.]+)\s*=\s*(:\w+)/g)) {
    const name = m[1]?.startsWith('#') ? names[m[1]] : m[1];
    if (name === hashKey) return keyText(values[m[2] as string]);
  }
  return undefined;
}

function dynamodb(facts: ResourceFacts, operation: string, input: Input): IamRequest[] {
  const action = (op: string): string => `dynamodb:${op}`;
  const onTable = (op: string, table: string, keys: (string | undefined)[]): IamRequest => ({
    action: action(op),
    resource: tableArn(facts, table),
    context: leadingKeys(keys),
  });
  const table = typeof input.TableName === 'string' ? input.TableName : undefined;
  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [onTable(operation, table ?? '', [partitionOf(facts, table ?? '', input.Key)])];
    case 'PutItem':
      return [onTable(operation, table ?? '', [partitionOf(facts, table ?? '', input.Item)])];
    case 'Query':
    case 'Scan': {
      const index = typeof input.IndexName === 'string' ? `/index/${input.IndexName}` : '';
      const keys = operation === 'Query' ? [queryPartition(facts, input)] : [];
      return [
        {
          action: action(operation),
          resource: tableArn(facts, table ?? '') + index,
          context: leadingKeys(keys),
        },
      ];
    }
    case 'TransactWriteItems':
      return ((input.TransactItems ?? []) as Record<string, Input>[]).flatMap((item) => {
        const [[kind, op] = ['', {}]] = Object.entries(item);
        const name = String(op.TableName ?? '');
        const itemAction: Record<string, string> = {
          Put: 'PutItem',
          Update: 'UpdateItem',
          Delete: 'DeleteItem',
          ConditionCheck: 'ConditionCheckItem',
        };
        return [onTable(itemAction[kind] ?? kind, name, [partitionOf(facts, name, op.Item ?? op.Key)])];
      });
    case 'TransactGetItems':
      return ((input.TransactItems ?? []) as { Get?: Input }[]).map((item) => {
        const name = String(item.Get?.TableName ?? '');
        return onTable('GetItem', name, [partitionOf(facts, name, item.Get?.Key)]);
      });
    case 'BatchGetItem':
      return Object.entries((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).map(
        ([name, req]) =>
          onTable(
            'BatchGetItem',
            name,
            (req.Keys ?? []).map((k) => partitionOf(facts, name, k)),
          ),
      );
    case 'BatchWriteItem':
      return Object.entries((input.RequestItems ?? {}) as Record<string, Input[]>).map(([name, reqs]) =>
        onTable(
          'BatchWriteItem',
          name,
          reqs.map((r) =>
            partitionOf(
              facts,
              name,
              (r.PutRequest as Input | undefined)?.Item ?? (r.DeleteRequest as Input | undefined)?.Key,
            ),
          ),
        ),
      );
    default:
      return [{ action: action(operation), resource: table ? tableArn(facts, table) : '*' }];
  }
}

function states(facts: ResourceFacts, operation: string, input: Input): IamRequest[] {
  const action = `states:${operation}`;
  const text = (key: string): string | undefined => (typeof input[key] === 'string' ? input[key] : undefined);
  if (operation.startsWith('SendTask')) return [{ action, resource: facts.stateMachineArn ?? '*' }];
  const resource = text('executionArn') ?? text('stateMachineArn') ?? text('activityArn') ?? '*';
  return [{ action, resource }];
}

/** A secret's ARN from a name or ARN; a name gets the six-character suffix Secrets Manager adds. */
function secretArn(facts: ResourceFacts, id: string): string {
  if (id.startsWith('arn:')) return id;
  const suffix = createHash('sha256').update(id).digest('base64url').replace(/[-_]/g, 'x').slice(0, 6);
  return `arn:aws:secretsmanager:${facts.region}:${facts.account}:secret:${id}-${suffix}`;
}

function secretsmanager(facts: ResourceFacts, operation: string, input: Input): IamRequest[] {
  const id = input.SecretId ?? input.Name;
  return [
    { action: `secretsmanager:${operation}`, resource: typeof id === 'string' ? secretArn(facts, id) : '*' },
  ];
}

function events(facts: ResourceFacts, operation: string, input: Input): IamRequest[] {
  if (operation !== 'PutEvents') return [{ action: `events:${operation}`, resource: '*' }];
  const buses = new Set(
    ((input.Entries ?? []) as { EventBusName?: string }[]).map((e) => e.EventBusName || 'default'),
  );
  return [...buses].map((bus) => ({
    action: 'events:PutEvents',
    resource: bus.startsWith('arn:')
      ? bus
      : `arn:aws:events:${facts.region}:${facts.account}:event-bus/${bus}`,
  }));
}

function s3(operation: string, input: Input): IamRequest[] {
  const bucket = String(input.Bucket ?? '');
  const object = `arn:aws:s3:::${bucket}/${String(input.Key ?? '')}`;
  const onObject: Record<string, string> = {
    GetObject: 's3:GetObject',
    HeadObject: 's3:GetObject',
    GetObjectAttributes: 's3:GetObject',
    PutObject: 's3:PutObject',
    CreateMultipartUpload: 's3:PutObject',
    UploadPart: 's3:PutObject',
    CompleteMultipartUpload: 's3:PutObject',
    AbortMultipartUpload: 's3:AbortMultipartUpload',
    DeleteObject: 's3:DeleteObject',
    GetObjectTagging: 's3:GetObjectTagging',
    PutObjectTagging: 's3:PutObjectTagging',
  };
  const objectAction = onObject[operation];
  if (objectAction) return [{ action: objectAction, resource: object }];
  if (operation === 'CopyObject') {
    const source = String(input.CopySource ?? '').replace(/^\//, '');
    return [
      { action: 's3:GetObject', resource: `arn:aws:s3:::${decodeURIComponent(source)}` },
      { action: 's3:PutObject', resource: object },
    ];
  }
  const onBucket: Record<string, string> = {
    ListObjects: 's3:ListBucket',
    ListObjectsV2: 's3:ListBucket',
    HeadBucket: 's3:ListBucket',
    DeleteObjects: 's3:DeleteObject',
  };
  return [{ action: onBucket[operation] ?? `s3:${operation}`, resource: `arn:aws:s3:::${bucket}` }];
}

/** A cross-region (system-defined) inference profile's id: its geography, then the model's id. */
const INFERENCE_PROFILE = /^(us|eu|apac|global|us-gov)\.(.+)$/;

/**
 * Bedrock authorizes Converse and InvokeModel by `bedrock:InvokeModel` (the streaming ones by
 * `InvokeModelWithResponseStream`) on the model's ARN. A model id that names an inference profile
 * (`us.anthropic...`) is authorized on the profile's ARN and on the foundation model it routes to
 * (in the caller's region here; the grant names every region it may route to).
 */
function bedrock(facts: ResourceFacts, operation: string, input: Input): IamRequest[] {
  const modelId = String(input.modelId ?? '');
  const streaming = operation === 'InvokeModelWithResponseStream' || operation === 'ConverseStream';
  const known = ['InvokeModel', 'Converse', 'InvokeModelWithResponseStream', 'ConverseStream'];
  if (!known.includes(operation)) return [{ action: `bedrock:${operation}`, resource: '*' }];
  const action = streaming ? 'bedrock:InvokeModelWithResponseStream' : 'bedrock:InvokeModel';
  if (modelId.startsWith('arn:')) return [{ action, resource: modelId }];
  const profile = INFERENCE_PROFILE.exec(modelId);
  if (profile) {
    return [
      { action, resource: `arn:aws:bedrock:${facts.region}:${facts.account}:inference-profile/${modelId}` },
      { action, resource: `arn:aws:bedrock:${facts.region}::foundation-model/${profile[2]}` },
    ];
  }
  return [{ action, resource: `arn:aws:bedrock:${facts.region}::foundation-model/${modelId}` }];
}

/** A KMS key's ARN from a key id, alias name or ARN (what `KeyId` takes). */
function kms(facts: ResourceFacts, operation: string, input: Input): IamRequest[] {
  const id = typeof input.KeyId === 'string' ? input.KeyId : '';
  const resource = id.startsWith('arn:')
    ? id
    : id.startsWith('alias/')
      ? `arn:aws:kms:${facts.region}:${facts.account}:${id}`
      : id
        ? `arn:aws:kms:${facts.region}:${facts.account}:key/${id}`
        : '*';
  return [{ action: `kms:${operation}`, resource }];
}

function lambda(facts: ResourceFacts, operation: string, input: Input): IamRequest[] {
  const name = String(input.FunctionName ?? '');
  const resource = name.startsWith('arn:')
    ? name
    : `arn:aws:lambda:${facts.region}:${facts.account}:function:${name}`;
  const action =
    operation === 'Invoke' || operation === 'InvokeAsync' ? 'lambda:InvokeFunction' : `lambda:${operation}`;
  return [{ action, resource: name ? resource : '*' }];
}

/**
 * The IAM requests one SDK call makes.
 *
 * @param clientName the SDK's client name (`DynamoDBClient`, from the middleware context)
 * @param commandName the SDK's command name (`TransactWriteItemsCommand`)
 * @example
 * iamRequests(facts, 'DynamoDBClient', 'UpdateItemCommand', { TableName: 'belay-local', Key: { pk: { S: 'T#a#J#1' }, sk: { S: 'JOB' } } })
 * // [{ action: 'dynamodb:UpdateItem', resource: 'arn:aws:dynamodb:us-east-1:000000000000:table/belay-local',
 * //    context: { 'dynamodb:LeadingKeys': ['T#a#J#1'] } }]
 */
export function iamRequests(
  facts: ResourceFacts,
  clientName: string,
  commandName: string,
  input: Input,
): IamRequest[] {
  const operation = commandName.replace(/Command$/, '');
  const prefix = servicePrefix(clientName);
  switch (prefix) {
    case 'dynamodb':
      return dynamodb(facts, operation, input);
    case 'states':
      return states(facts, operation, input);
    case 'secretsmanager':
      return secretsmanager(facts, operation, input);
    case 'events':
      return events(facts, operation, input);
    case 's3':
      return s3(operation, input);
    case 'bedrock':
      return bedrock(facts, operation, input);
    case 'lambda':
      return lambda(facts, operation, input);
    case 'kms':
      return kms(facts, operation, input);
    default:
      return [{ action: `${prefix}:${operation}`, resource: '*' }];
  }
}
