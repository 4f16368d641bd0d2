import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEMO_ACCOUNTS, type DemoSiteName } from '../demo/accounts.ts';
import { createAccountRegistry } from '../lambdas/lib/accounts/directory.ts';
import type { WritableSecretStore } from '../lambdas/lib/accounts/file-secret-store.ts';

/** The demo tenant of the local stack and the accounts it has connected. */
export const DEMO_TENANT = 'demo';

/**
 * Connected accounts of the demo tenant: one per application (the demo sites' accounts
 * without MFA), plus the shop's TOTP and outbox (SMS) accounts for the MFA paths.
 */
export const DEMO_CONNECTED = [
  { accountId: 'acct_demo_shop', application: 'shop', username: 'ada@example.com', label: 'Shop (Ada)' },
  {
    accountId: 'acct_demo_shop_totp',
    application: 'shop',
    username: 'grace@example.com',
    label: 'Shop (Grace, TOTP)',
  },
  {
    accountId: 'acct_demo_shop_sms',
    application: 'shop',
    username: 'alan@example.com',
    label: 'Shop (Alan, SMS code)',
  },
  { accountId: 'acct_demo_crm', application: 'crm', username: 'ada@example.com', label: 'CRM (Ada)' },
  {
    accountId: 'acct_demo_billing',
    application: 'billing',
    username: 'ada@example.com',
    label: 'Billing (Ada)',
  },
] as const;

/** Connects the demo accounts (idempotent): the mapping in DynamoDB, the credentials in the secret store. */
export async function seedDemoTenant(
  doc: DynamoDBDocumentClient,
  tableName: string,
  secrets: WritableSecretStore,
): Promise<void> {
  const registry = createAccountRegistry({ doc, tableName });
  for (const spec of DEMO_CONNECTED) {
    const site = DEMO_ACCOUNTS[spec.application as DemoSiteName];
    const account = site.find((a) => a.username === spec.username);
    if (!account) throw new Error(`demo account ${spec.username} is missing from demo/accounts.ts`);
    const existing = await registry.get(DEMO_TENANT, spec.accountId);
    if (!existing) {
      await registry.create({
        tenantId: DEMO_TENANT,
        application: spec.application,
        label: spec.label,
        accountId: spec.accountId,
      });
    }
    await secrets.putCredentials(DEMO_TENANT, spec.accountId, {
      username: account.username,
      password: account.password,
      ...(account.mfa.kind === 'totp' ? { totpSecret: account.mfa.secret } : {}),
    });
  }
}
