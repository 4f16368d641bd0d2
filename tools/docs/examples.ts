/**
 * Examples in the docs are code under test. A fenced block whose info string carries `example`
 * is one, checked by its language:
 *
 * - `ts example`: a whole module, type-checked against `belay/sdk` (and Belay's own packages) with
 *   the repository's compiler options;
 * - `yaml example` / `json example`: a whole declarative playbook, read, linted and compiled as
 *   `npm run playbook -- validate` does; `yaml example:steps` is a list of steps, put into a
 *   playbook of its own first; `file=<path>` after it says the steps are quoted from that playbook
 *   file, and each must be the file's step of the same id, field for field;
 * - `http example`: requests, checked against the OpenAPI document (the operation exists, the JSON
 *   body fits its schema); the `curl` commands of a `bash example` are checked the same way;
 * - `bash example` on a getting-started page also runs, against a fresh local stack
 *   (`test/integration/docs-site/`).
 *
 * Each check answers the problems it found (none: the example holds).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ts from 'typescript';
import { parse as parseYaml, stringify } from 'yaml';
import { checkDeclarative } from '../playbook/validate.ts';

/** A fenced code block of a page. */
export interface CodeBlock {
  /** The page, relative to the docs folder. */
  file: string;
  /** The line of its opening fence (1-based). */
  line: number;
  lang: string;
  /** The info string after the language (`example`, `example:steps`). */
  meta: string;
  code: string;
}

/** The fenced code blocks of a Markdown text. */
export function codeBlocks(markdown: string, file: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '```', lang = '', meta = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j] ?? '';
      if (l.trim().startsWith(fence) && l.trim().replace(/[`~]/g, '') === '') break;
      body.push(l.startsWith(indent) ? l.slice(indent.length) : l);
    }
    blocks.push({ file, line: i + 1, lang, meta: meta.trim(), code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** Is the block an example (its info string has `example` or `example:<kind>`)? */
export function isExample(block: CodeBlock): boolean {
  return /(^|\s)example(:\S+)?(\s|$)/.test(block.meta);
}

/** `example:steps` -> `steps`; `example` -> undefined. */
export function exampleKind(block: CodeBlock): string | undefined {
  return /(?:^|\s)example:(\S+)/.exec(block.meta)?.[1];
}

/** Where a block is, for messages: `guides/declarative.md:148`. */
export function where(block: CodeBlock): string {
  return `${block.file}:${block.line}`;
}

// ---- TypeScript ---------------------------------------------------------------------------

/**
 * Type-checks TypeScript examples as modules of the repository (so `belay/sdk` resolves through
 * the package's own exports, as for a playbook folder), with tsconfig.json's options. The sources
 * live only in memory. Answers each example's diagnostics.
 */
export function typeCheck(root: string, examples: readonly CodeBlock[]): Map<CodeBlock, string[]> {
  const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const options = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root).options;
  const virtual = new Map(examples.map((e, i) => [join(root, 'docs-examples', `example-${i}.ts`), e]));
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  const source = host.getSourceFile.bind(host);
  host.readFile = (f) => virtual.get(f)?.code ?? read(f);
  host.fileExists = (f) => virtual.has(f) || exists(f);
  host.getSourceFile = (f, lang, onError, create) => {
    const e = virtual.get(f);
    return e ? ts.createSourceFile(f, e.code, lang) : source(f, lang, onError, create);
  };
  const program = ts.createProgram([...virtual.keys()], { ...options, noEmit: true }, host);
  const out = new Map<CodeBlock, string[]>();
  for (const [file, example] of virtual) {
    const sf = program.getSourceFile(file);
    const diagnostics = sf
      ? [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]
      : [{ messageText: 'not compiled', file: undefined, start: undefined } as unknown as ts.Diagnostic];
    out.set(
      example,
      diagnostics.map((d) => {
        const at =
          d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
        const line = at ? ` (example line ${at.line + 1})` : '';
        return `${ts.flattenDiagnosticMessageText(d.messageText, '\n')}${line}`;
      }),
    );
  }
  return out;
}

// ---- Declarative playbooks ----------------------------------------------------------------

/** A playbook around example steps: their applications (a form sign-in each), inputs of any shape. */
function playbookOfSteps(stepsYaml: string): string {
  const steps = (parseDeclarativeSteps(stepsYaml) ?? []) as Array<{ app?: unknown }>;
  const apps = [...new Set(steps.map((s) => s.app).filter((a): a is string => typeof a === 'string'))];
  const applications = Object.fromEntries(
    apps.map((a) => [
      a,
      {
        formSignIn: { signInPath: '/signin', username: '#u', password: '#p', submit: '#s', signedIn: '#in' },
      },
    ]),
  );
  return stringify({
    name: 'docs-example',
    version: 1,
    description: 'An example of the docs, its steps in a playbook of their own.',
    inputs: { type: 'object' },
    applications,
    steps,
  });
}

function parseDeclarativeSteps(text: string): unknown[] | undefined {
  try {
    const parsed = parseYaml(text) as unknown;
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Problems of a declarative playbook example (none: it validates, passes the lints and compiles). */
export function checkPlaybook(block: CodeBlock): string[] {
  const kind = exampleKind(block);
  if (kind === 'steps' && !parseDeclarativeSteps(block.code)) return ['example:steps holds no list of steps'];
  const text = kind === 'steps' ? playbookOfSteps(block.code) : block.code;
  // As `npm run playbook -- validate` checks a file.
  return checkDeclarative(text, where(block)).problems;
}

/** `file=<path>` of a block's info string: the playbook file its steps are quoted from. */
export function quotedFrom(block: CodeBlock): string | undefined {
  return /(?:^|\s)file=(\S+)/.exec(block.meta)?.[1];
}

/**
 * Problems of steps quoted from a playbook file (none: each step is the file's step of the same
 * id, every field equal; comments and layout may differ). The file is read from the repository.
 */
export function checkQuoted(block: CodeBlock, root: string): string[] {
  const file = quotedFrom(block);
  if (!file) return [];
  let text: string;
  try {
    text = readFileSync(join(root, file), 'utf8');
  } catch {
    return [`${file}: no such file`];
  }
  const fileSteps = ((parseYaml(text) as { steps?: unknown[] } | null)?.steps ?? []) as Array<{
    id?: unknown;
  }>;
  const quoted = (parseDeclarativeSteps(block.code) ?? []) as Array<{ id?: unknown }>;
  if (quoted.length === 0) return ['quotes no steps'];
  return quoted.flatMap((step) => {
    const own = fileSteps.find((s) => s.id === step.id);
    if (!own) return [`${file} has no step ${String(step.id)}`];
    if (isDeepStrictEqual(own, step)) return [];
    const keys = [...new Set([...Object.keys(own), ...Object.keys(step)])].filter(
      (k) => !isDeepStrictEqual((own as Record<string, unknown>)[k], (step as Record<string, unknown>)[k]),
    );
    return [`step ${String(step.id)} differs from ${file} in ${keys.join(', ')}`];
  });
}

// ---- HTTP ---------------------------------------------------------------------------------

/** One request an example makes. */
export interface HttpRequest {
  method: string;
  path: string;
  /** The JSON body, when it has one. */
  body?: unknown;
  /** A body that is not JSON (the reason). */
  bodyProblem?: string;
}

interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: unknown }> } }>>;
  components?: Record<string, unknown>;
}

/** `POST /jobs HTTP/1.1`, headers, a blank line, a body; several requests split by `###`. */
export function httpRequests(code: string): HttpRequest[] {
  return code
    .split(/^###.*$/m)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [head = '', ...rest] = part.split(/\n\s*\n/);
      const [requestLine = ''] = head.split('\n');
      const [method = '', target = ''] = requestLine.trim().split(/\s+/);
      const text = rest.join('\n\n').trim();
      const req: HttpRequest = { method: method.toUpperCase(), path: target };
      if (text) {
        try {
          req.body = JSON.parse(text);
        } catch (err) {
          req.bodyProblem = `the body is not JSON: ${(err as Error).message}`;
        }
      }
      return req;
    });
}

/** Words of a shell command line, quotes removed (enough for the docs' curl lines). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * The requests of the `curl` commands in a shell example (continued lines joined): method from
 * `-X` (else POST with a body, GET without), path after the API's base (`$BELAY`, `$API`, a
 * loopback URL), body from `-d` (JSON, or `@file` read from the repository).
 */
export function curlRequests(code: string, root: string): HttpRequest[] {
  const joined = code.replace(/\\\n/g, ' ');
  const out: HttpRequest[] = [];
  for (const raw of joined.split('\n')) {
    const line = raw.replace(/\s#.*$/, '').trim();
    if (!/^curl\s/.test(line)) continue;
    const words = shellWords(line);
    let method: string | undefined;
    let url: string | undefined;
    let data: string | undefined;
    for (let i = 1; i < words.length; i++) {
      const w = words[i] as string;
      if (w === '-X' || w === '--request') method = words[++i];
      else if (w === '-d' || w === '--data' || w === '--data-raw') data = words[++i];
      else if (w === '-H' || w === '--header' || w === '-o' || w === '-u') i++;
      else if (!w.startsWith('-')) url = w;
    }
    if (!url) continue;
    const path = url.replace(/^(https?:\/\/)?(\$\{?\w+\}?|[\w.-]+:\d+)/, '').replace(/^([^/])/, '/$1');
    const req: HttpRequest = { method: (method ?? (data ? 'POST' : 'GET')).toUpperCase(), path };
    if (data !== undefined) {
      try {
        req.body = JSON.parse(data.startsWith('@') ? readFileSync(join(root, data.slice(1)), 'utf8') : data);
      } catch (err) {
        req.bodyProblem = `the body is not JSON: ${(err as Error).message}`;
      }
    }
    out.push(req);
  }
  return out;
}

/** The document's path template for a concrete path (`/jobs/<jobId>/cancel` -> `/jobs/{jobId}/cancel`). */
export function operationPath(doc: OpenApi, path: string): string | undefined {
  const segments = path.split('?')[0]?.split('/') ?? [];
  return Object.keys(doc.paths).find((template) => {
    const t = template.split('/');
    return (
      t.length === segments.length &&
      t.every((s, i) => s === segments[i] || /^\{.+\}$/.test(s) || /^<.+>$/.test(segments[i] ?? ''))
    );
  });
}

/** Problems of the requests against the OpenAPI document (none: each names an operation and fits it). */
export function checkRequests(doc: OpenApi, requests: readonly HttpRequest[]): string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const problems: string[] = [];
  if (requests.length === 0) problems.push('no request in the example');
  for (const r of requests) {
    const template = operationPath(doc, r.path);
    const op = template ? doc.paths[template]?.[r.method.toLowerCase()] : undefined;
    if (!template || !op) {
      problems.push(`${r.method} ${r.path}: no such operation in the OpenAPI document`);
      continue;
    }
    if (r.bodyProblem) problems.push(`${r.method} ${r.path}: ${r.bodyProblem}`);
    if (r.body === undefined) continue;
    const schema = op.requestBody?.content?.['application/json']?.schema;
    if (!schema) {
      problems.push(`${r.method} ${template} takes no JSON body`);
      continue;
    }
    const validate = ajv.compile({ ...(schema as object), components: doc.components });
    if (!validate(r.body))
      problems.push(
        ...(validate.errors ?? []).map(
          (e) =>
            `${r.method} ${template}: body${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
        ),
      );
  }
  return problems;
}

// ---- Shell --------------------------------------------------------------------------------

/** The `npm run <script>` names a shell block uses that package.json does not define. */
export function unknownScripts(code: string, scripts: Readonly<Record<string, string>>): string[] {
  const names = [...code.matchAll(/npm run(?:\s+-s)?\s+([\w:.-]+)/g)].map((m) => m[1] as string);
  return [...new Set(names)].filter((n) => !(n in scripts)).map((n) => `npm run ${n}: no such script`);
}
