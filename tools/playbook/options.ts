/**
 * The options that say which playbooks run where, shared by `npm run playbook -- test` and
 * `npm run chaos`: playbook folders (`--playbooks`, as `npm start` takes them), accounts
 * (`--account <app>=<accountId>` or `<app>=@<credentials.json>`) and the JSON files they read
 * (inputs, credentials). A problem is named by its option and file, never by what the file holds:
 * a credentials file must not reach a terminal or a log.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import type { Credentials } from '../../lambdas/lib/playbooks/contract.ts';

/** A bad option value; the message starts with the option. */
export class OptionError extends Error {
  readonly option: string;
  constructor(option: string, message: string, options?: ErrorOptions) {
    super(`${option}: ${message}`, options);
    this.name = 'OptionError';
    this.option = option;
  }
}

/** Commander's collector of a repeatable option (`--playbooks a --playbooks b`). */
export function collect(value: string, list: string[]): string[] {
  return [...list, value];
}

/** One `--account`: an account the tenant has, or credentials to connect one with. */
export type AccountOption = { app: string; accountId: string } | { app: string; credentialsFile: string };

const ACCOUNT = /^([a-z][a-z0-9-]*)=(.+)$/;

/**
 * Commander's parser of a repeatable `--account <app>=<accountId>` or `<app>=@<credentials.json>`.
 * @example
 * collectAccount('crm=acct_demo_crm', []); // [{ app: 'crm', accountId: 'acct_demo_crm' }]
 */
export function collectAccount(value: string, list: AccountOption[]): AccountOption[] {
  const m = ACCOUNT.exec(value);
  if (!m) throw new InvalidArgumentError('expected <app>=<accountId> or <app>=@<credentials.json>');
  const app = m[1] as string;
  const rest = m[2] as string;
  return [...list, rest.startsWith('@') ? { app, credentialsFile: rest.slice(1) } : { app, accountId: rest }];
}

/**
 * A JSON file given to `option`.
 * @throws OptionError naming the option and the file: unreadable, or not JSON (never its text)
 */
export async function readJsonFile(file: string, option: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new OptionError(option, `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new OptionError(option, `${file} is not valid JSON`);
  }
}

/**
 * The credentials in a `--account <app>=@<file>` file: `{ "username", "password", "totpSecret"? }`.
 * @throws OptionError naming the file when it holds anything else
 */
export async function readCredentials(file: string, option = '--account'): Promise<Credentials> {
  const value = await readJsonFile(file, option);
  const o = (value ?? {}) as Record<string, unknown>;
  const fields = typeof value === 'object' && !Array.isArray(value) ? Object.keys(o) : [];
  const shaped =
    typeof o.username === 'string' &&
    typeof o.password === 'string' &&
    (o.totpSecret === undefined || typeof o.totpSecret === 'string') &&
    fields.every((k) => k === 'username' || k === 'password' || k === 'totpSecret');
  if (!shaped)
    throw new OptionError(option, `${file} must hold {"username", "password", "totpSecret"?}, all strings`);
  return {
    username: o.username as string,
    password: o.password as string,
    ...(typeof o.totpSecret === 'string' ? { totpSecret: o.totpSecret } : {}),
  };
}

/** An account connected from a credentials file: its id, and the username it signs in as. */
export interface ConnectedAccount {
  accountId: string;
  username: string;
}

/**
 * The accounts of the `--account` options per application, in the order given: ids as they
 * are, each credentials file connected through `connect` (once per time it is given).
 *
 * @param connect connects an account of `app` (the API's `POST /accounts`) and answers its id
 * @returns account ids per application, and the usernames of the ones connected here
 */
export async function accountsByApp(
  options: readonly AccountOption[],
  connect: (app: string, credentials: Credentials) => Promise<string>,
): Promise<{ byApp: Record<string, string[]>; connected: ConnectedAccount[] }> {
  const byApp: Record<string, string[]> = {};
  const connected: ConnectedAccount[] = [];
  for (const o of options) {
    let accountId: string;
    if ('credentialsFile' in o) {
      const credentials = await readCredentials(o.credentialsFile);
      accountId = await connect(o.app, credentials);
      connected.push({ accountId, username: credentials.username });
    } else accountId = o.accountId;
    byApp[o.app] = [...(byApp[o.app] ?? []), accountId];
  }
  return { byApp, connected };
}
