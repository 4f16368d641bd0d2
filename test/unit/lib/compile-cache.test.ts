import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compileCacheKey, lambdaNodeFlags } from '../../../lambdas/compile-cache.ts';

describe('Function: lambdaNodeFlags', () => {
  it.each([
    [1024, 51, 922],
    [256, 12, 231],
    [3008, 150, 2708],
  ])(
    'sizes the heap of a %i MB function as Lambda does (semi-space %i MB, old space %i MB)',
    (mb, semi, old) => {
      expect(lambdaNodeFlags(mb)).toEqual([
        '--expose-gc',
        '--max-http-header-size',
        '81920',
        `--max-semi-space-size=${semi}`,
        `--max-old-space-size=${old}`,
      ]);
    },
  );

  it.each([0, 127, 1.5, Number.NaN])('refuses a memory size Lambda does not offer (%s)', (mb) => {
    expect(() => lambdaNodeFlags(mb)).toThrow(RangeError);
  });
});

describe('Function: compileCacheKey', () => {
  it('names a CommonJS entry by its path and an ES module by its URL, with the code type first', () => {
    expect(compileCacheKey('commonjs', '/var/task/node_modules/x/index.js')).toBe(
      crc32(Buffer.concat([Buffer.from([0]), Buffer.from('/var/task/node_modules/x/index.js')]))
        .toString(16)
        .padStart(8, '0'),
    );
    expect(compileCacheKey('esm', '/var/task/index.mjs')).toBe(
      crc32(Buffer.concat([Buffer.from([1]), Buffer.from('file:///var/task/index.mjs')]))
        .toString(16)
        .padStart(8, '0'),
    );
  });

  it('differs for the same file in another folder (why a cache is renamed for /var/task)', () => {
    expect(compileCacheKey('esm', '/build/asset/index.mjs')).not.toBe(
      compileCacheKey('esm', '/var/task/index.mjs'),
    );
    expect(compileCacheKey('esm', '/var/task/index.mjs')).toMatch(/^[0-9a-f]{8}$/);
  });
});
