/**
 * `npm run chaos -- [--runs N] [--seed S] [--json] [--concurrency C] [--playbook <id> ...]`:
 * proof under faults. Starts the local stack as a child process, runs N jobs (by default every
 * playbook of the repository's `playbooks/` folder, taking jobs in turn; any playbook the
 * folders hold with `--playbook`) through the HTTP API while a seeded injector kills step
 * workers, browsers, sign-ins, responses, layouts and the whole stack, answers the people's
 * waits through the API, and checks every job against the sites' own records (or, on a site
 * that lists none, against what each write step's probe finds by the job's key). Exit status 0
 * only if every job succeeded with exactly one side effect per write step (none for a write
 * already satisfied), no completed step ran again and no job asked a person about a write more
 * often than its retry budget allows; 2 for a bad option or a broken setup.
 */
import { Command, InvalidArgumentError } from 'commander';
import {
  type AccountOption,
  collect,
  collectAccount,
  OptionError,
  readJsonFile,
} from '../playbook/options.ts';
import { PlanError } from './plan.ts';
import { formatSummary } from './report.ts';
import { runChaos } from './run.ts';

function integer(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`an integer from ${min} to ${max}`);
    return n;
  };
}

/** `--inputs <playbookId>=<file.json>`, repeatable (the files are read once the options are parsed). */
function collectInputs(value: string, list: { playbook: string; file: string }[]): typeof list {
  const at = value.indexOf('=');
  if (at < 1 || at === value.length - 1 || !/@\d+$/.test(value.slice(0, at)))
    throw new InvalidArgumentError('expected <playbookId>=<file.json>, e.g. crm-address@1=inputs.json');
  return [...list, { playbook: value.slice(0, at), file: value.slice(at + 1) }];
}

const program = new Command()
  .name('npm run chaos --')
  .description(
    'Run jobs on the local stack under seeded faults and check them against the sites’ own records.',
  )
  .option('--runs <n>', 'jobs to run', integer(1, 500), 30)
  .option(
    '--seed <s>',
    'seed of the jobs, faults and moments (default: from the clock)',
    integer(0, 2 ** 31 - 1),
  )
  .option('--concurrency <c>', 'jobs at once', integer(1, 10), 3)
  .option(
    '--playbook <id>',
    "a playbook the jobs take in turn, as name@version (repeatable; default: every playbook of the repository's playbooks/ folder)",
    collect,
    [],
  )
  .option(
    '--playbooks <dir>',
    'a folder of playbooks besides playbooks/ (repeatable; as npm start --playbooks)',
    collect,
    [],
  )
  .option(
    '--applications <json>',
    "target applications over the demo sites (as npm start --applications); a site that does not answer GET /__admin/writes has its writes counted by what each write step's probe finds by the job's key",
  )
  .option(
    '--inputs <playbookId=file>',
    "a playbook's inputs: a JSON file of one inputs object or a list its jobs take in turn (repeatable; default: the playbook's exampleInputs, its first free-text input marked with the job's id)",
    collectInputs,
    [],
  )
  .option(
    '--account <app=account>',
    'the account per application: an account id of the demo tenant, or @file.json with {username, password, totpSecret?} (repeatable: jobs take them in turn; default: the demo tenant’s account for it)',
    collectAccount,
    [],
  )
  .option('--json', 'print the summary as JSON (progress goes to stderr)', false)
  .option(
    '--dedupe',
    'let the demo sites de-duplicate writes by key (default: they de-duplicate nothing, as most real sites, so every committed request counts)',
    false,
  )
  .option(
    '--data-dir <dir>',
    'the stack’s data directory, emptied first (default: a new temporary directory)',
  )
  .option(
    '--job-timeout <seconds>',
    'a job not finished after this long counts as stuck',
    integer(30, 3600),
    300,
  )
  .option(
    '--stall-timeout <seconds>',
    'a job showing no progress (status, ledger, workers) for this long counts as stuck',
    integer(30, 3600),
    180,
  )
  // A bad option exits 2, as a broken setup does (1 is a run that failed).
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
  .parse();
const opts = program.opts<{
  runs: number;
  seed?: number;
  concurrency: number;
  playbook: string[];
  playbooks: string[];
  applications?: string;
  inputs: { playbook: string; file: string }[];
  account: AccountOption[];
  json: boolean;
  dedupe: boolean;
  dataDir?: string;
  jobTimeout: number;
  stallTimeout: number;
}>();

const seed = opts.seed ?? Date.now() % 100_000;
const abort = new AbortController();
let interrupted = 0;
process.on('SIGINT', () => {
  interrupted++;
  if (interrupted > 1) process.exit(130);
  console.error('\nSIGINT: finishing up (jobs in flight end as stuck); Ctrl-C again to quit at once');
  abort.abort();
});

try {
  const inputs: Record<string, unknown> = {};
  for (const { playbook, file } of opts.inputs) {
    if (playbook in inputs) throw new OptionError('--inputs', `${playbook} is given twice`);
    inputs[playbook] = await readJsonFile(file, `--inputs ${playbook}`);
  }
  const summary = await runChaos({
    runs: opts.runs,
    seed,
    concurrency: opts.concurrency,
    dedupe: opts.dedupe,
    jobTimeoutMs: opts.jobTimeout * 1000,
    stallTimeoutMs: opts.stallTimeout * 1000,
    ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
    playbooks: opts.playbook,
    playbookDirs: opts.playbooks,
    ...(opts.applications ? { applications: opts.applications } : {}),
    inputs,
    accounts: opts.account,
    say: opts.json ? (line) => console.error(line) : (line) => console.log(line),
    signal: abort.signal,
  });
  if (opts.json) console.log(JSON.stringify(summary, null, 2));
  else console.log(formatSummary(summary));
  process.exitCode = summary.ok ? 0 : 1;
} catch (err) {
  if (err instanceof OptionError || err instanceof PlanError) console.error(`npm run chaos: ${err.message}`);
  else console.error(`chaos run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 2;
}
