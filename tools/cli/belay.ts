import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { registerAdmin } from './belay/admin.ts';
import { registerChecks } from './belay/checks.ts';
import { createClient } from './belay/client.ts';
import { forgetCredentials, requireKey, resolveTarget, saveCredentials } from './belay/config.ts';
import { CliError, EXIT } from './belay/errors.ts';
import { type Io, processIo } from './belay/io.ts';
import { type CommandContext, registerAnswers, registerJobs } from './belay/jobs.ts';
import { registerMcp } from './belay/mcp.ts';
import { registerReceipts } from './belay/receipts.ts';
import { registerWebhooks } from './belay/webhooks.ts';

/**
 * `belay`, the command line of Belay: the same HTTP API as the console and `curl`.
 *
 *   belay --url http://127.0.0.1:3000 --key - login      (the key on standard input)
 *   belay jobs submit demo/jobs/checkout.json --wait     (stops when the job needs a person: exit 10)
 *   belay approve demo-checkout-1 --comment "checked" --wait
 *   belay receipt get demo-checkout-1 -o receipt.json && belay receipt verify receipt.json
 *
 * Exit codes are in `belay/errors.ts` (`EXIT`); `--json` prints the API's answer for scripts.
 */
export async function runBelay(
  argv: readonly string[],
  io: Io = processIo(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = new Command('belay')
    .description(
      'Belay from the terminal: submit and follow durable browser jobs, answer their approvals, one-time codes and reviews, manage accounts, keys and webhooks, serve agent runtimes over MCP (belay mcp).\nWhere: --url/--key, else BELAY_URL/BELAY_KEY, else `belay login`.\nExit codes: 0 ok, 1 error, 2 usage, 3 not signed in or refused (401/403), 4 not found, 5 request refused (4xx), 6 job FAILED/CANCELLED, 7 Belay unreachable (5xx/429), 10 job waits for a person.',
    )
    .option(
      '--url <url>',
      'Belay API base URL (default: $BELAY_URL, `belay login`, or the running local stack)',
    )
    .addOption(
      new Option(
        '--key <apiKey>',
        'API key (default: $BELAY_KEY or `belay login`); prefer the variable: arguments show in process lists',
      ),
    )
    .option('--json', 'print the API’s JSON answer (for scripts)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  const opts = (): { url?: string; key?: string; json?: boolean } => program.opts();
  const ctx: CommandContext = {
    io,
    json: () => opts().json === true,
    exit: (code) => {
      exitCode = code;
    },
    async client() {
      const target = await resolveTarget(opts(), env);
      return createClient(target.url, requireKey(target));
    },
  };

  program
    .command('login')
    .description(
      'check a URL and API key and remember them (in the config dir, file mode 0600): belay --url http://127.0.0.1:3000 --key - login (the key on standard input), or with BELAY_KEY set',
    )
    .action(async () => {
      const o = opts();
      if (!o.url) throw new CliError('give the URL: belay --url <url> --key - login', EXIT.usage);
      const key = o.key === '-' ? await io.stdin() : (o.key ?? env.BELAY_KEY?.trim());
      if (!key) throw new CliError('give the key with --key - (standard input) or BELAY_KEY', EXIT.usage);
      const url = o.url.replace(/\/+$/, '');
      await createClient(url, key).request('GET', '/jobs?limit=1');
      const file = await saveCredentials(url, key, env);
      io.out(ctx.json() ? JSON.stringify({ url, file }) : `signed in to ${url}; saved in ${file}`);
    });
  program
    .command('logout')
    .description('forget the URL and key `belay login` saved')
    .action(async () => {
      const file = await forgetCredentials(env);
      io.out(ctx.json() ? JSON.stringify({ file }) : `removed ${file}`);
    });
  program
    .command('console')
    .description('print the URL of the web console')
    .action(async () => {
      const target = await resolveTarget(opts(), env);
      io.out(ctx.json() ? JSON.stringify({ url: `${target.url}/console` }) : `${target.url}/console`);
    });

  registerJobs(program, ctx);
  registerAnswers(program, ctx);
  registerAdmin(program, ctx);
  registerWebhooks(program, ctx);
  registerChecks(program, ctx);
  registerMcp(program, {
    io,
    async target() {
      const target = await resolveTarget(opts(), env);
      return { url: target.url, key: requireKey(target) };
    },
  });
  registerReceipts(program, ctx);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.help' ||
        err.code === 'commander.version'
      )
        return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      io.err(`belay: ${err.message}`);
      return err.exitCode;
    }
    io.err(`belay: ${(err as Error).message}`);
    return EXIT.error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runBelay(process.argv.slice(2));
}
