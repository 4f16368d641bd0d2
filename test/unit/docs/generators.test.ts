/**
 * The docs' generated references come from the code: the state machine's chart from the ASL,
 * the schema page from the JSON Schema, the API page from the OpenAPI document, the CLI pages
 * from each command's own help, the CDK context keys from `cdk/config.ts`. A change in the source changes the page (no hand edit).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS } from '../../../cdk/config.ts';
import { buildOpenApiDocument } from '../../../lambdas/lib/api/openapi.ts';
import { ACTION_KEYS } from '../../../lambdas/lib/playbooks/declarative/schema.ts';
import { cdkContextPage, contextKeysOf } from '../../../tools/docs/cdk-context-page.ts';
import { belayHelp, type CliCommand, cliPage, crawl, subcommandsOf } from '../../../tools/docs/cli-pages.ts';
import { openApiPage, operationsOf } from '../../../tools/docs/openapi-page.ts';
import { schemaPage } from '../../../tools/docs/schema-page.ts';
import { type AslDefinition, stateMachineChart } from '../../../tools/docs/state-machine-chart.ts';

const root = join(import.meta.dirname, '../../..');

describe('Docs: generated references', () => {
  it('draws every state and route of the job state machine from its ASL file', () => {
    const asl = JSON.parse(readFileSync(join(root, 'statemachine/job.asl.json'), 'utf8')) as AslDefinition;
    const chart = stateMachineChart(asl);
    for (const state of Object.keys(asl.States)) expect(chart).toMatch(new RegExp(`\\b${state}\\b`));
    expect(chart).toContain('Route -- "needs_approval" --> AwaitApproval');
    const changed = structuredClone(asl);
    (changed.States.Route as { Default?: string }).Default = 'Succeeded';
    expect(stateMachineChart(changed)).toContain('Route -- "otherwise" --> Succeeded');
  });

  it('describes every action form and the targets of the declarative schema, and follows a changed schema', () => {
    const schema = JSON.parse(readFileSync(join(root, 'playbooks/playbook.schema.json'), 'utf8'));
    const page = schemaPage(schema, 'playbooks/playbook.schema.json');
    for (const key of ACTION_KEYS) expect(page).toContain(`the \`${key}\` form`);
    expect(page).toMatch(/^## Target \{#target\}$/m);
    expect(page).toContain('`idempotencyKey`');
    const small = {
      type: 'object',
      properties: { name: { type: 'string', description: 'what it is called' } },
    };
    expect(schemaPage(small, 's.json')).toContain('| `name` | string |  |  | what it is called |');
    const grown = {
      ...small,
      properties: { ...small.properties, colour: { type: 'string', enum: ['red'] } },
    };
    expect(schemaPage(grown, 's.json')).toContain('| `colour` | `"red"` |');
  });

  it('lists every operation of the OpenAPI document', () => {
    const doc = buildOpenApiDocument();
    const page = openApiPage(doc);
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(20);
    for (const op of ops) expect(page).toContain(`| \`${op.method}\` | \`${op.path}\` |`);
    expect(page).toContain('<OASpec :spec="spec" />');
  });

  it("writes each command's help and its subcommands' from the commander definitions", async () => {
    expect(
      subcommandsOf(
        'Usage: x\n\nCommands:\n  jobs   do jobs\n  approve [options] <id>  ok\n  help [command]  h\n',
      ),
    ).toEqual(['jobs', 'approve']);
    const belay: CliCommand = { page: 'belay', invocation: 'npx belay', summary: 's', help: belayHelp() };
    const helps = await crawl(belay);
    const page = cliPage(belay, helps);
    expect(helps.map((h) => h.path.join(' '))).toEqual(
      expect.arrayContaining(['jobs submit', 'approve', 'mfa']),
    );
    expect(page).toContain('## npx belay jobs');
    expect(page).toMatch(/--wait/);
  });

  it('lists every context key the CDK app reads, with the TSDoc written over it', () => {
    const keys = contextKeysOf(readFileSync(join(root, 'cdk/config.ts'), 'utf8'));
    expect(keys.map((k) => k.key)).toEqual(Object.values(CONTEXT_KEYS));
    const page = cdkContextPage(keys);
    for (const key of Object.values(CONTEXT_KEYS))
      expect(page).toMatch(new RegExp(`^\\| \`${key}\` \\| \\S`, 'm'));
    const grown = contextKeysOf(
      "export const CONTEXT_KEYS = {\n  /** How loud: quiet | loud. */\n  volume: 'belay:volume',\n} as const;\n",
    );
    expect(cdkContextPage(grown)).toContain('| `belay:volume` | How loud: quiet \\| loud. |');
  });
});
