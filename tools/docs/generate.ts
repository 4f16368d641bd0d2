/**
 * `npm run docs:gen`: writes the docs site's generated references from the code, never by hand:
 *
 * - `reference/api.md` and `public/openapi.json`: the HTTP API, from the OpenAPI document;
 * - `reference/sdk/`: `belay/sdk`, with TypeDoc;
 * - `reference/playbook-schema.md`: the declarative form, from `playbooks/playbook.schema.json`;
 * - `reference/cli/`: every command's `--help`, from its commander definitions;
 * - `reference/local-stack.md`: `npm start -- --help`;
 * - `reference/cdk-context.md`: the CDK app's context keys, from `CONTEXT_KEYS` in `cdk/config.ts`;
 * - `reference/_state-machine.md`: the job state machine drawn from `statemachine/job.asl.json`.
 *
 * `npm run docs:build` and `npm run docs:dev` run it first; its outputs are not committed.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../../lambdas/lib/api/openapi.ts';
import { cdkContextPage, contextKeysOf } from './cdk-context-page.ts';
import { belayHelp, type CliCommand, cliIndex, cliPage, crawl, tsxHelp } from './cli-pages.ts';
import { openApiPage } from './openapi-page.ts';
import { schemaPage } from './schema-page.ts';
import { type AslDefinition, stateMachinePage } from './state-machine-chart.ts';
import { writeSdkReference } from './typedoc.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const docs = join(root, 'docs');

/** The commands of the reference, in the order a newcomer meets them. */
export function cliCommands(repo: string): CliCommand[] {
  const tsx = (entry: string): CliCommand['help'] => tsxHelp(join(repo, entry), repo);
  return [
    {
      page: 'belay',
      invocation: 'npx belay',
      summary: 'The command line over the HTTP API: jobs, decisions, accounts, keys, webhooks.',
      help: belayHelp(),
    },
    {
      page: 'playbook',
      invocation: 'npm run playbook --',
      summary:
        'Check playbooks: `validate` (no stack), `test` (durability under faults), `freeze`, `schema`.',
      help: tsx('tools/playbook/main.ts'),
    },
    {
      page: 'chaos',
      invocation: 'npm run chaos --',
      summary: 'Jobs under seeded faults, checked against the sites’ own records.',
      help: tsx('tools/chaos/main.ts'),
    },
    {
      page: 'bench',
      invocation: 'npm run bench --',
      summary: 'The benchmark: recovery, overhead, cost, concurrency, browser, agent, scale.',
      help: tsx('tools/bench/main.ts'),
    },
    {
      page: 'demo',
      invocation: 'npm run demo --',
      summary: 'The demo job end to end on a private local stack.',
      help: tsx('demo/run.ts'),
    },
    {
      page: 'keys',
      invocation: 'npm run keys --',
      summary: 'API keys made directly in the table (a tenant’s first key).',
      help: tsx('tools/cli/keys.ts'),
    },
    {
      page: 'plan',
      invocation: 'npm run plan --',
      summary: 'Capacity planning and how far one account scales.',
      help: tsx('tools/cli/plan.ts'),
    },
    {
      page: 'real-apps-wordpress',
      invocation: 'npm run real-apps:wordpress --',
      summary:
        'A private WordPress on loopback for a playbook of your own ([the walkthrough](/guides/real-app)).',
      help: tsx('tools/real-apps/wordpress-command.ts'),
    },
    {
      page: 'compile-cache',
      invocation: 'npm run compile-cache --',
      summary: "V8's compile cache of a function's bundle, built with the Node that runs it.",
      help: tsx('tools/compile-cache/main.ts'),
    },
  ];
}

async function put(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

async function main(): Promise<void> {
  const doc = buildOpenApiDocument();
  await put(join(docs, 'public/openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
  await put(join(docs, 'reference/api.md'), openApiPage(doc));

  const schemaFile = 'playbooks/playbook.schema.json';
  const schema = JSON.parse(await readFile(join(root, schemaFile), 'utf8')) as Record<string, unknown>;
  await put(join(docs, 'reference/playbook-schema.md'), schemaPage(schema, schemaFile));

  const asl = JSON.parse(await readFile(join(root, 'statemachine/job.asl.json'), 'utf8')) as AslDefinition;
  await put(join(docs, 'reference/_state-machine.md'), stateMachinePage(asl));

  const commands = cliCommands(root);
  await rm(join(docs, 'reference/cli'), { recursive: true, force: true });
  await put(join(docs, 'reference/cli/index.md'), cliIndex(commands));
  for (const command of commands)
    await put(join(docs, `reference/cli/${command.page}.md`), cliPage(command, await crawl(command)));
  const local: CliCommand = {
    page: 'local-stack',
    invocation: 'npm start --',
    summary:
      'The local stack’s options, as `npm start -- --help` prints them. What runs and where: [running the local stack](/getting-started/local-stack).',
    help: tsxHelp(join(root, 'local/main.ts'), root),
  };
  await put(join(docs, 'reference/local-stack.md'), cliPage(local, await crawl(local)));

  const config = 'cdk/config.ts';
  await put(
    join(docs, 'reference/cdk-context.md'),
    cdkContextPage(contextKeysOf(await readFile(join(root, config), 'utf8'), config), config),
  );

  await rm(join(docs, 'reference/sdk'), { recursive: true, force: true });
  await writeSdkReference(root, join(docs, 'reference/sdk'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
