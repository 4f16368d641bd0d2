import { z } from 'zod';

/**
 * Schemas of the connected-accounts routes. Handlers validate with these and `openapi.ts`
 * documents the same objects. Credentials appear in the request only: no response schema
 * has a field that could carry them.
 */

/** An Anchor identity id (a UUID at Anchor; kept to a safe alphabet here). */
export const IDENTITY_ID = /^[A-Za-z0-9_-]{1,128}$/;

const AccountId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1-64 characters of A-Z, a-z, 0-9, _ and -');

export const CredentialsSchema = z
  .object({
    username: z.string().min(1).max(320).meta({ description: 'The sign-in name at the application.' }),
    password: z.string().min(1).max(1024).meta({ description: 'Stored in the secret store only.' }),
    totpSecret: z
      .string()
      .regex(/^[A-Z2-7]{16,128}=*$/, 'a base32 authenticator secret')
      .optional()
      .meta({ description: 'Base32 secret of an authenticator app, when the engine may sign in with it.' }),
  })
  .strict()
  .meta({ id: 'Credentials' });

/** The fields that name a new account, whichever way it is connected. */
const AccountNaming = {
  application: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: 'An application this deployment knows (BELAY_APPLICATIONS), e.g. shop.' }),
  label: z.string().trim().min(1).max(100).meta({ description: 'A name for people, e.g. "Shop (Ada)".' }),
};

export const ConnectAccountBodySchema = z
  .object({
    ...AccountNaming,
    credentials: CredentialsSchema.optional(),
    anchorIdentityId: z.string().regex(IDENTITY_ID, 'an Anchor identity id').optional().meta({
      description: "An Anchor identity (managed authentication) to attach to the account's sessions.",
    }),
  })
  .strict()
  .refine((b) => (b.credentials === undefined) !== (b.anchorIdentityId === undefined), {
    message: 'send exactly one of credentials or anchorIdentityId',
    path: ['credentials'],
  })
  .meta({ id: 'ConnectAccountRequest' });
export type ConnectAccountBody = z.infer<typeof ConnectAccountBodySchema>;

export const AccountViewSchema = z
  .object({
    accountId: AccountId,
    application: z.string(),
    label: z.string(),
    status: z.enum(['connected', 'revoked']),
    profile: z.string().meta({ description: "The account's persisted browser profile (tenant-scoped)." }),
    identityId: z.string().optional(),
    connectedWith: z.enum(['credentials', 'identity']).optional(),
    domains: z
      .array(z.string())
      .meta({ description: "Domains the account's sessions may reach (the application's)." }),
    createdAt: z.string(),
    revokedAt: z.string().optional(),
  })
  .meta({ id: 'Account' });
export type AccountView = z.infer<typeof AccountViewSchema>;

export const AccountResponseSchema = z.object({ account: AccountViewSchema }).meta({ id: 'AccountResponse' });

export const AccountRevokedResponseSchema = z
  .object({
    account: AccountViewSchema,
    jobsStopped: z
      .number()
      .int()
      .min(0)
      .describe(
        'Jobs using the account that were waiting for a person and were failed now (account-revoked).',
      ),
  })
  .meta({ id: 'AccountRevokedResponse' });

export const AccountListSchema = z
  .object({ accounts: z.array(AccountViewSchema) })
  .meta({ id: 'AccountList' });

export const AccountIdParams = z.object({
  accountId: AccountId.meta({ description: 'The account id.' }),
});

/** `POST /accounts/connect`: an account to connect through Anchor's hosted sign-in. */
export const ConnectAccountHostedBodySchema = z
  .object({
    ...AccountNaming,
  })
  .strict()
  .meta({ id: 'ConnectAccountHostedRequest' });

export const PendingConnectionViewSchema = z
  .object({
    connectionId: z.string(),
    application: z.string(),
    label: z.string(),
    status: z.enum(['pending', 'completed']),
    connectUrl: z.string().meta({
      description:
        "Anchor's hosted sign-in page for this connection: send the person there. Single use; it expires at expiresAt.",
    }),
    expiresAt: z.string(),
  })
  .meta({ id: 'PendingConnection' });
export type PendingConnectionView = z.infer<typeof PendingConnectionViewSchema>;

export const PendingConnectionResponseSchema = z
  .object({ connection: PendingConnectionViewSchema })
  .meta({ id: 'PendingConnectionResponse' });

export const ConnectCallbackParams = z.object({
  callbackKey: z
    .string()
    .meta({ description: "The connection's callback key (in the URL Belay gave Anchor)." }),
});

export const ConnectCallbackQuery = z.object({
  identityId: z.string().meta({ description: 'The identity Anchor created on its sign-in page.' }),
});

export const ConnectCallbackResponseSchema = z
  .object({ connectionId: z.string(), account: AccountViewSchema })
  .meta({ id: 'ConnectCallbackResponse' });
