import { randomBytes } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '../aws/sdk/client-dynamodb.ts';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '../aws/sdk/lib-dynamodb.ts';
import { conditionHeld } from '../dynamo/conditional.ts';
import { queryPrefix } from '../dynamo/query.ts';
import type { TransactItem } from './connections.ts';
import { ConnectionRefusedError, IdentityOfAnotherTenantError } from './errors.ts';
import { type Account, type AccountDirectory, profileNameFor } from './types.ts';

/**
 * Connected accounts in the ledger table: `pk = T#<tenant>`, `sk = ACCOUNT#<id>`. Only the
 * mapping lives here (application, label, profile, identity); credentials are in the
 * secret store. Every lookup is keyed by tenant, so another tenant's account reads as missing.
 *
 * An Anchor identity belongs to the tenant that connected it first: one Anchor organization
 * serves every tenant, so its identity ids are not scoped by tenant on Anchor's side. The claim
 * is its own item, written in the same transaction as the account:
 *
 * | item           | pk                        | sk         | attributes         |
 * | -------------- | ------------------------- | ---------- | ------------------ |
 * | identity claim | `IDENTITY#<identityId>`   | `IDENTITY` | tenantId, claimedAt |
 */
export interface AccountRegistry extends AccountDirectory {
  list(tenantId: string): Promise<Account[]>;
  /**
   * Stores a new account. With an `identityId`, claims that Anchor identity for the tenant in the
   * same transaction; throws {@link IdentityOfAnotherTenantError} when another tenant holds it.
   */
  create(input: {
    tenantId: string;
    application: string;
    label: string;
    identityId?: string;
    accountId?: string;
    connectedWith?: Account['connectedWith'];
    /**
     * More writes of the same transaction (a pending connection's completion); needs an
     * `identityId`. One whose condition fails throws {@link ConnectionRefusedError}
     * (`connection-used`): the caller reads again to say why.
     */
    alsoWrite?: TransactItem[];
  }): Promise<Account>;
  /** Marks the account revoked; jobs using it stop at their next step. Returns false when there is none. */
  revoke(tenantId: string, accountId: string): Promise<boolean>;
}

const key = (tenantId: string, accountId: string): { pk: string; sk: string } => ({
  pk: `T#${tenantId}`,
  sk: `ACCOUNT#${accountId}`,
});

const identityKey = (identityId: string): { pk: string; sk: string } => ({
  pk: `IDENTITY#${identityId}`,
  sk: 'IDENTITY',
});

function toAccount(item: Record<string, unknown>): Account {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as Account;
}

export function createAccountRegistry(deps: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  clock?: () => Date;
}): AccountRegistry {
  const { doc, tableName } = deps;
  const clock = deps.clock ?? (() => new Date());

  return {
    async get(tenantId, accountId) {
      const res = await doc.send(
        new GetCommand({ TableName: tableName, Key: key(tenantId, accountId), ConsistentRead: true }),
      );
      return res.Item ? toAccount(res.Item) : null;
    },

    async create({ tenantId, application, label, identityId, accountId, connectedWith, alsoWrite = [] }) {
      const id = accountId ?? `acct_${randomBytes(8).toString('hex')}`;
      const account: Account = {
        tenantId,
        accountId: id,
        application,
        label,
        profileName: profileNameFor(tenantId, application, id),
        ...(identityId ? { identityId } : {}),
        ...(connectedWith ? { connectedWith } : {}),
        status: 'connected',
        createdAt: clock().toISOString(),
      };
      const put = {
        TableName: tableName,
        Item: { ...key(tenantId, id), ...account },
        ConditionExpression: 'attribute_not_exists(pk)',
      };
      if (!identityId) {
        if (alsoWrite.length) throw new TypeError('alsoWrite needs an identityId');
        await doc.send(new PutCommand(put));
        return account;
      }
      try {
        await doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: tableName,
                  Item: { ...identityKey(identityId), tenantId, claimedAt: account.createdAt },
                  // The claimant's own claim stays as it is (the same identity on a second account).
                  ConditionExpression: 'attribute_not_exists(pk) OR tenantId = :tenant',
                  ExpressionAttributeValues: { ':tenant': tenantId },
                },
              },
              { Put: put },
              ...alsoWrite,
            ],
          }),
        );
      } catch (err) {
        if (!(err instanceof TransactionCanceledException)) throw err;
        const failed = (i: number): boolean =>
          err.CancellationReasons?.[i]?.Code === 'ConditionalCheckFailed';
        if (failed(0)) throw new IdentityOfAnotherTenantError(identityId, { cause: err });
        if (alsoWrite.some((_, i) => failed(i + 2)))
          throw new ConnectionRefusedError('connection-used', { cause: err });
        throw err;
      }
      return account;
    },

    async list(tenantId) {
      return (await queryPrefix(doc, tableName, `T#${tenantId}`, 'ACCOUNT#')).map(toAccount);
    },

    async revoke(tenantId, accountId) {
      return conditionHeld(
        doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key(tenantId, accountId),
            UpdateExpression: 'SET #status = :revoked, revokedAt = :now',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':revoked': 'revoked', ':now': clock().toISOString() },
          }),
        ),
      );
    },
  };
}
