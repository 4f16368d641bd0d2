/**
 * The bucket of job screenshots: private, encrypted, TLS only, versioning off (an object is
 * written once), objects expiring with the jobs they belong to. Functions reach it through
 * {@link bindScreenshots}: RunStep and Reconcile may only put objects under `tenants/`, the API
 * may only get them; nothing can list the bucket or delete from it (the lifecycle does).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { acknowledgeWildcardResource } from '../nag.ts';
import { checkEnvName } from './bind.ts';

/** Props of {@link ScreenshotBucket}. */
export interface ScreenshotBucketProps {
  /**
   * Days a screenshot is kept: the jobs' TTL (terminal jobs expire after 30 days) plus a margin,
   * so a job's page never outlives the job by long, and never disappears while it is shown.
   * @default 37
   */
  readonly expireAfterDays?: number;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

export class ScreenshotBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: ScreenshotBucketProps = {}) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      lifecycleRules: [
        {
          id: 'expire-with-jobs',
          prefix: 'tenants/',
          expiration: Duration.days(props.expireAfterDays ?? 37),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      autoDeleteObjects: false,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Reads are served only through the API, which logs every request (API Gateway access logs) after its tenant check; server access logs would add a second bucket for the same record.',
    });
  }
}

/** Options of {@link bindScreenshots}. */
export interface BindScreenshotsOptions {
  readonly env: string;
  /** `put` (RunStep, Reconcile) or `get` (the API). */
  readonly access: 'put' | 'get';
}

/**
 * Sets `options.env` to the bucket's name and allows exactly one object action under `tenants/`
 * (every tenant: the tenant is known only at run time and comes from the ledger, never the caller).
 */
export function bindScreenshots(
  fn: LambdaFunction,
  bucket: Bucket,
  options: BindScreenshotsOptions,
): iam.Grant {
  fn.addEnvironment(checkEnvName(fn, options.env), bucket.bucketName);
  const objects = bucket.arnForObjects('tenants/*');
  const grant = iam.Grant.addToPrincipal({
    grantee: fn,
    actions: [options.access === 'put' ? 's3:PutObject' : 's3:GetObject'],
    resourceArns: [objects],
  });
  acknowledgeWildcardResource(
    fn.role ?? fn,
    objects,
    `Screenshots of every tenant's jobs (tenants/<tenant>/jobs/<job>/...): ${options.access === 'put' ? 'RunStep and Reconcile write them' : 'the API reads one after checking the job is the caller tenant’s'}; no list, no delete.`,
  );
  return grant;
}
