/**
 * Write-through JSON state of a demo site: every change is written to `<dataDir>/<site>.json`
 * before the response leaves, so a killed and restarted site keeps its orders and sign-ins.
 * Without a data directory the state lives in memory only.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SiteStateCorruptError } from '../errors.ts';

/** Holds one site's state; callers change `state` inside `update` (or call `save` after changing it). */
export class JsonStore<T> {
  readonly file: string | undefined;
  readonly #seed: () => T;
  state: T;

  /** Loads `<dataDir>/<name>.json` when it exists, else starts from `seed()`. */
  constructor(dataDir: string | undefined, name: string, seed: () => T) {
    this.#seed = seed;
    this.file = dataDir ? join(dataDir, `${name}.json`) : undefined;
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    this.state = this.#load();
  }

  #load(): T {
    if (!this.file || !existsSync(this.file)) return this.#seed();
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as T;
    } catch (cause) {
      throw new SiteStateCorruptError(this.file, { cause });
    }
  }

  /** Writes the state now (atomically: temporary file, then rename). No-op in memory. */
  save(): void {
    if (!this.file) return;
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state));
    renameSync(tmp, this.file);
  }

  /** Changes the state and writes it through. */
  update<R>(change: (state: T) => R): R {
    const result = change(this.state);
    this.save();
    return result;
  }

  /** Back to the seed state. */
  reset(): void {
    this.state = this.#seed();
    this.save();
  }
}
