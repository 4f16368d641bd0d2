/**
 * The docs' examples are code under test (tools/docs/examples.ts): every TypeScript example
 * type-checks against `belay/sdk`, every playbook example validates and compiles, every HTTP
 * example and curl command names an operation of the OpenAPI document with a body that fits it,
 * and every `npm run` in a shell block names a script. Each check is also shown to fail on an
 * example broken on purpose.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../lambdas/lib/api/openapi.ts';
import {
  type CodeBlock,
  checkPlaybook,
  checkQuoted,
  checkRequests,
  codeBlocks,
  curlRequests,
  httpRequests,
  isExample,
  quotedFrom,
  typeCheck,
  unknownScripts,
  where,
} from '../../../tools/docs/examples.ts';

const root = join(import.meta.dirname, '../../..');
const docs = join(root, 'docs');

/** The hand-written pages (generated references are written at build time and not committed). */
function pages(dir = docs): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (!['.vitepress', 'public', 'sdk', 'cli'].includes(e.name)) out.push(...pages(p));
    } else if (e.name.endsWith('.md')) out.push(p);
  }
  return out;
}

const blocks: CodeBlock[] = pages().flatMap((p) => codeBlocks(readFileSync(p, 'utf8'), relative(docs, p)));
const examples = blocks.filter(isExample);
const tsExamples = examples.filter((b) => b.lang === 'ts' || b.lang === 'typescript');
const playbookExamples = examples.filter((b) => b.lang === 'yaml' || b.lang === 'json');
const httpExamples = examples.filter((b) => b.lang === 'http');
const shellExamples = examples.filter((b) => ['bash', 'sh', 'shell'].includes(b.lang));
const openapi = buildOpenApiDocument() as unknown as Parameters<typeof checkRequests>[0];
/** A TypeScript example broken on purpose: it must fail its check. */
const brokenTs: CodeBlock = {
  file: 'broken-on-purpose.md',
  line: 1,
  lang: 'ts',
  meta: 'example',
  code: `import { noSuchHelper } from 'belay/sdk';\nnoSuchHelper();\n${tsExamples[0]?.code ?? ''}`,
};
const scripts = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

describe('Docs: examples', () => {
  it('has examples of every kind to check', () => {
    expect(tsExamples.length).toBeGreaterThan(0);
    expect(playbookExamples.length).toBeGreaterThan(0);
    expect(httpExamples.length).toBeGreaterThan(0);
    expect(shellExamples.some((b) => curlRequests(b.code, root).length > 0)).toBe(true);
    expect(playbookExamples.some((b) => quotedFrom(b))).toBe(true);
  });

  describe('TypeScript examples type-check against belay/sdk', () => {
    let diagnostics: Map<CodeBlock, string[]>;
    beforeAll(() => {
      // One program for all of them, and for the broken one below.
      diagnostics = typeCheck(root, [...tsExamples, brokenTs]);
    }, 120_000);
    it.each(tsExamples.map((b) => [where(b), b] as const))('%s', (_where, block) => {
      expect(diagnostics.get(block)).toEqual([]);
    });
    it('fails on an example that imports what the SDK does not export', () => {
      expect((diagnostics.get(brokenTs) ?? []).join('\n')).toMatch(/noSuchHelper/);
    });
  });

  it.each(playbookExamples.map((b) => [where(b), b] as const))(
    'playbook example %s validates and compiles',
    (_where, block) => {
      expect(checkPlaybook(block)).toEqual([]);
    },
  );

  it.each(playbookExamples.filter((b) => quotedFrom(b)).map((b) => [where(b), b] as const))(
    "steps quoted in %s are the file's own",
    (_where, block) => {
      expect(checkQuoted(block, root)).toEqual([]);
    },
  );

  it.each(httpExamples.map((b) => [where(b), b] as const))(
    'HTTP example %s matches the OpenAPI document',
    (_where, block) => {
      expect(checkRequests(openapi, httpRequests(block.code))).toEqual([]);
    },
  );

  it.each(
    shellExamples.filter((b) => curlRequests(b.code, root).length > 0).map((b) => [where(b), b] as const),
  )('the curl commands of %s match the OpenAPI document', (_where, block) => {
    expect(checkRequests(openapi, curlRequests(block.code, root))).toEqual([]);
  });

  it('every npm run in a shell block names a script of package.json', () => {
    const shell = blocks.filter((b) => ['bash', 'sh', 'shell'].includes(b.lang));
    expect(shell.flatMap((b) => unknownScripts(b.code, scripts).map((p) => `${where(b)}: ${p}`))).toEqual([]);
  });
});

describe('Docs: a broken example fails its check', () => {
  const first = (list: CodeBlock[]): CodeBlock => {
    const b = list[0];
    if (!b) throw new Error('no example to break');
    return b;
  };

  it('a playbook with an action the form does not have, or a write with no probe', () => {
    const b = first(playbookExamples.filter((x) => !x.meta.includes(':steps')));
    expect(checkPlaybook({ ...b, code: b.code.replace('- click:', '- tap:') }).join('\n')).toMatch(
      /tap|action/,
    );
    expect(checkPlaybook({ ...b, code: b.code.replace(/\n {4}probe:[\s\S]*$/, '\n') }).join('\n')).toMatch(
      /probe/,
    );
  });

  it('steps of a kind the form does not have', () => {
    const b = first(
      playbookExamples.filter((x) => x.meta.includes(':steps') && x.code.includes('kind: write')),
    );
    expect(checkPlaybook({ ...b, code: b.code.replace('kind: write', 'kind: erase') })).not.toEqual([]);
  });

  it("a write whose probe cannot tell its record from another job's (a lint of playbook validate)", () => {
    const steps = (probeGoto: string): CodeBlock => ({
      file: 'broken-on-purpose.md',
      line: 1,
      lang: 'yaml',
      meta: 'example:steps',
      code: [
        '- id: save',
        '  title: Save',
        '  kind: write',
        '  app: notes',
        '  startsAt: { path: /notes, ready: { label: Title } }',
        '  actions:',
        '    - fill: { target: { label: Title }, value: "{{inputs.title}}" }',
        '    - click: { role: button, name: Save }',
        '  expect: { visible: { text: "{{inputs.title}}" } }',
        `  probe: { goto: "${probeGoto}", records: { testId: note }, absent: { testId: none } }`,
      ].join('\n'),
    });
    expect(checkPlaybook(steps('/notes?q={{idempotencyKey | url}}'))).toEqual([]);
    expect(checkPlaybook(steps('/notes?q=latest')).join('\n')).toMatch(/names neither an input nor/);
  });

  it('quoted steps that differ from their file', () => {
    const b = first(playbookExamples.filter((x) => quotedFrom(x)));
    expect(
      checkQuoted({ ...b, code: b.code.replace(/title: .*/, 'title: Another title') }, root).join('\n'),
    ).toMatch(/differs from .* in title/);
    expect(checkQuoted({ ...b, meta: `${b.meta.replace(/file=\S+/, 'file=nowhere.yaml')}` }, root)).toEqual([
      'nowhere.yaml: no such file',
    ]);
  });

  it('a request to a path the API does not have, or a body with a field it refuses', () => {
    expect(checkRequests(openapi, httpRequests('POST /jobz HTTP/1.1\n\n{}'))).toEqual([
      'POST /jobz: no such operation in the OpenAPI document',
    ]);
    const b = first(httpExamples);
    const [req] = httpRequests(b.code);
    if (!req) throw new Error('no request');
    expect(checkRequests(openapi, [{ ...req, body: { ...(req.body as object), playbook: 42 } }])).not.toEqual(
      [],
    );
    expect(
      checkRequests(
        openapi,
        curlRequests(`curl -sS -X POST $BELAY/jobs/x/decisions -d '{"decision":"maybe"}'`, root),
      ),
    ).not.toEqual([]);
  });

  it('a script that package.json does not define', () => {
    expect(unknownScripts('npm run -s docs:nothing', scripts)).toEqual([
      'npm run docs:nothing: no such script',
    ]);
  });
});
