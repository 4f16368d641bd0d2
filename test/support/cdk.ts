/**
 * Test apps for the CDK tests. Each app synthesizes into its own temp dir (removed by
 * `cleanup()`), so `Template.fromStack` leaves no `cdk.out*` folders in TMPDIR.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { REPO_ROOT } from '../../cdk/paths.ts';

/** A fixture handler under `test/fixtures/cdk/`. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/cdk/${name}`, import.meta.url));
}

/** The `context` of the repository's cdk.json (feature flags and defaults), as `cdk synth` sees it. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return { ...cdkJson.context };
}

/** Options of {@link TestApps.app}. */
export interface TestAppOptions {
  /** Run esbuild for the functions (slow); by default bundling is skipped. */
  readonly bundling?: boolean;
}

/** Makes apps with temp outdirs and removes the dirs afterwards. */
export class TestApps {
  private readonly dirs: string[] = [];

  /** A new app with `context`; bundling skipped unless asked for. */
  app(context: Record<string, unknown> = {}, options: TestAppOptions = {}): App {
    const outdir = mkdtempSync(join(tmpdir(), 'belay-cdk-test-'));
    this.dirs.push(outdir);
    return new App({
      outdir,
      context: { ...(options.bundling ? {} : { 'aws:cdk:bundling-stacks': [] }), ...context },
    });
  }

  /** Removes every outdir made so far. */
  cleanup(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
