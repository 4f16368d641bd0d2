import { randomBytes } from 'node:crypto';
import { IdentityOfAnotherTenantError } from '../../accounts/errors.ts';
import { type AnchorIdentity, namedIdentityRefusal } from '../../accounts/identity-binding.ts';
import type { Account } from '../../accounts/types.ts';
import type { Principal } from '../../auth/api-keys.ts';
import { ConfigError } from '../../config.ts';
import { IllegalTransitionError } from '../../ledger/errors.ts';
import type { JobStatus } from '../../ledger/types.ts';
import type { ApiDeps } from '../deps.ts';
import { BadRequestError, ConflictError, NotFoundError, UnprocessableError } from '../errors.ts';
import { fieldIssues } from '../schemas.ts';
import { sendTaskFailure } from '../step-functions.ts';
import { type AccountView, type ConnectAccountBody, ConnectAccountBodySchema } from './schemas.ts';

/**
 * The connected-accounts API (role admin): connect an account of an application this
 * deployment knows, list them, disconnect one. Credentials go to the secret store and
 * nowhere else: not into the account item, not into logs, not into a response. Every
 * lookup is keyed by the caller's tenant, so another tenant's account is a 404 like a
 * missing one.
 */

/** Connects an account: credentials into the secret store first, then the mapping in DynamoDB. */
export async function connectAccount(deps: ApiDeps, principal: Principal, body: unknown): Promise<Account> {
  // Nothing of a refused request is registered for redaction: only stored credentials are
  // (the store registers them once they are stored), so no caller can fill the registry.
  const parsed = ConnectAccountBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError(
      'invalid_request',
      'the account is not valid: see details for the fields to fix',
      {
        details: fieldIssues(parsed.error),
      },
    );
  }
  const input: ConnectAccountBody = parsed.data;
  const known = Object.keys(deps.engine.applications);
  if (!known.includes(input.application)) {
    throw new UnprocessableError(
      'unknown_application',
      `this deployment has no application ${input.application}`,
      {
        details: [{ field: 'application', message: `use one of ${known.join(', ')}` }],
      },
    );
  }
  if (input.anchorIdentityId)
    await checkNamedIdentity(deps, principal, input.application, input.anchorIdentityId);
  const accountId = `acct_${randomBytes(8).toString('hex')}`;
  if (input.credentials) {
    await deps.credentials.putCredentials(principal.tenantId, accountId, {
      username: input.credentials.username,
      password: input.credentials.password,
      ...(input.credentials.totpSecret ? { totpSecret: input.credentials.totpSecret } : {}),
    });
  }
  try {
    return await deps.accounts.create({
      tenantId: principal.tenantId,
      application: input.application,
      label: input.label,
      accountId,
      ...(input.anchorIdentityId ? { identityId: input.anchorIdentityId } : {}),
      connectedWith: input.credentials ? 'credentials' : 'identity',
    });
  } catch (err) {
    // No mapping, no credentials: nothing is left behind for an account that does not exist.
    if (input.credentials)
      await deps.credentials.deleteCredentials(principal.tenantId, accountId).catch(() => {});
    if (err instanceof IdentityOfAnotherTenantError) throw identityUnavailable();
    throw err;
  }
}

/**
 * An identity named by id must be one Anchor knows in this application's Anchor application
 * (else 422), and not tagged for another tenant (409); one claimed by another tenant in the ledger
 * is refused by the account's own transaction (409). Nothing is written before this passes.
 */
async function checkNamedIdentity(
  deps: ApiDeps,
  principal: Principal,
  application: string,
  identityId: string,
): Promise<void> {
  const endpoint = deps.engine.applications[application];
  if (!endpoint) return;
  let identity: AnchorIdentity | undefined;
  try {
    const applicationId = await deps.anchor.applicationFor({ name: application, baseUrl: endpoint.baseUrl });
    identity = await deps.anchor.findIdentity(applicationId, identityId);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new UnprocessableError(
      'anchor_not_configured',
      'this deployment has no Anchor account: connect the account with credentials instead',
      { details: [{ field: 'anchorIdentityId', message: 'Anchor identities need an Anchor account' }] },
    );
  }
  const refused = namedIdentityRefusal(identity, principal.tenantId);
  if (refused === 'unknown') {
    throw new UnprocessableError(
      'identity_unknown',
      `Anchor has no such identity for application ${application}`,
      {
        details: [
          {
            field: 'anchorIdentityId',
            message: `an identity of ${application} this tenant created at Anchor`,
          },
        ],
      },
    );
  }
  if (refused === 'other-tenant') throw identityUnavailable();
}

function identityUnavailable(): ConflictError {
  // An identity is the tenant's that connected it first (one Anchor organization serves all).
  return new ConflictError(
    'identity_unavailable',
    'this Anchor identity cannot be connected by this tenant',
    {
      details: [{ field: 'anchorIdentityId', message: 'connect an identity this tenant created' }],
    },
  );
}

/** The caller's tenant's accounts (connected and revoked), oldest first. */
export async function listAccounts(deps: ApiDeps, principal: Principal): Promise<Account[]> {
  const accounts = await deps.accounts.list(principal.tenantId);
  return accounts.sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || a.accountId.localeCompare(b.accountId),
  );
}

/** One of the caller's tenant's accounts; another tenant's is exactly as missing as one that never was. */
export async function getAccount(deps: ApiDeps, principal: Principal, accountId: string): Promise<Account> {
  const account = await deps.accounts.get(principal.tenantId, accountId);
  if (!account || account.tenantId !== principal.tenantId)
    throw new NotFoundError(`account ${accountId} not found`);
  return account;
}

/**
 * Disconnects an account: marks it revoked first (every job using it stops at its next step
 * with `account-revoked`: the engine checks before each step, session opening, sign-in and
 * capacity request), then deletes its credentials (and its Anchor identity, unless another of the
 * tenant's connected accounts uses it), then stops at once the jobs using it that
 * wait for a person (they have no next step until someone answers; see
 * {@link failWaitingJobsOfAccount}). Idempotent: a revoked account is answered as it is, and
 * its waiting jobs are looked for again.
 */
export async function disconnectAccount(
  deps: ApiDeps,
  principal: Principal,
  accountId: string,
): Promise<{ account: Account; revoked: boolean; jobsStopped: number }> {
  const account = await getAccount(deps, principal, accountId);
  let revoked = false;
  if (account.status !== 'revoked') revoked = await deps.accounts.revoke(principal.tenantId, accountId);
  await deps.credentials.deleteCredentials(principal.tenantId, accountId);
  if (account.identityId && account.connectedWith === 'identity') {
    await deleteIdentityUnlessShared(deps, principal.tenantId, accountId, account.identityId);
  }
  const jobsStopped = await failWaitingJobsOfAccount(deps, principal.tenantId, accountId);
  return { account: await getAccount(deps, principal, accountId), revoked, jobsStopped };
}

/**
 * Deletes the account's Anchor identity (its credentials, at Anchor) unless another connected
 * account of the tenant still signs in with it. An identity already gone counts as deleted, so
 * a repeated disconnect is harmless.
 */
export async function deleteIdentityUnlessShared(
  deps: Pick<ApiDeps, 'accounts' | 'anchor'>,
  tenantId: string,
  accountId: string,
  identityId: string,
): Promise<void> {
  const others = (await deps.accounts.list(tenantId)).filter(
    (a) => a.accountId !== accountId && a.status === 'connected' && a.identityId === identityId,
  );
  if (others.length === 0) await deps.anchor.deleteIdentity(identityId);
}

/** The error a waiting job of a revoked account fails with: the engine's own, so the reason is `account-revoked`. */
export const ACCOUNT_REVOKED_ERROR = 'AccountRevokedError';

const WAITING: readonly JobStatus[] = [
  'WAITING_APPROVAL',
  'WAITING_MFA',
  'WAITING_REVIEW',
  'WAITING_TAKEOVER',
];

/**
 * Fails every job of the tenant that uses `accountId` and waits for a person (with its browser
 * or parked without it): its wait's task token gets `AccountRevokedError`, so the execution goes
 * to RecordFailure, which marks the job FAILED with reason `account-revoked`, ends its sessions
 * and releases its leases. Nothing else of the job runs. Returns how many waits were failed.
 */
export async function failWaitingJobsOfAccount(
  deps: ApiDeps,
  tenantId: string,
  accountId: string,
): Promise<number> {
  let stopped = 0;
  for (const status of WAITING) {
    let cursor: string | undefined;
    do {
      const page = await deps.engine.ledger.listJobs(tenantId, { status, limit: 100, cursor });
      cursor = page.nextCursor;
      for (const job of page.jobs) {
        const token = job.wait?.taskToken;
        if (!token || !Object.values(job.accounts).includes(accountId)) continue;
        const failed = await sendTaskFailure(
          deps.sfn,
          token,
          ACCOUNT_REVOKED_ERROR,
          `account ${accountId} was revoked while the job waited for a person`,
        );
        try {
          await deps.engine.ledger.clearWait(tenantId, job.jobId, { taskToken: token, to: 'RUNNING' });
        } catch (err) {
          // RecordFailure got there first: the job is FAILED already.
          if (!(err instanceof IllegalTransitionError)) throw err;
        }
        if (failed) stopped++;
      }
    } while (cursor);
  }
  return stopped;
}

/** What the API shows of an account: never its credentials (the item holds none anyway). */
export function toAccountView(deps: Pick<ApiDeps, 'engine'>, account: Account): AccountView {
  return {
    accountId: account.accountId,
    application: account.application,
    label: account.label,
    status: account.status,
    profile: account.profileName,
    ...(account.identityId ? { identityId: account.identityId } : {}),
    ...(account.connectedWith ? { connectedWith: account.connectedWith } : {}),
    domains: [...(deps.engine.applications[account.application]?.allowedDomains ?? [])],
    createdAt: account.createdAt,
    ...(account.revokedAt ? { revokedAt: account.revokedAt } : {}),
  };
}
