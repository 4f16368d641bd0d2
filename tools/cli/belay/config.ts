import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from './errors.ts';

/**
 * Where `belay` finds Belay and its key: `--url`/`--key`, else `BELAY_URL`/`BELAY_KEY`, else
 * what `belay login` stored in `<config dir>/belay/credentials.json` (mode 0600, its directory
 * 0700; the config dir is `$XDG_CONFIG_HOME`, else `~/.config`), else, for the URL only, a
 * running local stack's `.local/stack.json`.
 */

export interface Target {
  url: string;
  key: string | undefined;
}

export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(homedir(), '.config');
  return join(base, 'belay', 'credentials.json');
}

async function stored(env: NodeJS.ProcessEnv): Promise<{ url?: string; key?: string }> {
  try {
    const parsed = JSON.parse(await readFile(credentialsFile(env), 'utf8')) as {
      url?: unknown;
      key?: unknown;
    };
    return {
      ...(typeof parsed.url === 'string' ? { url: parsed.url } : {}),
      ...(typeof parsed.key === 'string' ? { key: parsed.key } : {}),
    };
  } catch {
    return {};
  }
}

async function localStackUrl(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const state = JSON.parse(await readFile(env.BELAY_LOCAL_STATE ?? '.local/stack.json', 'utf8')) as {
      apiUrl?: unknown;
    };
    return typeof state.apiUrl === 'string' ? state.apiUrl : undefined;
  } catch {
    return undefined;
  }
}

export async function resolveTarget(
  options: { url?: string; key?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<Target> {
  const saved = await stored(env);
  const url = options.url ?? env.BELAY_URL?.trim() ?? saved.url ?? (await localStackUrl(env));
  if (!url) {
    throw new CliError(
      'no Belay URL: pass --url, set BELAY_URL (e.g. http://127.0.0.1:3000 for `npm start`), or run `belay login`',
      EXIT.auth,
    );
  }
  return {
    url: url.replace(/\/+$/, ''),
    key: options.key ?? (env.BELAY_KEY?.trim() || undefined) ?? saved.key,
  };
}

/** A target with a key, or the error that says how to give one. */
export function requireKey(target: Target): string {
  if (!target.key) {
    throw new CliError('no API key: pass --key, set BELAY_KEY, or run `belay login`', EXIT.auth);
  }
  return target.key;
}

/** Stores the URL and key for later commands, readable by this user only. */
export async function saveCredentials(
  url: string,
  key: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const file = credentialsFile(env);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify({ url, key }, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return file;
}

export async function forgetCredentials(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = credentialsFile(env);
  await rm(file, { force: true });
  return file;
}
