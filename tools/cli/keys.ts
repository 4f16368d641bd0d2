import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { type ApiKeyStore, parseRoles } from '../../lambdas/lib/auth/api-keys.ts';
import { apiKeyStoreFromEnv } from '../../lambdas/lib/auth/runtime.ts';

/**
 * `npm run keys -- <command>`: API keys of the local stack (or of AWS, with `TABLE_NAME` set
 * and no `DYNAMODB_ENDPOINT`).
 *
 *   npm run keys -- create --tenant acme --roles submitter,approver [--label ci] [--plan free]
 *   npm run keys -- list --tenant acme
 *   npm run keys -- revoke --tenant acme --key-id blk_0123456789ab
 *
 * `create` prints the key once; only its hash is stored. The table and endpoint come from
 * `--table`/`--endpoint`, else `TABLE_NAME`/`DYNAMODB_ENDPOINT`, else the running local
 * stack's `.local/stack.json` (`{ "tableName", "dynamodbEndpoint" }`).
 */

/** Where a running local stack says its table is (`BELAY_LOCAL_STATE`, default `.local/stack.json`). */
export function localStackState(env: NodeJS.ProcessEnv = process.env): {
  TABLE_NAME?: string;
  DYNAMODB_ENDPOINT?: string;
} {
  try {
    const state = JSON.parse(readFileSync(env.BELAY_LOCAL_STATE ?? '.local/stack.json', 'utf8')) as {
      tableName?: unknown;
      dynamodbEndpoint?: unknown;
    };
    return {
      ...(typeof state.tableName === 'string' ? { TABLE_NAME: state.tableName } : {}),
      ...(typeof state.dynamodbEndpoint === 'string' ? { DYNAMODB_ENDPOINT: state.dynamodbEndpoint } : {}),
    };
  } catch {
    return {};
  }
}

export interface KeysIo {
  out(line: string): void;
  err(line: string): void;
}

/** Runs the CLI with `argv` (without node and script); resolves with the exit code. */
export async function runKeysCli(
  argv: readonly string[],
  io: KeysIo = { out: (l) => console.log(l), err: (l) => console.error(l) },
  store: (options: { table?: string; endpoint?: string }) => ApiKeyStore = (options) =>
    apiKeyStoreFromEnv({
      ...(process.env.TABLE_NAME ? {} : localStackState()),
      ...process.env,
      ...(options.table ? { TABLE_NAME: options.table } : {}),
      ...(options.endpoint ? { DYNAMODB_ENDPOINT: options.endpoint } : {}),
    }),
): Promise<number> {
  const program = new Command('keys')
    .description('Manage Belay API keys')
    .option('--table <name>', 'ledger table (default: $TABLE_NAME)')
    .option('--endpoint <url>', 'DynamoDB endpoint (default: $DYNAMODB_ENDPOINT)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  program
    .command('create')
    .description('create a key for a tenant and print it (once)')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--roles <roles>', 'comma-separated: submitter, approver, admin')
    .option('--label <text>', 'what the key is for')
    .option('--plan <plan>', 'plan of a new tenant (free, starter, growth, enterprise)', 'free')
    .action(async (opts: { tenant: string; roles: string; label?: string; plan: string }) => {
      const key = await store(program.opts()).create(opts.tenant, parseRoles(opts.roles), {
        plan: opts.plan,
        ...(opts.label ? { label: opts.label } : {}),
      });
      io.out(`API key for tenant ${key.tenantId} (roles ${key.roles.join(',')}), shown only this once:`);
      io.out(key.apiKey);
      io.out(`key id: ${key.keyId}`);
    });

  program
    .command('list')
    .description("list a tenant's keys (ids and roles, never secrets)")
    .requiredOption('--tenant <id>', 'tenant id')
    .action(async (opts: { tenant: string }) => {
      const keys = await store(program.opts()).list(opts.tenant);
      for (const k of keys) {
        io.out(
          `${k.keyId}\t${k.roles.join(',')}\t${k.createdAt}\t${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}`,
        );
      }
      if (keys.length === 0) io.out(`no keys for tenant ${opts.tenant}`);
    });

  program
    .command('revoke')
    .description('revoke a key (effective for the next request)')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--key-id <id>', 'key id (blk_ + 12 hex)')
    .action(async (opts: { tenant: string; keyId: string }) => {
      await store(program.opts()).revoke(opts.tenant, opts.keyId);
      io.out(`revoked ${opts.keyId}`);
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    io.err(`keys: ${(err as Error).message}`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runKeysCli(process.argv.slice(2));
}
