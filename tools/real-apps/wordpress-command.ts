/**
 * `npm run real-apps:wordpress`: starts a private WordPress for a person (Debian's WordPress on
 * its own MariaDB and PHP's built-in server, on 127.0.0.1), prints its address, the administrator
 * account, the `--applications` JSON and an account file for `--account`, and stops everything
 * on Ctrl-C. Exit status: 0 stopped by a signal, 1 it did not start, 2 a usage error.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { RealAppMissingError } from './errors.ts';
import { type RunningWordPress, startWordPress } from './wordpress.ts';
import { WORDPRESS_APP, wordpressApplications, writeAccountFile } from './wordpress-application.ts';

interface Options {
  name: string;
  accountFile?: string;
  heartbeatMs: number;
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError('a whole number of milliseconds, 0 or more');
  return n;
}

const program = new Command()
  .name('npm run real-apps:wordpress --')
  .description(
    "start a private WordPress on 127.0.0.1 (Debian's WordPress, a MariaDB of its own, PHP's built-in server), print how to reach it and how to give it to the local stack, and stop every process it started on Ctrl-C",
  )
  .option('--name <app>', 'the application name in the printed --applications JSON', WORDPRESS_APP)
  .option(
    '--account-file <file>',
    "where to write the administrator's credentials for --account <app>=@<file> (default: in the site's temporary folder); removed on stop",
  )
  .option(
    '--heartbeat-ms <ms>',
    "the dashboard's Heartbeat period (0: WordPress's own, 15 s at least)",
    nonNegativeInt,
    1_000,
  )
  .addHelpText(
    'after',
    `
Needs Debian's wordpress, mariadb-server-core, php-cli and php-mysql: bash scripts/install-real-apps.sh

Example:
  npm run real-apps:wordpress
  # in another terminal, with what it printed:
  npm run playbook -- test wordpress-quick-draft@1 --playbooks examples/wordpress \\
    --applications '{"wordpress":{"baseUrl":"http://127.0.0.1:<port>"}}' --account wordpress=@<account file>`,
  )
  .action(async (opts: Options) => {
    process.exitCode = await run(opts);
  });

async function run(opts: Options): Promise<number> {
  let applications: string;
  try {
    applications = JSON.stringify(wordpressApplications({ url: 'http://127.0.0.1:1' }, opts.name));
  } catch (err) {
    console.error(`--name: ${(err as Error).message}`);
    return 2;
  }
  console.log('starting WordPress (MariaDB, WordPress install, PHP built-in server) ...');
  let wp: RunningWordPress;
  try {
    wp = await startWordPress({ heartbeatMs: opts.heartbeatMs });
  } catch (err) {
    console.error(
      err instanceof RealAppMissingError ? err.message : `WordPress did not start: ${(err as Error).message}`,
    );
    return 1;
  }
  const site = wp;
  const accountFile = opts.accountFile ?? join(site.dir, 'account.json');
  const stopAll = async (): Promise<void> => {
    await site.stop();
    await rm(accountFile, { force: true });
  };
  try {
    await writeAccountFile(site, accountFile);
  } catch (err) {
    console.error(
      `--account-file: cannot write ${accountFile} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
    await stopAll();
    return 2;
  }
  applications = JSON.stringify(wordpressApplications(site, opts.name));
  console.log(`
WordPress ${site.version} at ${site.url}/wp-admin/  (PIDs ${site.pids().join(' ')})
  administrator: ${site.admin.username}  password: ${site.admin.password}
  account file:  ${accountFile}
  applications:  ${applications}

  npm run playbook -- test wordpress-quick-draft@1 --playbooks examples/wordpress --applications '${applications}' --account ${opts.name}=@${accountFile}

Ctrl-C stops it (the database, the web server and its workers) and removes its folder.`);
  return new Promise<number>((resolve) => {
    // The servers run detached and unreferenced: this timer keeps the command alive until a signal.
    const keepAlive = setInterval(() => undefined, 60_000);
    let stopping = false;
    // Ctrl-C reaches this process twice under tsx (from the terminal, and relayed by tsx's own
    // process): the listeners stay until everything is stopped, so a second signal cannot end
    // the process half-way.
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      clearInterval(keepAlive);
      console.log(`\n${signal}: stopping WordPress`);
      stopAll().then(
        () => {
          console.log('stopped');
          resolve(0);
        },
        (err: unknown) => {
          console.error(`stopping failed: ${(err as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

await program.parseAsync();
