import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DEMO_ACCOUNTS,
  type DemoSiteName,
  LOAD_TEST_SHOPPER_COUNT,
  shopperNumber,
} from '../demo/accounts.ts';
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

/** A connected account of the demo tenant: its id, application, the site's username and a label. */
export interface ConnectedSpec {
  accountId: string;
  application: string;
  username: string;
  label: string;
}

/** Connected account id of load-test shopper `n` (1-based): `acct_demo_shop_01` ... `acct_demo_shop_20`. */
export function loadTestShopAccountId(n: number): string {
  return `acct_demo_shop_${shopperNumber(n)}`;
}

/** The load-test shoppers, connected to the demo tenant (`npm run bench` runs concurrent checkouts on them). */
export const LOAD_TEST_CONNECTED: readonly ConnectedSpec[] = Array.from(
  { length: LOAD_TEST_SHOPPER_COUNT },
  (_, i) => ({
    accountId: loadTestShopAccountId(i + 1),
    application: 'shop',
    username: `shopper${shopperNumber(i + 1)}@example.com`,
    label: `Shop (load-test shopper ${shopperNumber(i + 1)})`,
  }),
);

/** Connects the demo accounts (idempotent): the mapping in DynamoDB, the credentials in the secret store. */
export async function seedDemoTenant(
  doc: DynamoDBDocumentClient,
  tableName: string,
  secrets: WritableSecretStore,
): Promise<void> {
  const registry = createAccountRegistry({ doc, tableName });
  const connect = async (spec: ConnectedSpec): Promise<void> => {
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
  };
  for (const spec of DEMO_CONNECTED) await connect(spec);
  // The load-test shoppers are independent of one another: connect them side by side.
  await Promise.all(LOAD_TEST_CONNECTED.map(connect));
}
