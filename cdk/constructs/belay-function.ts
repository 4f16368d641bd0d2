/**
 * The house Lambda function: every Belay handler is one of these, so they all run, log,
 * trace and bundle alike.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CfnResource, type Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  type CfnFunction,
  LoggingFormat,
  Runtime,
  RuntimeManagementMode,
} from 'aws-cdk-lib/aws-lambda';
import { type ICommandHooks, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import {
  BUNDLE_ALIASES,
  BUNDLE_NODE_PATHS,
  bundleAliases,
  ESM_REQUIRE_BANNER,
  PROVIDED_MODULES,
} from '../../lambdas/bundling.ts';
import { COMPILE_CACHE_DIR, LAMBDA_TASK_ROOT } from '../../lambdas/compile-cache.ts';
import { TRACING_VARIABLE } from '../../lambdas/lib/observability/tracing.ts';
import { CONTEXT_KEYS } from '../config.ts';
import { ConfigError, RuntimeModuleError } from '../errors.ts';
import { LOCK_FILE, REPO_ROOT } from '../paths.ts';

export { ESM_REQUIRE_BANNER, PLAYWRIGHT_RUNTIME_MODULES } from '../../lambdas/bundling.ts';

/** Memory for a function that does not say: browser steps drive playwright-core over CDP. */
export const DEFAULT_MEMORY_MB = 1024;

/** Props of {@link BelayFunction}. Deliberately narrow: what differs between handlers, nothing else. */
export interface BelayFunctionProps {
  /** Absolute path of the handler's entry file (see `handlerEntry()` in `cdk/paths.ts`). */
  readonly entry: string;
  /**
   * Exported name of the handler function in `entry`.
   * @default 'handler'
   */
  readonly handler?: string;
  /**
   * How long one invocation may run. Required: a step's time budget is a design decision
   * (the state machine's task timeouts and retries are sized from it), never a default.
   */
  readonly timeout: Duration;
  /**
   * Memory in MB (CPU scales with it).
   * @default 1024
   */
  readonly memorySize?: number;
  /**
   * Environment variables. Prefer `bindTable`/`bindStateMachine`, which set a variable
   * together with the access it implies. `NODE_OPTIONS` given here is kept (after
   * `--enable-source-maps` when `sourceMaps` is on).
   * @default - none besides the tracing switch
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Start Node with `--enable-source-maps`, so stack traces name the TypeScript files. It costs
   * every cold start and every stack trace taken (the browser library takes one per call): about
   * 0.3 s of a cold RunStep on the local runner. Off, traces name the bundle's lines and the map
   * shipped beside the bundle (`index.mjs.map`) maps them back.
   * @default false
   */
  readonly sourceMaps?: boolean;
  /** What the function does, shown in the console. @default - none */
  readonly description?: string;
  /**
   * Retention of the function's log group.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Removal policy of the function's log group. Retained logs still expire with `logRetention`.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * npm packages shipped as files in `node_modules/` next to the bundle instead of being
   * bundled: for packages that read their own files at runtime. Each is copied from the
   * project's `node_modules` at bundling time (offline, at the locked version) and must
   * have no dependencies of its own.
   * @default - none
   * @example
   * runtimeModules: PLAYWRIGHT_RUNTIME_MODULES
   */
  readonly runtimeModules?: readonly string[];
  /**
   * The registry module generated for the deployment's playbooks (`registryModuleForDirs`),
   * bundled in as the handler's `#belay/playbooks`.
   * @default - none: the function runs no playbook (the authorizer, the notifier)
   */
  readonly playbookRegistry?: string;
  /**
   * The Node binary of the function's runtime (`belay:lambdaNode`): it builds V8's compile cache
   * of the bundle at bundling time (with Lambda's heap flags for `memorySize`, its entries named
   * for `/var/task`), and the function starts with `NODE_COMPILE_CACHE` on it. It must be the
   * runtime's version on ARM64, and so run on the machine that bundles.
   * @default - no compile cache
   */
  readonly lambdaNode?: string;
  /**
   * Pin the runtime to this version ARN (runtime management `Manual`): the one whose Node is
   * `lambdaNode`, so the cache keeps matching until the next deploy.
   * @default - automatic runtime updates
   */
  readonly lambdaRuntimeVersion?: string;
}

/**
 * A `NodejsFunction` with the house defaults: Node 22 on ARM64, one minified ESM bundle
 * with its source map beside it (applied by Node only with `sourceMaps`), the AWS SDK v3 left to the
 * runtime, JSON logs to an explicit log group with retention, active X-Ray tracing (with
 * `BELAY_TRACING=xray`, so the handler loads Powertools' Tracer), and local esbuild bundling
 * (no Docker).
 *
 * The function gets its own role (`<id>Role`, a sibling) holding only what it needs:
 * writing to its own log group and X-Ray; grants from `bindTable`/`bindStateMachine` add
 * to it. The log group is the sibling `<id>LogGroup`.
 *
 * @example
 * const runStep = new BelayFunction(this, 'RunStep', {
 *   entry: handlerEntry('run-step'),
 *   timeout: Duration.minutes(2),
 *   runtimeModules: PLAYWRIGHT_RUNTIME_MODULES,
 * });
 * bindTable(runStep, ledger, { env: 'LEDGER_TABLE', actions: LEDGER_WRITE });
 */
export class BelayFunction extends NodejsFunction {
  /** The execution role (also reachable as `role`, typed as the concrete Role). */
  readonly executionRole: iam.Role;

  constructor(scope: Construct, id: string, props: BelayFunctionProps) {
    // The type requires it; this catches casts and JavaScript callers before Lambda's 3 s default applies.
    if (props.timeout === undefined) throw new TypeError(`BelayFunction ${id}: timeout is required`);
    const runtimeModules = checkRuntimeModules(props.runtimeModules ?? []);
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    // Our own role instead of the default one with AWSLambdaBasicExecutionRole, whose
    // logs:* on every log group this function does not need.
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}`,
    });

    const nodeOptions = [
      props.sourceMaps ? '--enable-source-maps' : undefined,
      props.environment?.NODE_OPTIONS,
    ]
      .filter(Boolean)
      .join(' ');
    const memorySize = props.memorySize ?? DEFAULT_MEMORY_MB;
    const lambdaNode = props.lambdaNode ? checkLambdaNode(props.lambdaNode) : undefined;
    const hooks = [
      ...(runtimeModules.length > 0 ? [copyModulesHook(runtimeModules)] : []),
      // After the runtime modules are in place: the cache holds them too.
      ...(lambdaNode ? [compileCacheHook(lambdaNode, memorySize, runtimeModules)] : []),
    ];
    super(scope, id, {
      entry: props.entry,
      handler: props.handler ?? 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout,
      memorySize,
      ...(props.lambdaRuntimeVersion
        ? { runtimeManagementMode: RuntimeManagementMode.manual(props.lambdaRuntimeVersion) }
        : {}),
      description: props.description,
      // The handler loads Powertools' Tracer (and the X-Ray SDK) only where this says tracing is on.
      environment: {
        ...props.environment,
        ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
        ...(lambdaNode ? { NODE_COMPILE_CACHE: `${LAMBDA_TASK_ROOT}/${COMPILE_CACHE_DIR}` } : {}),
        [TRACING_VARIABLE]: 'xray',
      },
      role,
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      projectRoot: REPO_ROOT,
      depsLockFilePath: LOCK_FILE,
      bundling: {
        format: OutputFormat.ESM,
        // Prefer packages' ESM builds: they bundle and tree-shake better in an ESM bundle.
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        // Stack traces need the mappings, not the sources; this keeps the map small.
        sourcesContent: false,
        externalModules: [...PROVIDED_MODULES, ...runtimeModules],
        esbuildArgs: Object.fromEntries(
          Object.entries(props.playbookRegistry ? bundleAliases(props.playbookRegistry) : BUNDLE_ALIASES).map(
            ([from, to]) => [`--alias:${from}`, to],
          ),
        ),
        // A playbook folder outside the repository imports Belay's zod and playwright-core.
        environment: { NODE_PATH: BUNDLE_NODE_PATHS.join(':') },
        forceDockerBundling: false,
        commandHooks: hooks.length > 0 ? chainHooks(hooks) : undefined,
      },
    });
    this.executionRole = role;
    logGroup.grantWrite(role);
    this.enableActiveTracing(role);

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node 22 is the house runtime (DESIGN.md): every function moves to the next Node major together, ' +
        'after playwright-core and the anchorbrowser SDK are verified on it.',
    });
  }

  /**
   * Active X-Ray tracing, with its permissions in a policy of their own. The `tracing` prop
   * would put them into the role's default policy, where the nag acknowledgement of their
   * unavoidable `Resource: *` would also hide any later wildcard grant to the role.
   */
  private enableActiveTracing(role: iam.Role): void {
    const cfnFunction = this.node.defaultChild as CfnFunction;
    cfnFunction.tracingConfig = { mode: 'Active' };
    const policy = new iam.Policy(this, 'TracingPolicy', {
      roles: [role],
      statements: [
        new iam.PolicyStatement({
          actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
          resources: ['*'],
        }),
      ],
    });
    // Created only once the role may trace, as the tracing prop would order it.
    cfnFunction.addResourceDependency(policy.node.defaultChild as CfnResource, 'the role may trace');
    Validations.of(policy).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions; ' +
        'active tracing needs Resource "*" (what the Lambda tracing prop grants too).',
    });
  }
}

const NPM_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** Checks each runtime module before anything is built: a valid name, installed, no dependencies. */
function checkRuntimeModules(names: readonly string[]): readonly string[] {
  for (const name of names) {
    if (!NPM_NAME.test(name)) throw new RuntimeModuleError(name, 'is not an npm package name');
    const manifest = join(REPO_ROOT, 'node_modules', name, 'package.json');
    if (!existsSync(manifest)) {
      throw new RuntimeModuleError(name, `is not installed at ${manifest}; add it to package.json`);
    }
    const { dependencies = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    const deps = Object.keys(dependencies);
    if (deps.length > 0) {
      throw new RuntimeModuleError(
        name,
        `has dependencies (${deps.join(', ')}) that copying it would leave behind; bundle it instead`,
      );
    }
  }
  return [...new Set(names)];
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The Node of `belay:lambdaNode`, checked before anything is bundled: Node 22 on ARM64, the
 * functions' runtime (a cache built by another Node is never read).
 *
 * @throws ConfigError when it does not run, or is another version or architecture
 */
function checkLambdaNode(path: string): string {
  // Every function of the app names the same binary: it is run once per synth, not once per function.
  if (checkedNodes.has(path)) return path;
  let said: string;
  try {
    said = execFileSync(path, ['-p', 'process.version + " " + process.arch'], { encoding: 'utf8' }).trim();
  } catch (err) {
    throw new ConfigError(CONTEXT_KEYS.lambdaNode, path, 'a Node binary that runs on this machine', {
      cause: err,
    });
  }
  const [version = '', arch = ''] = said.split(' ');
  if (!version.startsWith('v22.') || arch !== 'arm64')
    throw new ConfigError(
      CONTEXT_KEYS.lambdaNode,
      path,
      `the Node of the functions' runtime, Node 22 on arm64 (this one is ${version} on ${arch})`,
    );
  checkedNodes.add(path);
  return path;
}

/** The runtime Node binaries found to be Node 22 on arm64 in this process. */
const checkedNodes = new Set<string>();

/** Builds the bundle's compile cache with the runtime's Node (`npm run compile-cache`), named for /var/task. */
export function compileCacheHook(
  node: string,
  memoryMb: number,
  runtimeModules: readonly string[],
): ICommandHooks {
  return {
    beforeBundling: (): string[] => [],
    beforeInstall: (): string[] => [],
    afterBundling: (_inputDir: string, outputDir: string): string[] => [
      [
        `cd ${quote(REPO_ROOT)} &&`,
        quote(process.execPath),
        '--import tsx tools/compile-cache/main.ts',
        `--bundle ${quote(`${outputDir}/index.mjs`)}`,
        `--node ${quote(node)}`,
        `--memory ${memoryMb}`,
        ...(runtimeModules.length > 0 ? [`--runtime-modules ${quote(runtimeModules.join(','))}`] : []),
        `--relocate ${LAMBDA_TASK_ROOT}`,
      ].join(' '),
    ],
  };
}

/** Hooks run one after another, in order. */
function chainHooks(hooks: readonly ICommandHooks[]): ICommandHooks {
  return {
    beforeBundling: (i, o) => hooks.flatMap((h) => h.beforeBundling(i, o)),
    beforeInstall: (i, o) => hooks.flatMap((h) => h.beforeInstall(i, o)),
    afterBundling: (i, o) => hooks.flatMap((h) => h.afterBundling(i, o)),
  };
}

/** Copies the runtime modules into the bundle's `node_modules` after esbuild ran. */
function copyModulesHook(names: readonly string[]): ICommandHooks {
  return {
    beforeBundling: (): string[] => [],
    beforeInstall: (): string[] => [],
    afterBundling: (inputDir: string, outputDir: string): string[] =>
      names.map((name) => {
        const target = `${outputDir}/node_modules/${name}`;
        return (
          `mkdir -p ${quote(target.slice(0, target.lastIndexOf('/')))} && ` +
          `cp -R ${quote(`${inputDir}/node_modules/${name}`)} ${quote(target)}`
        );
      }),
  };
}
