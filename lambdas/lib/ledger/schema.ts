/**
 * Key layout of the single ledger table, shared by the ledger code and the CDK stack.
 *
 * | item          | pk                      | sk                 | gsi1 (by status)                    | gsi2 (by time)          |
 * |---------------|-------------------------|--------------------|-------------------------------------|-------------------------|
 * | job           | `T#<tenant>#J#<jobId>`  | `JOB`              | `T#<tenant>#S#<status>` / createdAt | `T#<tenant>` / createdAt |
 * | ledger entry  | `T#<tenant>#J#<jobId>`  | `E#<entryId>`      | -                                   | -                       |
 * | tenant        | `T#<tenant>`            | `TENANT`           | `TENANTS` / `<tenant>`              | -                       |
 *
 * The tenant is part of every key, so no query or key lookup can reach another tenant's items.
 * One partition is not a tenant's: `TENANTS` on gsi1, the directory of tenants (their tenant
 * items), which only the watchdog reads (every tenant's live jobs, for the operations metrics).
 *
 * A finished job's item and its entries carry the same TTL (`expiresAt`): the job's when it
 * finishes, copied onto its entries then (`entry-ttl.ts`).
 *
 * gsi3 (unfinished jobs) is the one index across tenants, for the engine's sweep of jobs whose
 * execution is gone: a job item has `gsi3pk = OPEN#<shard>` (16 shards by tenant and job id)
 * and `gsi3sk = <createdAt>#<tenant>#<jobId>` until it finishes, when both are removed (a
 * sparse index: it holds unfinished jobs only). It projects the keys, tenant, job id, status
 * and execution name, so a status change is its only write besides a job's start and end.
 * No API path reads it.
 */
export const TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  gsi2: { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  gsi3: {
    name: 'gsi3',
    partitionKey: 'gsi3pk',
    sortKey: 'gsi3sk',
    /** What gsi3 projects besides the keys. */
    projected: ['tenantId', 'jobId', 'status', 'executionName'] as readonly string[],
    /** Shards of its partition key (`OPEN#0` .. `OPEN#15`). */
    shards: 16,
  },
  ttlAttribute: 'expiresAt',
} as const;

/** The gsi1 partition that lists every tenant (its `TENANT` item, sort key the tenant id). */
export const TENANT_DIRECTORY_PK = 'TENANTS';
