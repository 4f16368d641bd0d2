/**
 * The CDK context keys' reference (`reference/cdk-context.md`), from `CONTEXT_KEYS` in
 * `cdk/config.ts`: each key with the TSDoc written over it there, so a key added to the app is on
 * the page at the next build and its description is written once. The TypeScript compiler reads
 * the file's syntax (nothing is evaluated, no CDK library is loaded).
 */
import ts from 'typescript';

/** One context key: its name in `cdk.json` / `--context` and what it does. */
export interface ContextKey {
  /** `belay:removalPolicy`. */
  key: string;
  /** The TSDoc over it, as one paragraph. */
  doc: string;
}

/** The TSDoc comment text of a node (its `/** ... *\/` above), or '' when it has none. */
function docOf(node: ts.Node, source: ts.SourceFile): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  const jsdoc = ranges.filter((r) => source.text.startsWith('/**', r.pos)).at(-1);
  if (!jsdoc) return '';
  return source.text
    .slice(jsdoc.pos + 3, jsdoc.end - 2)
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, '').trim())
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The keys of the object literal `CONTEXT_KEYS` in `text` (the source of `cdk/config.ts`), in the
 * order written.
 * @throws Error when the file has no such object, or a key's value is not a string literal
 */
export function contextKeysOf(text: string, file = 'cdk/config.ts'): ContextKey[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  let literal: ts.ObjectLiteralExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'CONTEXT_KEYS') {
      let init = node.initializer;
      while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init))) init = init.expression;
      if (init && ts.isObjectLiteralExpression(init)) literal = init;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!literal) throw new Error(`${file} has no CONTEXT_KEYS object`);
  return literal.properties.map((p) => {
    if (!ts.isPropertyAssignment(p) || !ts.isStringLiteral(p.initializer))
      throw new Error(`${file}: CONTEXT_KEYS.${p.name?.getText(source)} is not a string literal`);
    return { key: p.initializer.text, doc: docOf(p, source) };
  });
}

/** The page: every key in a table, with how to set one. */
export function cdkContextPage(keys: readonly ContextKey[], file = 'cdk/config.ts'): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  return [
    '# CDK context keys',
    '',
    `Generated from \`CONTEXT_KEYS\` in \`${file}\` at each docs build. The app reads each key once`,
    'and checks it, so a typo or a bad value fails the synth with the key named. Set a key in',
    '`cdk.json` (`"context": { "belay:nag": true }`) or on the command line',
    '(`npx cdk deploy -c belay:logRetentionDays=90`; an object or a list as JSON). How a deploy',
    'goes: [deploying](/operate/deploy).',
    '',
    '| key | what it does |',
    '|---|---|',
    ...keys.map((k) => `| \`${k.key}\` | ${cell(k.doc) || '(not described)'} |`),
    '',
  ].join('\n');
}
