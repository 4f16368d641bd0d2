/**
 * The handlers take the AWS SDK's values from `lambdas/lib/aws/sdk/` (loaded with `require`),
 * never from an ESM import of the package, which costs a cold start the lexing of its
 * CommonJS files; types may come from the package (they are erased).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SDK_FOLDER = join('lambdas', 'lib', 'aws', 'sdk');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Value imports of an `@aws-sdk/*` package in a source text (a whole `import type` is fine). */
function sdkValueImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/import\s+(type\s+)?([^'";]*?)\s*from\s*'(@aws-sdk\/[^']+)'/g)) {
    if (m[1]) continue;
    const names = (m[2] ?? '')
      .replace(/[{}]/g, '')
      .split(',')
      .map((n) => n.trim());
    const values = names.filter((n) => n !== '' && !n.startsWith('type '));
    if (values.length > 0) found.push(`${m[3]}: ${values.join(', ')}`);
  }
  for (const m of text.matchAll(/import\(\s*'(@aws-sdk\/[^']+)'\s*\)/g)) found.push(`${m[1]}: import()`);
  return found;
}

describe('AWS SDK imports in the handlers', () => {
  it('tells a value import from a type import', () => {
    expect(sdkValueImports("import type { A } from '@aws-sdk/client-s3';")).toEqual([]);
    expect(sdkValueImports("import { type A, B } from '@aws-sdk/client-s3';")).toEqual([
      '@aws-sdk/client-s3: B',
    ]);
    expect(sdkValueImports("import {\n  GetCommand,\n} from '@aws-sdk/lib-dynamodb';")).toEqual([
      '@aws-sdk/lib-dynamodb: GetCommand',
    ]);
    expect(sdkValueImports("await import('@aws-sdk/client-sfn')")).toEqual(['@aws-sdk/client-sfn: import()']);
  });

  it('take every SDK value from lambdas/lib/aws/sdk/', () => {
    const offenders = sources('lambdas')
      .filter((f) => !f.startsWith(SDK_FOLDER))
      .flatMap((f) => sdkValueImports(readFileSync(f, 'utf8')).map((i) => `${f} ${i}`));
    expect(offenders).toEqual([]);
  });
});
