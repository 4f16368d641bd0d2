import type { Command } from 'commander';
import { CliError, EXIT } from './errors.ts';
import { table } from './io.ts';
import type { CommandContext } from './jobs.ts';

/** `playbooks`, `accounts`, `keys`, `cost`, `webhooks`: the tenant's configuration and reports. */
export function registerAdmin(program: Command, ctx: CommandContext): void {
  const print = (data: unknown, human: () => string): void =>
    ctx.io.out(ctx.json() ? JSON.stringify(data, null, 2) : human());

  const playbooks = program.command('playbooks').description('the playbooks jobs can run');
  playbooks
    .command('list')
    .description('list the playbooks this tenant may run (GET /playbooks)')
    .action(async () => {
      const res = await (await ctx.client()).request<{
        playbooks: { id: string; description?: string; steps?: unknown[] }[];
      }>('GET', '/playbooks');
      print(res, () =>
        table(res.playbooks.map((p) => [p.id, `${p.steps?.length ?? 0} steps`, p.description ?? ''])),
      );
    });

  const accounts = program
    .command('accounts')
    .description("the tenant's connected accounts (role admin to change them)");
  accounts
    .command('list')
    .description('list connected accounts')
    .action(async () => {
      const res = await (await ctx.client()).request<{ accounts: Record<string, string>[] }>(
        'GET',
        '/accounts',
      );
      print(res, () =>
        table(
          res.accounts.map((a) => [a.accountId ?? '', a.application ?? '', a.status ?? '', a.label ?? '']),
        ),
      );
    });
  accounts
    .command('get <accountId>')
    .description('show one account')
    .action(async (id: string) => {
      const res = await (await ctx.client()).request('GET', `/accounts/${encodeURIComponent(id)}`);
      print(res, () => JSON.stringify(res, null, 2));
    });
  accounts
    .command('connect')
    .description(
      'connect an account: credentials (the password read from standard input) or an Anchor identity',
    )
    .requiredOption('--application <name>', 'an application Belay knows, e.g. shop')
    .requiredOption('--label <text>', 'a name for people')
    .option('--account-id <id>', 'the account id to use (default: one is made)')
    .option('--username <name>', 'sign-in name; the password is read from standard input')
    .option('--identity <anchorIdentityId>', 'an Anchor identity instead of credentials')
    .action(
      async (opts: {
        application: string;
        label: string;
        accountId?: string;
        username?: string;
        identity?: string;
      }) => {
        if ((opts.username === undefined) === (opts.identity === undefined)) {
          throw new CliError(
            'give exactly one of --username (password on standard input) or --identity',
            EXIT.usage,
          );
        }
        const body: Record<string, unknown> = {
          application: opts.application,
          label: opts.label,
          ...(opts.accountId ? { accountId: opts.accountId } : {}),
          ...(opts.identity
            ? { anchorIdentityId: opts.identity }
            : { credentials: { username: opts.username, password: await ctx.io.stdin() } }),
        };
        const res = await (await ctx.client()).request('POST', '/accounts', body);
        print(
          res,
          () => `connected ${String((res as { account?: { accountId?: string } }).account?.accountId ?? '')}`,
        );
      },
    );
  accounts
    .command('revoke <accountId>')
    .description('disconnect an account: its credentials are deleted and jobs using it stop')
    .action(async (id: string) => {
      const res = await (await ctx.client()).request('DELETE', `/accounts/${encodeURIComponent(id)}`);
      print(res, () => `revoked ${id}`);
    });

  const keys = program
    .command('keys')
    .description("the tenant's API keys (role admin; `npm run keys` makes the first key of a tenant)");
  keys
    .command('create')
    .description('create a key and print it (shown only this once)')
    .requiredOption('--roles <roles>', 'comma-separated: submitter, approver, admin')
    .option('--label <text>', 'what the key is for')
    .action(async (opts: { roles: string; label?: string }) => {
      const roles = opts.roles
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean);
      const res = await (await ctx.client()).request<{
        apiKey: string;
        key: { keyId: string; roles: string[] };
      }>('POST', '/keys', {
        roles,
        ...(opts.label ? { label: opts.label } : {}),
      });
      print(
        res,
        () =>
          `${res.apiKey}\n(key id ${res.key.keyId}, roles ${res.key.roles.join(',')}; shown only this once)`,
      );
    });
  keys
    .command('list')
    .description('list keys (ids and roles, never the keys)')
    .action(async () => {
      const res = await (await ctx.client()).request<{
        keys: { keyId: string; roles: string[]; createdAt: string; revokedAt?: string; label?: string }[];
      }>('GET', '/keys');
      print(res, () =>
        table(
          res.keys.map((k) => [
            k.keyId,
            k.roles.join(','),
            k.createdAt,
            k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
            k.label ?? '',
          ]),
        ),
      );
    });
  keys
    .command('revoke <keyId>')
    .description('revoke a key (effective for the next request, console sessions included)')
    .action(async (id: string) => {
      const res = await (await ctx.client()).request('DELETE', `/keys/${encodeURIComponent(id)}`);
      print(res, () => `revoked ${id}`);
    });

  program
    .command('cost')
    .description('cost per verified completion of the jobs submitted in [from, to) (role admin)')
    .requiredOption('--from <time>', 'ISO date or time, e.g. 2026-11-01')
    .requiredOption('--to <time>', 'ISO date or time, after --from')
    .action(async (opts: { from: string; to: string }) => {
      const query = new URLSearchParams({ from: opts.from, to: opts.to });
      const res = await (await ctx.client()).request<Record<string, unknown>>(
        'GET',
        `/reports/cost?${query}`,
      );
      print(res, () => JSON.stringify(res, null, 2));
    });
}
