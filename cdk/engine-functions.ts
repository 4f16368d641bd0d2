/**
 * What each of the state machine's task functions needs, and why: its time budget, whether
 * it drives a browser, and exactly the DynamoDB, Secrets Manager and EventBridge access its
 * code uses. The stack builds one function per entry; the template tests check the result
 * against their own table, so a change here is a deliberate change there too.
 *
 * Where the actions come from (the ledger writes every job change as a TransactWriteItems;
 * IAM authorizes each item by its own action, see `cdk/constructs/bind.ts`):
 * - `ledger.getJob`: GetItem. `ledger.readJob`: Query (job + entries in one partition).
 * - `ledger.updateJob`/`transition`/`setWait`/`clearWait`/`completeStep`: UpdateItem of the job
 *   item, PutItem of the entry when there is one, then a consistent GetItem.
 * - `ledger.append`: PutItem of the entry + UpdateItem of the job item's cost totals (an entry
 *   with a cost; every engine entry has one), or ConditionCheckItem on it (an entry of no cost).
 * - `accounts.get`: GetItem. Credentials: `secrets.getCredentials`, GetSecretValue on `belay/*`.
 * - `capacity.acquire`: GetItem (tenant plan), Query (leases; gsi1 for the queue), PutItem
 *   (lease) + UpdateItem (version) in a transaction, UpdateItem (renewal).
 * - `capacity.release` (in `releaseJobResources`): Query, then DeleteItem (lease) + UpdateItem.
 */
import { Duration } from 'aws-cdk-lib';
import {
  type StateMachineFunction,
  TASK_FUNCTION_FACTS,
  type TaskFunctionFacts,
} from '../lambdas/lib/engine/functions.ts';
import type { DynamoDbAction } from './constructs/bind.ts';

/**
 * Name prefix of connected accounts' credentials in Secrets Manager (`<prefix>/<tenant>/<account>`,
 * `BELAY_SECRETS=secretsmanager:<prefix>`). Provider secrets the stack creates are named apart from it.
 */
export const CREDENTIALS_SECRET_PREFIX = 'belay';

/** Partition keys of capacity leases (`T#<tenant>#CAP`): the only items the engine deletes. */
export const LEASE_PARTITIONS: readonly string[] = Object.freeze(['T#*#CAP']);

/**
 * The partitions RunStep may write (`dynamodb:LeadingKeys`): its jobs and their entries
 * (`T#<tenant>#J#<job>`), capacity leases it renews or takes again (`T#<tenant>#CAP`) and the
 * action cache (`T#<tenant>#AC#...`, the opt-in shared `AC#SHARED#...`). Playbook code runs inside
 * RunStep: it cannot write an API key (`APIKEY#...`), a console session, an identity claim, a
 * connection, a tenant's item, accounts or webhooks (`T#<tenant>`), or anything else. IAM has no
 * per-invocation tenant here (one role serves every tenant), so the tenant in these partitions is
 * the code's to keep, as it keeps it for every read.
 */
export const RUN_STEP_WRITE_PARTITIONS: readonly string[] = Object.freeze([
  'T#*#J#*',
  'T#*#CAP',
  'T#*#AC#*',
  'AC#SHARED#*',
]);

/** Memory of a function that drives playwright-core over CDP. */
export const BROWSER_MEMORY_MB = 1024;
/** Memory of a function that only talks to AWS APIs. */
export const PLAIN_MEMORY_MB = 256;

/** A task function's access, beside its plain facts (`TASK_FUNCTION_FACTS`: timeout, browser, credentials). */
interface EngineFunctionAccess {
  /** What the function does (the Lambda description). */
  readonly description: string;
  /** DynamoDB actions on the ledger table and its indexes. */
  readonly table: readonly DynamoDbAction[];
  /**
   * When set, the function's writes in `table` (every action but GetItem and Query) are allowed
   * only on items whose partition key matches one of these (`dynamodb:LeadingKeys`, table only);
   * its reads stay on the whole table and its indexes.
   */
  readonly writePartitions?: readonly string[];
  /** Deletes capacity leases ({@link LEASE_PARTITIONS} only): it releases a job's resources. */
  readonly releasesLeases: boolean;
  /** Puts wait events on the event bus: it tells people a job waits for them. */
  readonly putsEvents: boolean;
  /** Why the access is what it is, for the reader of this table. */
  readonly why: string;
}

const GET = 'dynamodb:GetItem';
const QUERY = 'dynamodb:Query';
const PUT = 'dynamodb:PutItem';
const UPDATE = 'dynamodb:UpdateItem';
const CHECK = 'dynamodb:ConditionCheckItem';

/**
 * One task function's needs: its facts as CDK values (a browser function gets 1024 MB, the
 * Anchor API key and playwright-core shipped with the bundle; one that reads credentials may
 * GetSecretValue on `belay/*`) and its access.
 */
export interface EngineFunctionSpec extends EngineFunctionAccess, Omit<TaskFunctionFacts, 'timeoutSeconds'> {
  /** Lambda timeout; at most the ASL task's `TimeoutSeconds`, so Lambda's own timeout fires first. */
  readonly timeout: Duration;
}

const ACCESS: Readonly<Record<StateMachineFunction, EngineFunctionAccess>> = Object.freeze({
  Start: {
    description:
      "Checks the job and its accounts, takes its browser leases under the tenant's cap (or keeps it queued), and opens its session.",
    table: [GET, QUERY, PUT, UPDATE],
    releasesLeases: true,
    putsEvents: false,
    why: 'getJob, accounts.get, tenant plan (GetItem); executionName recorded without an entry (UpdateItem); leases and queue position on gsi1 (Query); lease put + state version (PutItem, UpdateItem); QUEUED -> RUNNING without an entry (UpdateItem); gives a lease back when the job was cancelled while acquiring (DeleteItem on the lease); session recorded with a session-opened entry (UpdateItem, PutItem). Opens sessions by profile, never signs in.',
  },
  OpenSession: {
    description:
      "Keeps a live browser session for the job's next application (new one from the profile if gone).",
    table: [GET, PUT, UPDATE],
    releasesLeases: false,
    putsEvents: false,
    why: 'getJob, accounts.get (GetItem); session recorded with a session-opened entry (UpdateItem, PutItem). Opens sessions by profile, never signs in.',
  },
  RunStep: {
    description: 'Runs and verifies ONE step of a job and writes its checkpoint.',
    table: [GET, QUERY, PUT, UPDATE, CHECK],
    writePartitions: RUN_STEP_WRITE_PARTITIONS,
    releasesLeases: false,
    putsEvents: false,
    why: 'Writes only in RUN_STEP_WRITE_PARTITIONS (playbook code runs here). readJob (Query); intent, completion, retries, waits cleared (UpdateItem, PutItem); reconciled entries via append (ConditionCheckItem, PutItem); lease renewal (GetItem, UpdateItem), and a lease taken again after it expired (tenant plan GetItem, leases and queue Query, lease PutItem + version UpdateItem); the action cache of agent steps (GetItem, PutItem, UpdateItem on T#<tenant>#AC# items). Sign-in steps read credentials.',
  },
  Reauthenticate: {
    description: "Signs the job's account in again in its session.",
    table: [GET, PUT, UPDATE, CHECK],
    releasesLeases: false,
    putsEvents: false,
    why: "getJob, accounts.get (GetItem); the reauth entry via append: PutItem of the entry and, as the entry has a cost, UpdateItem of the job's totals in the same transaction (ConditionCheckItem when an entry costs nothing). Signs in: reads credentials.",
  },
  Reconcile: {
    description: 'Probes the application for a write whose outcome is unknown.',
    table: [GET, QUERY, PUT, UPDATE, CHECK],
    releasesLeases: false,
    putsEvents: false,
    why: 'readJob (Query); reconciled entry via append (ConditionCheckItem, PutItem); completion with the probe evidence (UpdateItem, PutItem, GetItem); the action cache of an agent write settled with it (GetItem, PutItem, UpdateItem on T#<tenant>#AC# items). Probes look, never sign in.',
  },
  AwaitHuman: {
    description:
      'Stores the task token of a wait on the job and tells the people who must act; parks a long wait.',
    table: [GET, QUERY, PUT, UPDATE],
    releasesLeases: true,
    putsEvents: true,
    why: 'readJob (Query); setWait with its entry (UpdateItem, PutItem, GetItem); the wait event on the bus (events:PutEvents); parking ends the sessions (Anchor key) and releases the lease (DeleteItem on the lease).',
  },
  Finish: {
    description: "Verifies the job's outcome, marks it SUCCEEDED, ends its sessions and releases its leases.",
    table: [GET, QUERY, PUT, UPDATE],
    releasesLeases: true,
    putsEvents: false,
    why: 'getJob (GetItem); SUCCEEDED with its entry (UpdateItem, PutItem), then the job TTL onto its entries (Query, UpdateItem); lease release (Query, then DeleteItem on lease partitions only + UpdateItem). Signs in again when the site signed out before the outcome is verified: reads credentials.',
  },
  RecordFailure: {
    description: 'Records why a job failed, ends its sessions and releases its leases.',
    table: [GET, QUERY, PUT, UPDATE],
    releasesLeases: true,
    putsEvents: true,
    why: "getJob (GetItem); FAILED with its entry (UpdateItem, PutItem), then the job TTL onto its entries (Query, UpdateItem); lease release (Query, then DeleteItem on lease partitions only + UpdateItem). A drift check that turned red: the check's entries and the tenant's earlier checks (Query on the table and gsi2), and the event on the bus (events:PutEvents).",
  },
});

/** Every task function of `STATE_MACHINE_FUNCTIONS`, by name. */
export const ENGINE_FUNCTIONS: Readonly<Record<StateMachineFunction, EngineFunctionSpec>> = Object.freeze(
  Object.fromEntries(
    (Object.keys(ACCESS) as StateMachineFunction[]).map((name) => {
      const { timeoutSeconds, ...facts } = TASK_FUNCTION_FACTS[name];
      return [name, { ...ACCESS[name], ...facts, timeout: Duration.seconds(timeoutSeconds) }];
    }),
  ) as Record<StateMachineFunction, EngineFunctionSpec>,
);
