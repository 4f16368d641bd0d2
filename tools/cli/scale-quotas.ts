/**
 * The quotas that bound one Belay deployment (one AWS account and region, one Anchor account),
 * each with its default value, where the value comes from and what raises it. Defaults are for
 * us-east-1 (US West (Oregon) and Europe (Ireland) share the Step Functions ones; other regions
 * have lower Step Functions and EventBridge defaults: check the Service Quotas console).
 *
 * Sources: the AWS Service Quotas default values (quota codes `L-...`, as listed by the Service
 * Quotas API), the services' quota pages, and Belay's own limits in this repository.
 */

export type QuotaId =
  | 'sfnStartExecution'
  | 'sfnStateTransitions'
  | 'sfnOpenExecutions'
  | 'sfnHistory'
  | 'sfnSendTask'
  | 'lambdaConcurrency'
  | 'ddbTable'
  | 'ddbTenantGsi'
  | 'ddbCapState'
  | 'ddbQueueReads'
  | 'apiAccount'
  | 'apiStage'
  | 'apiKey'
  | 'eventBridge'
  | 'secrets'
  | 'anchorConcurrency'
  | 'anchorLaunches'
  | 'tenantCap';

export interface Quota {
  id: QuotaId;
  /** What is limited, for people. */
  name: string;
  /** Default value, in `unit`. */
  limit: number;
  unit: string;
  /** Where the default comes from. */
  source: string;
  /** What raises it when it binds. */
  raise: string;
  /** A limit of one tenant's keys (the hottest tenant's share of the load), not of the account. */
  perTenant?: boolean;
  /** A limit per job (it does not grow with volume). */
  perJob?: boolean;
  /** Estimated, not a published figure. */
  estimate?: boolean;
}

/** Single-item write rate DynamoDB allows (and any one partition): 1,000 WCU/s. */
export const PARTITION_WCU = 1000;
/** Read rate of one partition: 3,000 RCU/s (eventually consistent reads cost half a unit per 4 KB). */
export const PARTITION_RCU = 3000;

/**
 * Round trip of one DynamoDB call from Lambda in the same region, ms: an ASSUMPTION for the
 * capacity STATE item's serialized acquire (read the leases, then transact on the version).
 */
export const DYNAMO_RTT_MS = 8;

export const QUOTAS: readonly Quota[] = [
  {
    id: 'sfnStartExecution',
    name: 'Step Functions StartExecution (Standard)',
    limit: 300,
    unit: '/s',
    source: 'Service Quotas L-1B55A735 (refill 300/s, bucket L-CE9F8059 1,300)',
    raise: 'quota increase; spread submissions (the API returns 202 and starts at once)',
  },
  {
    id: 'sfnStateTransitions',
    name: 'Step Functions state transitions (Standard)',
    limit: 5000,
    unit: '/s',
    source: 'Service Quotas L-AD9B4E93 (refill 5,000/s, bucket L-137B3F65 5,000); new accounts start lower',
    raise: 'quota increase; fewer states per step (today 2 per step on the happy path)',
  },
  {
    id: 'sfnOpenExecutions',
    name: 'Step Functions open executions',
    limit: 1_000_000,
    unit: 'executions',
    source: 'Service Quotas L-B8A5B662',
    raise: 'quota increase; end long human waits sooner (their execution stays open while it waits)',
  },
  {
    id: 'sfnHistory',
    name: 'Step Functions execution history',
    limit: 25_000,
    unit: 'events/execution',
    source: 'Step Functions quotas (hard): 25,000 events per execution',
    raise:
      'hard: BELAY_MAX_QUEUE_SECONDS ends a long queue first (a day of asks is ~15,300 events); a new execution resumes from the ledger',
    perJob: true,
  },
  {
    id: 'sfnSendTask',
    name: 'Step Functions SendTaskSuccess (human answers)',
    limit: 500,
    unit: '/s',
    source: 'Service Quotas L-EACE83FA (refill 500/s, bucket L-630CF084 3,000)',
    raise: 'quota increase',
  },
  {
    id: 'lambdaConcurrency',
    name: 'Lambda concurrent executions (account)',
    limit: 1000,
    unit: 'concurrent',
    source: 'Service Quotas L-B99A9384; each function scales by 1,000 every 10 s',
    raise: 'quota increase (RunStep holds its Lambda for the whole step, so this follows browser time)',
  },
  {
    id: 'ddbTable',
    name: 'DynamoDB table write throughput (with its GSIs)',
    limit: 40_000,
    unit: 'WRU/s',
    source:
      'Service Quotas L-AB614373 (table-level; an on-demand table starts at 4,000 and doubles on its peak)',
    raise: 'quota increase; pre-warm the on-demand table (warm throughput) before a launch',
  },
  {
    id: 'ddbTenantGsi',
    name: "DynamoDB: a tenant's job-index partitions (gsi2 T#<tenant>, gsi1 T#<tenant>#S#RUNNING)",
    limit: PARTITION_WCU,
    unit: 'WCU/s',
    source: 'DynamoDB: 1,000 WCU per partition; every job-item write is copied to both GSIs (ALL projection)',
    raise:
      'shard the hot key (T#<tenant>#<n>) or project KEYS_ONLY/INCLUDE (smaller index items); split-for-heat helps slowly',
    perTenant: true,
  },
  {
    id: 'ddbCapState',
    name: "Belay: a tenant's capacity STATE item (serialized lease acquire/release)",
    limit: Math.round(1000 / (3 * DYNAMO_RTT_MS)),
    unit: 'updates/s',
    source: `estimate: one version-conditioned transaction at a time, ~3 round trips of ${DYNAMO_RTT_MS} ms each (lambdas/lib/capacity/leases.ts)`,
    raise:
      'shard the tenant cap into N counters (cap/N each) or batch grants; DynamoDB itself allows 1,000 WCU on the item',
    perTenant: true,
    estimate: true,
  },
  {
    id: 'ddbQueueReads',
    name: "DynamoDB: a tenant's queue partition (gsi1 T#<tenant>#S#QUEUED), read by every queued ask",
    limit: PARTITION_RCU,
    unit: 'RCU/s',
    source:
      'DynamoDB: 3,000 RCU per partition; each ask reads every QUEUED job ahead of it (lambdas/lib/capacity/queue.ts)',
    raise:
      'a narrow queue index (KEYS_ONLY) or a per-tenant queue counter; ask less often (BELAY_CAPACITY_POLL_SECONDS)',
    perTenant: true,
  },
  {
    id: 'apiAccount',
    name: 'API Gateway requests (account, all APIs)',
    limit: 10_000,
    unit: 'req/s',
    source: 'Service Quotas L-8A5B8E43 (throttle rate; burst 5,000)',
    raise: 'quota increase',
  },
  {
    id: 'apiStage',
    name: "Belay's HTTP API stage throttle",
    limit: 50,
    unit: 'req/s',
    source: 'belay:apiRateLimit (default 50, burst 100; cdk/config.ts)',
    raise: 'cdk deploy -c belay:apiRateLimit=<n> -c belay:apiBurstLimit=<n>',
  },
  {
    id: 'apiKey',
    name: "Belay's per-key rate limit (the hottest tenant's one key)",
    limit: 10,
    unit: 'req/s',
    source: 'BELAY_API_RATE_PER_SECOND (default 10, burst 20; lambdas/lib/api/runtime.ts)',
    raise: 'BELAY_API_RATE_PER_SECOND, or more keys for the tenant',
    perTenant: true,
  },
  {
    id: 'eventBridge',
    name: 'EventBridge PutEvents (wait notifications)',
    limit: 10_000,
    unit: '/s',
    source: 'Service Quotas L-9B653E91 (us-east-1; lower in smaller regions)',
    raise: 'quota increase',
  },
  {
    id: 'secrets',
    name: 'Secrets Manager GetSecretValue',
    limit: 10_000,
    unit: '/s',
    source: 'Secrets Manager quotas: GetSecretValue 10,000/s (raised in 2025)',
    raise:
      'cache the secret: the Anchor key is read once per cold start already; cache credentials per container',
  },
  {
    id: 'anchorConcurrency',
    name: 'Anchor concurrent browsers (the deployment’s Anchor plan)',
    limit: 500,
    unit: 'browsers',
    source: 'Anchor plans 5 / 25 / 200 / 500+ (lambdas/lib/capacity/plans.ts); --plan picks one',
    raise:
      'a bigger Anchor plan (500+ is negotiated); park waits sooner (BELAY_PARK_AFTER_SECONDS) so waiting jobs give browsers back',
  },
  {
    id: 'anchorLaunches',
    name: 'Anchor session launches',
    limit: 500,
    unit: '/min',
    source:
      'ASSUMPTION: no published Anchor figure; taken as the plan’s concurrency per minute (as other providers publish)',
    raise: 'ask Anchor; reuse sessions (Belay keeps one per job and reattaches, it launches ~1 per job)',
    estimate: true,
  },
  {
    id: 'tenantCap',
    name: "Belay's browser cap of the hottest tenant",
    limit: 500,
    unit: 'browsers',
    source: "the tenant's plan (BELAY_PLAN_CAPS, the tenant item's plan or browserCap)",
    raise: "the tenant's plan or browserCap; jobs over it queue (see the queue partition)",
    perTenant: true,
  },
];
