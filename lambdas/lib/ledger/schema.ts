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
 */
export const TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  gsi2: { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ttlAttribute: 'expiresAt',
} as const;

/** The gsi1 partition that lists every tenant (its `TENANT` item, sort key the tenant id). */
export const TENANT_DIRECTORY_PK = 'TENANTS';
