/**
 * `npm run playbook -- freeze <id> [--job <jobId>] [--out <file>]`: loads the playbook, reads
 * the recorded path of its agent steps (`freeze-source.ts`), converts it (`freeze.ts`), checks
 * the result as the loader would (schema, references, compile), and only then writes the file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createLedger } from '../../lambdas/lib/ledger/index.ts';
import { compileDeclarative } from '../../lambdas/lib/playbooks/declarative/compile.ts';
import { parseDeclarative } from '../../lambdas/lib/playbooks/declarative/read.ts';
import { playbookDirs } from '../../lambdas/lib/playbooks/discovery/find.ts';
import { loadPlaybooks } from '../../lambdas/lib/playbooks/discovery/load.ts';
import { displayPath } from '../../lambdas/lib/playbooks/discovery/paths.ts';
import { registerSdkResolution } from '../../lambdas/lib/playbooks/discovery/register.ts';
import { REPO_ROOT } from '../../lambdas/lib/playbooks/discovery/repo.ts';
import { createDocumentClient } from '../../local/dynamodb.ts';
import { localStackState } from '../cli/keys.ts';
import { FreezeError, freezePlaybook, frozenName } from './freeze.ts';
import { pathsFromCache, pathsFromJob } from './freeze-source.ts';

export interface FreezeOptions {
  job?: string;
  out?: string;
  playbooks: string[];
  tenant: string;
  table?: string;
  endpoint?: string;
}

/** The tenant of the local stack's demo accounts and key (`local/seed.ts`). */
export const DEFAULT_FREEZE_TENANT = 'demo';

/** Where a frozen playbook goes without `--out`: a folder of its own, outside `playbooks/`. */
export const FROZEN_DIR = join(REPO_ROOT, '.local', 'frozen');

/** The ledger table: `--table`/`--endpoint`, else `TABLE_NAME`/`DYNAMODB_ENDPOINT`, else the running local stack's. */
function tableOf(
  opts: FreezeOptions,
  env: NodeJS.ProcessEnv,
): { doc: DynamoDBDocumentClient; tableName: string } {
  const local = env.TABLE_NAME ? {} : localStackState(env);
  const tableName = opts.table ?? env.TABLE_NAME ?? local.TABLE_NAME;
  const endpoint = opts.endpoint ?? env.DYNAMODB_ENDPOINT ?? local.DYNAMODB_ENDPOINT;
  if (!tableName)
    throw new FreezeError(
      'no ledger table: start the local stack (`npm start` writes .local/stack.json), or pass --table and --endpoint (or set TABLE_NAME and DYNAMODB_ENDPOINT)',
    );
  const doc = endpoint
    ? createDocumentClient(endpoint)
    : DynamoDBDocumentClient.from(new DynamoDBClient({}), {
        marshallOptions: { removeUndefinedValues: true },
      });
  return { doc, tableName };
}

/**
 * Freezes playbook `id` and writes the file; resolves with the exit code (0 written, 1 refused, 2 usage).
 * Every refusal names what to fix and writes nothing.
 */
export async function freezeCommand(
  id: string,
  opts: FreezeOptions,
  io: { out(line: string): void; err(line: string): void } = {
    out: (l) => console.log(l),
    err: (l) => console.error(l),
  },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let table: ReturnType<typeof tableOf> | undefined;
  try {
    const dirs = playbookDirs(opts.playbooks, env);
    if (opts.playbooks.length > 0) registerSdkResolution();
    const loaded = await loadPlaybooks(dirs);
    const entry = loaded.playbooks.find((p) => `${p.playbook.name}@${p.playbook.version}` === id);
    if (!entry) {
      const known = loaded.playbooks.map((p) => `${p.playbook.name}@${p.playbook.version}`).sort();
      io.err(`unknown playbook ${id} (known: ${known.join(', ')}; --playbooks adds a folder)`);
      return 1;
    }
    if (entry.kind !== 'declarative') {
      const agent = entry.playbook.steps.find((s) => 'agent' in s);
      io.err(
        agent
          ? `${id} is a TypeScript playbook (${entry.source}): step ${agent.id}'s start, verify and probe are code, which the declarative form cannot hold; freeze works on declarative playbooks (*.playbook.yaml)`
          : `${id} is a TypeScript playbook (${entry.source}) with no agent steps: there is nothing to freeze`,
      );
      return 1;
    }
    if (opts.out !== undefined && !/\.playbook\.ya?ml$/.test(opts.out)) {
      io.err(`--out: ${opts.out} must end in .playbook.yaml (or .yml) to be found in a playbook folder`);
      return 2;
    }
    const agentSteps = entry.spec.steps.filter((s) => 'agent' in s).map((s) => s.id);
    if (agentSteps.length === 0) {
      io.err(`${id} has no agent steps: there is no recorded path to freeze`);
      return 1;
    }
    table = tableOf(opts, env);
    const paths = opts.job
      ? await pathsFromJob(
          createLedger({ doc: table.doc, tableName: table.tableName }),
          opts.tenant,
          opts.job,
          id,
          agentSteps,
          entry.spec.steps.map((s) => s.id),
        )
      : await pathsFromCache(table.doc, table.tableName, opts.tenant, id, agentSteps);
    const out = resolve(opts.out ?? join(FROZEN_DIR, `${frozenName(entry.spec.name)}.playbook.yaml`));
    const frozen = freezePlaybook(entry.spec, paths, {
      from: opts.job
        ? `job ${opts.job} (tenant ${opts.tenant})`
        : `the action cache of tenant ${opts.tenant}`,
      source: entry.source,
      schemaFile: join(REPO_ROOT, 'playbooks', 'playbook.schema.json'),
      outDir: dirname(out),
    });
    // Checked as the loader checks a file before it is written: a file that would not load is never left behind.
    const parsed = parseDeclarative(frozen.text);
    if (!parsed.ok) throw new Error(`the frozen playbook does not load: ${parsed.problems.join('; ')}`);
    compileDeclarative(parsed.spec, displayPath(out));
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, frozen.text);
    const frozenId = `${frozen.spec.name}@${frozen.spec.version}`;
    io.out(`wrote ${frozenId} to ${displayPath(out)}`);
    for (const f of frozen.frozen)
      io.out(`  ${f.step}: frozen, ${f.actions} action${f.actions === 1 ? '' : 's'} from ${f.from}`);
    for (const k of frozen.kept) io.out(`  ${k.step}: kept as an agent step: ${k.reason}`);
    io.out(`check it: npm run playbook -- test ${frozenId} --playbooks ${displayPath(dirname(out))}`);
    return 0;
  } catch (err) {
    if (err instanceof FreezeError) {
      io.err(err.message);
      return 1;
    }
    io.err((err as Error).message);
    return 2;
  } finally {
    table?.doc.destroy();
  }
}
