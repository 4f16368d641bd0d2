/**
 * The options `npm run playbook -- test` and `npm run chaos` share: accounts, JSON files read
 * so that a problem names the option and the file and never what the file holds.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountsByApp,
  collectAccount,
  OptionError,
  readCredentials,
  readJsonFile,
} from '../../../tools/playbook/options.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belay-options-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = async (name: string, text: string): Promise<string> => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

describe('Function: collectAccount', () => {
  it('takes an account id or a credentials file per application, in order', () => {
    const list = collectAccount('crm=@creds.json', collectAccount('shop=acct_demo_shop', []));
    expect(list).toEqual([
      { app: 'shop', accountId: 'acct_demo_shop' },
      { app: 'crm', credentialsFile: 'creds.json' },
    ]);
  });

  it.each(['shop', '=acct', 'Shop=acct', 'shop='])('refuses %s', (value) => {
    expect(() => collectAccount(value, [])).toThrow(InvalidArgumentError);
  });
});

describe('Function: readJsonFile', () => {
  it('reads a JSON file', async () => {
    expect(await readJsonFile(await file('ok.json', '{"a":[1]}'), '--inputs')).toEqual({ a: [1] });
  });

  it('names the option and the file of a file that is not JSON, never its text', async () => {
    const path = await file('bad.json', '{"password": "hunter2-secret",');
    const err = await readJsonFile(path, '--inputs x@1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OptionError);
    expect((err as Error).message).toBe(`--inputs x@1: ${path} is not valid JSON`);
    expect((err as Error).message).not.toContain('hunter2');
  });

  it('names a file it cannot read', async () => {
    await expect(readJsonFile(join(dir, 'none.json'), '--inputs')).rejects.toThrow(
      /^--inputs: cannot read .*none\.json \(ENOENT\)$/,
    );
  });
});

describe('Function: readCredentials', () => {
  it('reads a username, a password and a TOTP secret', async () => {
    const path = await file('c.json', '{"username":"ada","password":"pw","totpSecret":"JBSWY3DP"}');
    expect(await readCredentials(path)).toEqual({ username: 'ada', password: 'pw', totpSecret: 'JBSWY3DP' });
  });

  it.each([
    ['a missing password', '{"username":"ada"}'],
    ['another field', '{"username":"ada","password":"s3cret-x","pin":"1"}'],
    ['a list', '["ada","s3cret-x"]'],
  ])('refuses %s without showing the file', async (_what, text) => {
    const path = await file('c2.json', text);
    const err = (await readCredentials(path).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/must hold \{"username", "password", "totpSecret"\?\}/);
    expect(err.message).not.toContain('s3cret');
  });
});

describe('Function: accountsByApp', () => {
  it('keeps ids, connects each credentials file, and tells who each connected account signs in as', async () => {
    const path = await file('ada.json', '{"username":"ada@example.com","password":"pw"}');
    const connected: string[] = [];
    const got = await accountsByApp(
      [
        { app: 'crm', accountId: 'acct_demo_crm' },
        { app: 'crm', credentialsFile: path },
      ],
      async (app, credentials) => {
        connected.push(`${app}:${credentials.username}`);
        return 'acct_new';
      },
    );
    expect(got).toEqual({
      byApp: { crm: ['acct_demo_crm', 'acct_new'] },
      connected: [{ accountId: 'acct_new', username: 'ada@example.com' }],
    });
    expect(connected).toEqual(['crm:ada@example.com']);
  });
});
