/**
 * The checkpoint ledger: one DynamoDB table, laid out by `TABLE_KEYS`, the same constant
 * the ledger code reads and writes with.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { TABLE_KEYS } from '../../lambdas/lib/ledger/schema.ts';

/** Props of {@link LedgerTable}. */
export interface LedgerTableProps {
  /**
   * What happens to the table (and its data) when it leaves the stack. Anything but
   * DESTROY also turns on deletion protection, so the table survives a mistaken delete
   * of the stack or the table.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The ledger table: `pk`/`sk` string keys, on-demand capacity, GSIs `gsi1` (jobs of a
 * tenant by status) and `gsi2` (jobs of a tenant by time) projecting all attributes, `gsi3`
 * (unfinished jobs, sparse, for the recovery sweep) projecting a few, TTL on
 * `expiresAt`, point-in-time recovery, encrypted with a KMS key.
 *
 * Encryption uses the AWS managed key (`aws/dynamodb`), not a customer managed key. It is
 * a KMS key whose use is logged in CloudTrail and which AWS rotates; what a customer
 * managed key would add (a key policy of our own, revoking access by disabling the key,
 * cross-account use) buys nothing here: only this account's Belay functions read the
 * table, by IAM grants. It would cost a key per deployment, a KMS request per uncached
 * read/write, and a KMS grant to every function. Choose a customer managed key (with
 * rotation) if tenants require key control.
 *
 * @example
 * const ledger = new LedgerTable(this, 'Ledger', { removalPolicy: RemovalPolicy.RETAIN });
 * bindTable(fn, ledger, { env: 'LEDGER_TABLE', actions: LEDGER_READ });
 */
export class LedgerTable extends Table {
  constructor(scope: Construct, id: string, props: LedgerTableProps = {}) {
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    super(scope, id, {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_KEYS.ttlAttribute,
      removalPolicy,
      deletionProtection: removalPolicy !== RemovalPolicy.DESTROY,
    });
    for (const index of [TABLE_KEYS.gsi1, TABLE_KEYS.gsi2]) {
      this.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
    // Unfinished jobs of every tenant (sparse): what the recovery sweep reads.
    const { gsi3 } = TABLE_KEYS;
    this.addGlobalSecondaryIndex({
      indexName: gsi3.name,
      partitionKey: { name: gsi3.partitionKey, type: AttributeType.STRING },
      sortKey: { name: gsi3.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...gsi3.projected],
    });
  }
}
