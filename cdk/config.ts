/**
 * The app's settings, read once from CDK context (`cdk.json` or `--context key=value`)
 * and checked, so a typo fails the synth with the key's name instead of deploying a default.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { ConfigError } from './errors.ts';

/** The context keys the app reads. */
export const CONTEXT_KEYS = {
  /** `'retain'` (default) or `'destroy'`: what happens to stateful resources when they leave the stack. */
  removalPolicy: 'belay:removalPolicy',
  /** Days to keep function logs; one of CloudWatch's retention values. Default 30. */
  logRetentionDays: 'belay:logRetentionDays',
  /** `true` runs cdk-nag's AwsSolutions pack at synth. Default false. */
  nag: 'belay:nag',
} as const;

/** The removal policies the app supports: keep data (default) or throw it away with the stack. */
export type BelayRemovalPolicy = RemovalPolicy.RETAIN | RemovalPolicy.DESTROY;

/** Settings read from context. */
export interface BelayConfig {
  /** Removal policy of the ledger table and the log groups; RETAIN also turns on deletion protection. */
  readonly removalPolicy: BelayRemovalPolicy;
  /** Retention of every function's log group. */
  readonly logRetention: RetentionDays;
  /** Whether cdk-nag's AwsSolutions pack runs at synth. */
  readonly nag: boolean;
}

/** What the app uses when a key is not set. */
export const DEFAULT_CONFIG: BelayConfig = Object.freeze({
  removalPolicy: RemovalPolicy.RETAIN,
  logRetention: RetentionDays.ONE_MONTH,
  nag: false,
});

const RETENTION_VALUES: readonly number[] = Object.values(RetentionDays).filter(
  (v): v is number => typeof v === 'number',
);

/**
 * Reads and validates the `belay:*` context visible from `scope`.
 *
 * @throws ConfigError naming the key and the accepted values when a value is malformed.
 */
export function readConfig(scope: IConstruct): BelayConfig {
  const context = (key: string): unknown => scope.node.tryGetContext(key);
  return {
    removalPolicy: parseRemovalPolicy(context(CONTEXT_KEYS.removalPolicy)),
    logRetention: parseLogRetention(context(CONTEXT_KEYS.logRetentionDays)),
    nag: parseNag(context(CONTEXT_KEYS.nag)),
  };
}

/** Parses `belay:removalPolicy`: `'retain'` | `'destroy'`, default retain. */
export function parseRemovalPolicy(value: unknown): BelayRemovalPolicy {
  if (value === undefined) return DEFAULT_CONFIG.removalPolicy;
  if (value === 'retain') return RemovalPolicy.RETAIN;
  if (value === 'destroy') return RemovalPolicy.DESTROY;
  throw new ConfigError(CONTEXT_KEYS.removalPolicy, value, "'retain' or 'destroy'");
}

/** Parses `belay:logRetentionDays`: a CloudWatch Logs retention in days (number or numeric string), default 30. */
export function parseLogRetention(value: unknown): RetentionDays {
  if (value === undefined) return DEFAULT_CONFIG.logRetention;
  const days = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof days === 'number' && RETENTION_VALUES.includes(days)) return days as RetentionDays;
  throw new ConfigError(
    CONTEXT_KEYS.logRetentionDays,
    value,
    `a CloudWatch Logs retention in days (one of ${RETENTION_VALUES.join(', ')}; 9999 keeps logs forever)`,
  );
}

/** Parses `belay:nag`: `true`/`false` (boolean or string, as `--context` passes strings), default false. */
export function parseNag(value: unknown): boolean {
  if (value === undefined) return DEFAULT_CONFIG.nag;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new ConfigError(CONTEXT_KEYS.nag, value, "'true' or 'false'");
}
