/**
 * `npm run playbook -- test <id>`: proves a playbook durable on the local stack before anyone
 * runs it for real (see `verdicts.ts` for what each run proves). `npm run playbook -- schema`
 * prints the JSON Schema of the declarative form (for editors). `npm run playbook -- freeze <id>`
 * writes an agent playbook's recorded path as a declarative playbook that runs with no model
 * (`freeze-command.ts`).
 *
 * Exit status of test: 0 when every step is safe to retry, 1 when one is not, 2 on a usage
 * error; of freeze: 0 written, 1 refused (the message says what to fix), 2 any other error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { type ApplicationConfig, configuredApplications } from '../../lambdas/lib/engine/applications.ts';
import { declarativeJsonSchema } from '../../lambdas/lib/playbooks/declarative/json-schema.ts';
import { registerSdkResolution } from '../../lambdas/lib/playbooks/discovery/register.ts';
import { freePorts } from '../../local/ports.ts';
import { startLocalStack } from '../../local/stack.ts';
import { createClient } from '../cli/belay/client.ts';
import { committingRequests } from './committing.ts';
import { type DriveOptions, runAll } from './drive.ts';
import { type DropProxy, startDropProxy } from './drop-proxy.ts';
import { DEFAULT_FREEZE_TENANT, FROZEN_DIR, type FreezeOptions, freezeCommand } from './freeze-command.ts';
import { inputsPerRun } from './inputs.ts';
import { type AccountOption, accountsByApp, collect, collectAccount, readJsonFile } from './options.ts';
import { formatValidated, validatePaths } from './validate.ts';
import {
  formatVerdicts,
  planScenarios,
  type RunOutcome,
  type Scenario,
  scenarioName,
  verdicts,
} from './verdicts.ts';

const program = new Command()
  .name('npm run playbook --')
  .description('Check playbooks before anyone runs them for real.');

program
  .command('schema')
  .description('print the JSON Schema of the declarative playbook form (*.playbook.yaml / .json)')
  .action(() => {
    console.log(JSON.stringify(declarativeJsonSchema(), null, 2));
  });

program
  .command('validate <paths...>')
  .description(
    "check playbooks with no stack: each declarative file's schema, compile and lints (a write's probe that names neither an input nor the key, a write whose expect an earlier record satisfies, a within that may find several elements), and each TypeScript playbook folder's module; exit 1 when one has a problem",
  )
  .addHelpText(
    'after',
    `
Examples:
  npm run playbook -- validate playbooks/
  npm run playbook -- validate my-playbooks/expenses.playbook.yaml`,
  )
  .action(async (paths: string[]) => {
    registerSdkResolution();
    const { results, missing } = await validatePaths(paths);
    if (results.length > 0) console.log(formatValidated(results));
    for (const m of missing) console.error(m);
    process.exitCode = missing.length > 0 ? 2 : results.every((r) => r.problems.length === 0) ? 0 : 1;
  });

program
  .command('freeze <playbook>')
  .description(
    "write the recorded path of a declarative agent playbook (<name>@<version>) as a declarative playbook <name>-frozen whose agent steps are scripted steps that run with no model; a step whose path asked a person or was healed, or did something the scripted form cannot, stays an agent step, marked with a comment. The path comes from a verified job's ledger (--job) or else the newest verified action-cache entry of each agent step for the tenant",
  )
  .option('--job <jobId>', "freeze this job's path (a job of the playbook whose agent steps verified)")
  .option(
    '--out <file>',
    `where to write it (default: ${FROZEN_DIR.replace(/.*\/\.local\//, '.local/')}/<name>-frozen.playbook.yaml)`,
  )
  .option('--playbooks <dir>', 'a folder of playbooks besides playbooks/ (repeatable)', collect, [])
  .option(
    '--tenant <id>',
    "the tenant whose job or cache it reads (demo: the local stack's demo tenant)",
    DEFAULT_FREEZE_TENANT,
  )
  .option(
    '--table <name>',
    "ledger table (default: $TABLE_NAME, else the running local stack's .local/stack.json)",
  )
  .option(
    '--endpoint <url>',
    "DynamoDB endpoint (default: $DYNAMODB_ENDPOINT, else the running local stack's)",
  )
  .addHelpText(
    'after',
    `
Examples:
  npm run playbook -- freeze crm-contact-decl@1 --job job_123
  npm run playbook -- freeze crm-contact-decl@1 --out my-playbooks/crm-contact-decl-frozen.playbook.yaml
  npm run playbook -- test crm-contact-decl-frozen@1 --playbooks .local/frozen`,
  )
  .action(async (id: string, opts: FreezeOptions) => {
    process.exitCode = await freezeCommand(id, opts);
  });

interface TestOptions {
  playbooks: string[];
  inputs?: string;
  account: AccountOption[];
  applications?: string;
  steps?: string;
  parallel: number;
  jobTimeout: number;
  drop: boolean;
  mark?: string;
}

program
  .command('test <playbook>')
  .description(
    "run the playbook on the local stack clean, then with its worker killed before, in the middle of and after each step, its browser lost before each step, and each write's answer dropped after the site committed it; print a table per step; exit 1 when a step is not safe to retry",
  )
  .option('--playbooks <dir>', 'a folder of playbooks besides playbooks/ (repeatable)', collect, [])
  .option(
    '--inputs <file>',
    "the job's inputs (JSON): an object, whose first free-text input each run marks with the run (see --mark), or a list with one inputs object per run; default: the playbook's exampleInputs",
  )
  .option(
    '--mark <input>',
    "the input each run marks with the run so that no run meets an earlier run's records (a dotted path, e.g. shippingAddress.name; default: the first free-text input that stays valid), or none",
  )
  .option(
    '--account <app=account>',
    'the account per application: an account id of the demo tenant, or @file.json with {username, password, totpSecret?} (repeatable; default: the first account connected for it)',
    collectAccount,
    [],
  )
  .option('--applications <json>', 'target applications over the demo sites (as npm start --applications)')
  .option('--steps <ids>', 'only fault these steps (comma-separated)')
  .option(
    '--parallel <n>',
    'jobs at a time, at most one per account (give several --account for one application)',
    (v) => Number(v),
    3,
  )
  .option('--job-timeout <s>', 'seconds a job may take', (v) => Number(v), 240)
  .option(
    '--no-drop',
    "leave the applications out of the loopback proxy that drops a write's answer (no drop runs)",
  )
  .action(async (id: string, opts: TestOptions) => {
    process.exitCode = await testPlaybook(id, opts);
  });

async function testPlaybook(id: string, opts: TestOptions): Promise<number> {
  let applications: Record<string, ApplicationConfig>;
  try {
    applications = configuredApplications(process.env.BELAY_APPLICATIONS, opts.applications);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'belay-playbook-test-'));
  const say = (line: string): void => console.log(line);
  // Every http application (the demo sites on ports chosen here, and the configured ones)
  // behind its own loopback proxy, which can drop a write's answer after the site committed it.
  const [shop, crm, billing] = (await freePorts(3)) as [number, number, number];
  const proxies: Record<string, DropProxy> = {};
  const stopProxies = async (): Promise<void> => {
    await Promise.all(Object.values(proxies).map((p) => p.stop()));
  };
  if (opts.drop) {
    const upstreams: Record<string, string> = {
      shop: `http://127.0.0.1:${shop}`,
      crm: `http://127.0.0.1:${crm}`,
      billing: `http://127.0.0.1:${billing}`,
      ...Object.fromEntries(Object.entries(applications).map(([app, c]) => [app, c.baseUrl])),
    };
    for (const [app, base] of Object.entries(upstreams)) {
      const url = new URL(base);
      if (url.protocol !== 'http:') continue;
      const proxy = await startDropProxy(url.origin);
      proxies[app] = proxy;
      applications[app] = { ...applications[app], baseUrl: proxy.url + base.slice(url.origin.length) };
    }
  }
  say(`starting the local stack (data in ${dataDir})`);
  let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
  try {
    stack = await startLocalStack({
      dataDir,
      fresh: true,
      resume: false,
      apiPort: 0,
      ports: { anchor: 0, shop, crm, billing, dynamodb: 0, sfn: 0 },
      lambdaMode: 'warm',
      playbookDirs: opts.playbooks,
      applications,
      // Retries without the production pauses: a crash is retried at once.
      retryIntervalMs: 150,
      waitTimeOverrides: { RetryBackoff: 200, FinishBackoff: 200, WaitForCapacity: 500 },
      env: { BELAY_RETRY_BACKOFF_SECONDS: '0', BELAY_CAPACITY_POLL_SECONDS: '1', LOG_LEVEL: 'error' },
    });
  } catch (err) {
    console.error(`the local stack did not start: ${(err as Error).message}`);
    await stopProxies();
    await rm(dataDir, { recursive: true, force: true });
    return 2;
  }
  const s = stack;
  // Ctrl-C stops what the command started (browsers, DynamoDB Local, workers) before exiting.
  const interrupted = (signal: string): void => {
    say(`${signal}: stopping the local stack`);
    void s
      .stop({ endSessions: true })
      .finally(stopProxies)
      .finally(() => rm(dataDir, { recursive: true, force: true }))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', () => interrupted('SIGINT'));
  process.once('SIGTERM', () => interrupted('SIGTERM'));
  try {
    const playbook = s.playbooks.registry.get(id);
    // The API as `belay` calls it (its errors name the status and the API's code).
    const client = createClient(s.apiUrl ?? '', s.demoApiKey);
    const inputs = opts.inputs ? await readJsonFile(opts.inputs, '--inputs') : playbook.exampleInputs;
    if (inputs === undefined) {
      console.error(`${id} has no exampleInputs: give --inputs <file>`);
      return 2;
    }
    // Accounts by application; each lane of parallel jobs gets its own (jobs on one account
    // would share its cart, its records: they would interfere, not prove anything).
    const { byApp: accounts } = await accountsByApp(opts.account, async (app, credentials) => {
      const made = await client.request('POST', '/accounts', {
        application: app,
        label: `${app} (playbook test)`,
        credentials,
      });
      return (made.account as { accountId: string }).accountId;
    });
    const connected = ((await client.request('GET', '/accounts')).accounts ?? []) as {
      accountId: string;
      application: string;
      status: string;
    }[];
    for (const app of Object.keys(playbook.applications)) {
      if (accounts[app]) continue;
      // The demo accounts whose sign-in needs no person (the plain and TOTP ones).
      const found = connected.filter(
        (a) => a.application === app && a.status === 'connected' && !/_sms$|_outbox$/.test(a.accountId),
      );
      if (found.length === 0) {
        console.error(`no account for ${app}: give --account ${app}=@credentials.json`);
        return 2;
      }
      accounts[app] = found.map((a) => a.accountId);
    }
    const lanes = Math.max(1, Math.min(opts.parallel, ...Object.values(accounts).map((l) => l.length)));
    const laneAccounts = (lane: number): Record<string, string> =>
      Object.fromEntries(Object.entries(accounts).map(([app, list]) => [app, list[lane] as string]));
    const scenarios = planScenarios(
      playbook,
      opts.steps?.split(',').map((x) => x.trim()),
      (app) => app in proxies,
    );
    // The clean run, then the same inputs again (the first run's records are there now), one
    // after the other; then the faults; a dropped answer is counted at the application's proxy,
    // matching the committing request the clean run recorded: those runs go one at a time, last.
    const first = scenarios.filter((sc) => sc.fault === 'clean' || sc.fault === 'repeat');
    const drops = scenarios.filter((sc) => sc.fault === 'drop-response');
    const others = scenarios.filter((sc) => !first.includes(sc) && !drops.includes(sc));
    const ordered = [...first, ...others, ...drops];
    const runId = Date.now().toString(36);
    const perRun = inputsPerRun(playbook, inputs, ordered.length, runId, opts.mark);
    // The repeat takes the clean run's inputs: that is what it is for.
    const inputsOf = (sc: Scenario, i: number): unknown => perRun.inputs[sc.fault === 'repeat' ? 0 : i];
    say(
      `${id}: ${playbook.steps.length} steps, ${scenarios.length} runs (${lanes} at a time, one account each${drops.length ? `; the ${drops.length} with a dropped answer one at a time` : ''}), accounts ${JSON.stringify(laneAccounts(0))}${lanes > 1 ? ' ...' : ''}`,
    );
    say(
      perRun.marked
        ? `each run's inputs are its own: ${perRun.marked} is marked with the run`
        : Array.isArray(inputs)
          ? 'each run takes its own inputs from the --inputs list'
          : "every run has the same inputs (no free-text input takes a mark): an earlier run's records may satisfy a later run; give --inputs a list",
    );
    const drive: DriveOptions = {
      stack: s,
      client,
      playbook,
      jobTimeoutMs: opts.jobTimeout * 1000,
      proxies,
      committing: {},
    };
    const progress =
      (offset: number) =>
      (o: (typeof outcomes)[number], done: number): void => {
        const mark = o.status === 'SUCCEEDED' ? 'ok' : o.status;
        const commits =
          o.commits === undefined
            ? ''
            : `, ${o.commits} committed write${o.commits === 1 ? '' : 's'}${o.commitsAs ? ` (${o.commitsAs})` : ''}${o.background ? `; background ${o.background}` : ''}`;
        say(
          `  [${offset + done}/${scenarios.length}] ${scenarioName(playbook, o.scenario)}: ${mark}${o.scenario.fault !== 'clean' && o.scenario.fault !== 'repeat' && !o.struck ? ' (fault did not strike)' : ''}${commits} in ${o.seconds.toFixed(1)} s${o.detail && o.status !== 'SUCCEEDED' ? ` — ${o.detail}` : ''}`,
        );
      };
    const batch = async (list: Scenario[], at: number, width: number): Promise<RunOutcome[]> =>
      runAll(
        drive,
        list,
        width,
        laneAccounts,
        (_sc, i) => `pbtest-${runId}-${at + i}`,
        (sc, i) => inputsOf(sc, at + i),
        progress(at),
      );
    const outcomes = await batch(first, 0, 1);
    outcomes.push(...(await batch(others, first.length, lanes)));
    drive.committing = committingRequests(
      playbook,
      outcomes.find((o) => o.scenario.fault === 'clean'),
    );
    outcomes.push(...(await batch(drops, first.length + others.length, 1)));
    const list = verdicts(playbook, outcomes);
    say('');
    const clean = outcomes.find((o) => o.scenario.fault === 'clean');
    say(formatVerdicts(id, list, clean));
    return list.every((v) => v.safe) && clean?.status === 'SUCCEEDED' ? 0 : 1;
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  } finally {
    say('stopping the local stack');
    await s.stop({ endSessions: true });
    await stopProxies();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await program.parseAsync();
