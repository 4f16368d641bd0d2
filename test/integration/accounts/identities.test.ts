/**
 * Anchor identities are bound to the tenant that connected them (one Anchor organization serves
 * every tenant, so an identity id is not scoped on Anchor's side): the account registry on
 * DynamoDB Local.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createAccountRegistry } from '../../../lambdas/lib/accounts/directory.ts';
import { IdentityOfAnotherTenantError } from '../../../lambdas/lib/accounts/errors.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';

const ddb = useDynamoDb();

describe('Function: createAccountRegistry (identities)', () => {
  const registry = () => createAccountRegistry({ doc: ddb.doc(), tableName: ddb.tableName() });
  const connect = (tenantId: string, identityId: string, label = 'crm') =>
    registry().create({ tenantId, application: 'crm', label, identityId, connectedWith: 'identity' });

  it("refuses another tenant's identity and stores no account for the refusal", async () => {
    const own = await connect('acme', 'ident_bound_1');
    expect(own.identityId).toBe('ident_bound_1');
    const refused = connect('rival', 'ident_bound_1');
    await expect(refused).rejects.toBeInstanceOf(IdentityOfAnotherTenantError);
    await expect(refused).rejects.not.toThrow(/acme/);
    expect(await registry().list('rival')).toEqual([]);
    const claim = await ddb
      .doc()
      .send(
        new GetCommand({ TableName: ddb.tableName(), Key: { pk: 'IDENTITY#ident_bound_1', sk: 'IDENTITY' } }),
      );
    expect(claim.Item?.tenantId).toBe('acme');
  });

  it('lets the tenant that connected an identity connect it again on another account', async () => {
    await connect('acme2', 'ident_bound_2', 'first');
    await connect('acme2', 'ident_bound_2', 'second');
    expect((await registry().list('acme2')).map((a) => a.label).sort()).toEqual(['first', 'second']);
  });

  it('stores accounts with credentials without any claim', async () => {
    const account = await registry().create({ tenantId: 'acme3', application: 'shop', label: 's' });
    expect(account.identityId).toBeUndefined();
  });
});
