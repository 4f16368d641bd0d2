/**
 * The app's settings, read once from CDK context (`cdk.json` or `--context key=value`)
 * and checked, so a typo fails the synth with the key's name instead of deploying a default.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { parseModelSpec } from '../lambdas/lib/agent/model-spec.ts';
import { isPlanName, type PlanName } from '../lambdas/lib/capacity/plans.ts';
import { type ApplicationsConfig, parseApplications } from './config-applications.ts';
import { parsePlaybookDirs } from './config-playbooks.ts';
import { ConfigError } from './errors.ts';

export type { ApplicationConfig, ApplicationsConfig } from './config-applications.ts';

/** The context keys the app reads. */
export const CONTEXT_KEYS = {
  /** `'retain'` (default) or `'destroy'`: what happens to stateful resources when they leave the stack. */
  removalPolicy: 'belay:removalPolicy',
  /** Days to keep function logs; one of CloudWatch's retention values. Default 30. */
  logRetentionDays: 'belay:logRetentionDays',
  /** `true` runs cdk-nag's AwsSolutions pack at synth. Default false. */
  nag: 'belay:nag',
  /**
   * The target applications jobs may work in: `{ "<name>": { "baseUrl": "https://...",
   * "allowedDomains"?: ["*.example.com"] } }` (an object in cdk.json, JSON with `--context`).
   * Default: none, and a synth warning (every job then fails at Start as misconfigured).
   */
  applications: 'belay:applications',
  /** Steady-state requests per second of the HTTP API's default stage (all callers together). Default 50. */
  apiRateLimit: 'belay:apiRateLimit',
  /** Burst of the HTTP API's default stage. Default 100. */
  apiBurstLimit: 'belay:apiBurstLimit',
  /** Anchor's API base URL (`ANCHORBROWSER_BASE_URL`), https. Default: the SDK's own. */
  anchorBaseUrl: 'belay:anchorBaseUrl',
  /** Plan of a tenant with none recorded: free | starter | growth | enterprise. Default free. */
  defaultPlan: 'belay:defaultPlan',
  /**
   * Provisioned concurrency of RunStep (0-1000): that many environments initialized ahead of
   * any invocation, so a step retried after its worker died (or the next step of a job) does not
   * wait for a cold start. Billed while provisioned. Default 0 (on-demand only).
   */
  provisionedRunSteps: 'belay:provisionedRunSteps',
  /**
   * Playbook folders bundled into the handlers besides the repository's `playbooks/` (and
   * `BELAY_PLAYBOOKS_DIRS`): a folder, several comma-separated, or a JSON list. Default none.
   */
  playbooks: 'belay:playbooks',
  /**
   * Models agent steps may use besides `local` (`bedrock:<model id>`, comma-separated or a
   * list). RunStep may invoke exactly the Bedrock ones. Default: none (`local` only).
   */
  agentModels: 'belay:agentModels',
  /**
   * Scheduled drift checks, per playbook: `{ "<name@version>": { "schedule": "rate(1 day)",
   * "tenant": "<tenant>", "accounts": { "<app>": "<accountId>" }, "inputs"?: {...} } }`. Each runs
   * the playbook read-only against the live site on its schedule (an EventBridge rule). Default
   * none: no schedule and no function.
   */
  checks: 'belay:checks',
  /**
   * `true` starts every function with `NODE_OPTIONS=--enable-source-maps`: stack traces name
   * the TypeScript files, at a cost on every cold start and every stack trace (RunStep's browser
   * library takes one per call). Default false: traces name the bundle's lines, and the source
   * map shipped beside each bundle (`index.mjs.map`) maps them back.
   */
  sourceMaps: 'belay:sourceMaps',
  /**
   * Tenants whose agents may answer approvals, one-time codes and reviews through MCP (with an
   * approver key that did not submit the job): a list or a comma-separated string of tenant
   * ids. Default: none, and people answer them all.
   */
  mcpAnswerTenants: 'belay:mcpAnswerTenants',
  /**
   * Path of a Node binary that is the functions' runtime: the Node of Lambda's `nodejs22.x`
   * (same version, on ARM64 like the functions). Each bundle then ships V8's compile cache built
   * by it (`.node-compile-cache/` beside `index.mjs`) and starts with `NODE_COMPILE_CACHE`
   * pointing at it, so a cold start deserializes the bundle and playwright-core instead of
   * compiling them. A cache that does not match the runtime is passed over silently (see
   * DESIGN.md, "Cold starts on Lambda's Node"). Default: none, no cache.
   */
  lambdaNode: 'belay:lambdaNode',
  /**
   * The Lambda runtime version to pin every function to (runtime management `Manual`, an ARN
   * `arn:aws:lambda:<region>::runtime:<id>`): the one whose Node is `belay:lambdaNode`, so the
   * compile cache keeps matching until the next deploy. Default: automatic runtime updates.
   */
  lambdaRuntimeVersion: 'belay:lambdaRuntimeVersion',
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
  /** Target applications by name (`BELAY_APPLICATIONS` of the handlers). */
  readonly applications: ApplicationsConfig;
  /** Default stage throttling of the HTTP API. */
  readonly apiThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Anchor's API base URL; undefined = the SDK's default (`https://api.anchorbrowser.io`). */
  readonly anchorBaseUrl?: string;
  /** Plan of tenants with none recorded (`BELAY_DEFAULT_PLAN`). */
  readonly defaultPlan: PlanName;
  /** Provisioned concurrency of RunStep (0: none; the state machine then invokes the function itself). */
  readonly provisionedRunSteps: number;
  /** Playbook folders besides the repository's (absolute). */
  readonly playbookDirs: readonly string[];
  /** Model specs agent steps may use besides `local` (`BELAY_AGENT_MODELS`). */
  readonly agentModels: readonly string[];
  /** Scheduled drift checks (`belay:checks`); none by default. */
  readonly checks: readonly ScheduledCheckConfig[];
  /** Whether the functions run with `--enable-source-maps`. */
  readonly sourceMaps: boolean;
  /** Tenants whose agents may answer people's waits through MCP (`BELAY_MCP_ANSWER_TENANTS` of the API). */
  readonly mcpAnswerTenants: readonly string[];
  /** The runtime's Node binary, which builds each bundle's compile cache (absolute path). */
  readonly lambdaNode?: string;
  /** The runtime version ARN the functions are pinned to. */
  readonly lambdaRuntimeVersion?: string;
}

/** What the app uses when a key is not set. */
export const DEFAULT_CONFIG: BelayConfig = Object.freeze({
  removalPolicy: RemovalPolicy.RETAIN,
  logRetention: RetentionDays.ONE_MONTH,
  nag: false,
  applications: Object.freeze({}),
  apiThrottle: Object.freeze({ rateLimit: 50, burstLimit: 100 }),
  defaultPlan: 'free',
  provisionedRunSteps: 0,
  playbookDirs: Object.freeze([]),
  agentModels: Object.freeze([]),
  checks: Object.freeze([]),
  sourceMaps: false,
  mcpAnswerTenants: Object.freeze([]),
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
    applications: parseApplications(CONTEXT_KEYS.applications, context(CONTEXT_KEYS.applications)),
    apiThrottle: parseApiThrottle(context(CONTEXT_KEYS.apiRateLimit), context(CONTEXT_KEYS.apiBurstLimit)),
    ...optional('anchorBaseUrl', parseAnchorBaseUrl(context(CONTEXT_KEYS.anchorBaseUrl))),
    defaultPlan: parseDefaultPlan(context(CONTEXT_KEYS.defaultPlan)),
    provisionedRunSteps: parseProvisionedRunSteps(context(CONTEXT_KEYS.provisionedRunSteps)),
    playbookDirs: parsePlaybookDirs(CONTEXT_KEYS.playbooks, context(CONTEXT_KEYS.playbooks)),
    agentModels: parseAgentModels(context(CONTEXT_KEYS.agentModels)),
    checks: parseChecks(context(CONTEXT_KEYS.checks)),
    sourceMaps: parseBoolean(
      CONTEXT_KEYS.sourceMaps,
      context(CONTEXT_KEYS.sourceMaps),
      DEFAULT_CONFIG.sourceMaps,
    ),
    mcpAnswerTenants: parseMcpAnswerTenants(context(CONTEXT_KEYS.mcpAnswerTenants)),
    ...optional('lambdaNode', parseLambdaNode(context(CONTEXT_KEYS.lambdaNode))),
    ...optional(
      'lambdaRuntimeVersion',
      parseLambdaRuntimeVersion(context(CONTEXT_KEYS.lambdaRuntimeVersion)),
    ),
  };
}

/** Parses `belay:lambdaNode`: the path of an existing file (resolved from the working directory), default none. */
export function parseLambdaNode(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value.trim() !== '' && existsSync(resolve(value))) return resolve(value);
  throw new ConfigError(
    CONTEXT_KEYS.lambdaNode,
    value,
    "the path of the Node binary of the functions' runtime",
  );
}

/** Parses `belay:lambdaRuntimeVersion`: a Lambda runtime version ARN, default none. */
export function parseLambdaRuntimeVersion(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && /^arn:aws[a-z-]*:lambda:[a-z0-9-]+::runtime:[0-9a-f]+$/.test(value))
    return value;
  throw new ConfigError(
    CONTEXT_KEYS.lambdaRuntimeVersion,
    value,
    'a runtime version ARN, arn:aws:lambda:<region>::runtime:<id>',
  );
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
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
  return parseBoolean(CONTEXT_KEYS.nag, value, DEFAULT_CONFIG.nag);
}

/** Parses a `true`/`false` key (boolean or string, as `--context` passes strings). */
function parseBoolean(key: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new ConfigError(key, value, "'true' or 'false'");
}

/**
 * Parses `belay:apiRateLimit` and `belay:apiBurstLimit`: positive integers (numbers or numeric
 * strings), the burst at least the rate. Defaults 50 and 100.
 */
export function parseApiThrottle(
  rate: unknown,
  burst: unknown,
): { readonly rateLimit: number; readonly burstLimit: number } {
  const rateLimit = parsePositiveInt(CONTEXT_KEYS.apiRateLimit, rate, DEFAULT_CONFIG.apiThrottle.rateLimit);
  const burstLimit = parsePositiveInt(
    CONTEXT_KEYS.apiBurstLimit,
    burst,
    Math.max(rateLimit, DEFAULT_CONFIG.apiThrottle.burstLimit),
  );
  if (burstLimit < rateLimit) {
    throw new ConfigError(CONTEXT_KEYS.apiBurstLimit, burst, `at least the rate limit (${rateLimit})`);
  }
  return { rateLimit, burstLimit };
}

function parsePositiveInt(key: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 1_000_000) return n;
  throw new ConfigError(key, value, 'a whole number from 1 to 1000000');
}

/** Parses `belay:anchorBaseUrl`: an https URL, default none (the SDK's own). */
export function parseAnchorBaseUrl(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    try {
      const url = new URL(value);
      if (url.protocol === 'https:' && !url.username && !url.password) return value.replace(/\/+$/, '');
    } catch {
      // reported below
    }
  }
  throw new ConfigError(CONTEXT_KEYS.anchorBaseUrl, value, 'an https URL without credentials');
}

/** Parses `belay:provisionedRunSteps`: a whole number from 0 to 1000 (number or numeric string), default 0. */
export function parseProvisionedRunSteps(value: unknown): number {
  if (value === undefined) return DEFAULT_CONFIG.provisionedRunSteps;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 1000) return n;
  throw new ConfigError(CONTEXT_KEYS.provisionedRunSteps, value, 'a whole number from 0 to 1000');
}

/** One scheduled drift check (see `belay:checks`). */
export interface ScheduledCheckConfig {
  playbook: string;
  /** An EventBridge schedule expression: `rate(...)` or `cron(...)`. */
  schedule: string;
  tenant: string;
  accounts: Record<string, string>;
  inputs?: Record<string, unknown>;
}

/** Parses `belay:checks` (an object in cdk.json, JSON with `--context`), default none. */
export function parseChecks(value: unknown): readonly ScheduledCheckConfig[] {
  if (value === undefined || value === '') return DEFAULT_CONFIG.checks;
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new ConfigError(
        CONTEXT_KEYS.checks,
        value,
        'a JSON object: { "<name@version>": { schedule, tenant, accounts } }',
      );
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(
      CONTEXT_KEYS.checks,
      value,
      'an object: { "<name@version>": { schedule, tenant, accounts } }',
    );
  return Object.entries(parsed as Record<string, unknown>).map(([playbook, spec]) => {
    const s = (spec ?? {}) as Record<string, unknown>;
    const ok =
      /@\d+$/.test(playbook) &&
      typeof s.schedule === 'string' &&
      /^(rate|cron)\(.+\)$/.test(s.schedule) &&
      typeof s.tenant === 'string' &&
      s.tenant !== '' &&
      !!s.accounts &&
      typeof s.accounts === 'object' &&
      Object.values(s.accounts).every((a) => typeof a === 'string') &&
      (s.inputs === undefined || (typeof s.inputs === 'object' && s.inputs !== null));
    if (!ok)
      throw new ConfigError(
        `${CONTEXT_KEYS.checks}.${playbook}`,
        spec,
        '{ "schedule": "rate(...)" or "cron(...)", "tenant": "<tenant>", "accounts": { "<app>": "<accountId>" }, "inputs"?: {...} } under a name@version',
      );
    return {
      playbook,
      schedule: s.schedule as string,
      tenant: s.tenant as string,
      accounts: s.accounts as Record<string, string>,
      ...(s.inputs ? { inputs: s.inputs as Record<string, unknown> } : {}),
    };
  });
}

/** Parses `belay:agentModels`: model specs (a list or a comma-separated string), default none. */
export function parseAgentModels(value: unknown): readonly string[] {
  if (value === undefined || value === '') return DEFAULT_CONFIG.agentModels;
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (Array.isArray(list) && list.every((s) => typeof s === 'string' && parseModelSpec(s) !== undefined))
    return Object.freeze([...(list as string[])]);
  throw new ConfigError(
    CONTEXT_KEYS.agentModels,
    value,
    'model specs such as bedrock:<model id>, comma-separated',
  );
}

/** Parses `belay:mcpAnswerTenants`: tenant ids (a list or a comma-separated string), default none. */
export function parseMcpAnswerTenants(value: unknown): readonly string[] {
  if (value === undefined || value === '') return DEFAULT_CONFIG.mcpAnswerTenants;
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (Array.isArray(list) && list.every((s) => typeof s === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(s)))
    return Object.freeze([...new Set(list as string[])]);
  throw new ConfigError(
    CONTEXT_KEYS.mcpAnswerTenants,
    value,
    'tenant ids (1-64 of A-Z, a-z, 0-9, _, -), comma-separated',
  );
}

/** Parses `belay:defaultPlan`: free | starter | growth | enterprise, default free. */
export function parseDefaultPlan(value: unknown): PlanName {
  if (value === undefined) return DEFAULT_CONFIG.defaultPlan;
  if (isPlanName(value)) return value;
  throw new ConfigError(CONTEXT_KEYS.defaultPlan, value, "'free', 'starter', 'growth' or 'enterprise'");
}
