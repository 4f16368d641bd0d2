/**
 * WordPress as a real application for tests: Debian's WordPress on a private MariaDB, served by
 * PHP's built-in server, all on 127.0.0.1 and all in one temporary folder, started and stopped
 * by PID. Nobody here wrote it: it is the site Belay's engine and playbook tools meet as a
 * stranger (a dashboard that saves in the background, chatters with Heartbeat POSTs, and names
 * its records by ids it chooses).
 *
 * Needs Debian's `wordpress`, `mariadb-server-core`, `php-cli` and `php-mysql`:
 * `bash scripts/install-real-apps.sh` (or `npm run setup:real-apps`).
 *
 * @example
 * const wp = await startWordPress();
 * try {
 *   // sign in at `${wp.url}/wp-login.php` as wp.admin.username / wp.admin.password ...
 *   await wp.posts.count({ status: 'draft', title: 'Launch notes' });
 * } finally {
 *   await wp.stop(); // every PID it started is gone, and its folder
 * }
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../local/ports.ts';
import { RealAppMissingError, RealAppSetupError } from './errors.ts';
import { type MariaDb, missingMariaDbFiles, startMariaDb } from './mariadb.ts';
import { PHP, type PhpServer, startPhpServer } from './php-server.ts';
import { runToEnd } from './processes.ts';
import {
  type HandledRequest,
  parseHandledRequests,
  parseServerLog,
  type ServerLogLine,
} from './request-logs.ts';
import { prepareWordPressFiles, WORDPRESS_SOURCE, WORDPRESS_SUPPORT_DIR } from './wordpress-files.ts';
import { type WordPressPosts, wordpressPosts } from './wordpress-posts.ts';

export interface WordPressOptions {
  /** Where the temporary folder is made (default the system's temporary directory). */
  tmpRoot?: string;
  /** The Heartbeat's period on admin pages in ms (default 1000; 0: WordPress's own, 15 s at least). */
  heartbeatMs?: number;
  /** PHP workers serving requests at once (default 4: a page and its background requests). */
  workers?: number;
  /** How long each process may take to start (default 60 s). */
  timeoutMs?: number;
  /** The administrator's user name (default `admin`). */
  adminUser?: string;
}

/** A WordPress account: what `--account <app>=@file.json` takes. */
export interface WordPressAccount {
  username: string;
  password: string;
}

/** A running private WordPress. */
export interface RunningWordPress {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** WordPress's version (Debian's package). */
  version: string;
  /** The temporary folder: site files, database, logs. Removed by `stop()`. */
  dir: string;
  /** The administrator, with a password generated for this run. */
  admin: WordPressAccount;
  /** Counts and lists what WordPress stored, straight from MariaDB (a read-only account). */
  posts: WordPressPosts;
  /** PHP's built-in server's request lines so far (method, path and query, status: no bodies). */
  serverLog(): Promise<ServerLogLine[]>;
  /** The unsafe requests WordPress handled so far, with their `action` field (the test site's plugin). */
  handledRequests(): Promise<HandledRequest[]>;
  /** Every PID it started that still belongs to it: mariadbd, PHP's server and its workers. */
  pids(): number[];
  /** Stops every process by PID, waits until each is gone, removes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** A random secret for this run: letters, digits, `-` and `_` (safe in SQL and PHP literals). */
function secret(bytes = 18): string {
  return randomBytes(bytes).toString('base64url');
}

/** The Debian packages the harness needs that are missing (empty when all are there). */
export async function missingWordPressPackages(): Promise<string[]> {
  const missing: string[] = [];
  if (!existsSync(join(WORDPRESS_SOURCE, 'wp-load.php'))) missing.push('wordpress');
  if (missingMariaDbFiles().length > 0) missing.push('mariadb-server-core');
  if (!existsSync(PHP)) missing.push('php-cli', 'php-mysql');
  else {
    const mysqli = await runToEnd(PHP, ['-r', 'exit(extension_loaded("mysqli") ? 0 : 1);'], {
      timeoutMs: 10_000,
    }).then(
      () => true,
      () => false,
    );
    if (!mysqli) missing.push('php-mysql');
  }
  return missing;
}

/** The database, its accounts and their privileges: WordPress's own, and a reader for the tests. */
function databaseSql(appPassword: string, readerPassword: string): string {
  return `CREATE DATABASE wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER 'wordpress'@'127.0.0.1' IDENTIFIED BY '${appPassword}';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP ON wordpress.* TO 'wordpress'@'127.0.0.1';
CREATE USER 'belay_reader'@'127.0.0.1' IDENTIFIED BY '${readerPassword}';
GRANT SELECT ON wordpress.* TO 'belay_reader'@'127.0.0.1';
`;
}

/**
 * Starts a private WordPress and resolves once its sign-in page answers: a fresh MariaDB, a
 * fresh copy of WordPress's files with its own `wp-config.php`, WordPress installed (site, an
 * administrator with a generated password), PHP's built-in server with several workers.
 * Every wait is bounded; on any failure what was started is stopped and the folder removed.
 *
 * @throws RealAppMissingError naming the Debian packages to install
 * @throws RealAppStartError when a process does not start in time
 * @throws RealAppSetupError when WordPress cannot be installed
 */
export async function startWordPress(options: WordPressOptions = {}): Promise<RunningWordPress> {
  const missing = await missingWordPressPackages();
  if (missing.length > 0) throw new RealAppMissingError(missing);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const dir = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'belay-wordpress-'));
  let db: MariaDb | undefined;
  let php: PhpServer | undefined;
  let posts: WordPressPosts | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const problems: unknown[] = [];
      for (const step of [() => posts?.close(), () => php?.stop(), () => db?.stop()]) {
        await Promise.resolve()
          .then(step)
          .catch((err: unknown) => problems.push(err));
      }
      await rm(dir, { recursive: true, force: true });
      if (problems.length > 0) throw problems[0];
    })();
    return stopping;
  };

  try {
    db = await startMariaDb({ dir: join(dir, 'mariadb'), timeoutMs });
    const appPassword = secret();
    const readerPassword = secret();
    await db.admin(databaseSql(appPassword, readerPassword));

    const port = (await freePorts(1))[0] as number;
    const host = `127.0.0.1:${port}`;
    const siteDir = join(dir, 'site');
    const logs = join(dir, 'logs');
    await mkdir(logs, { mode: 0o700 });
    const requestLog = join(logs, 'handled-requests.jsonl');
    await prepareWordPressFiles(siteDir, {
      db: { name: 'wordpress', user: 'wordpress', password: appPassword, host: `127.0.0.1:${db.port}` },
      host,
      requestLog,
      heartbeatMs: options.heartbeatMs ?? 1_000,
    });

    const admin: WordPressAccount = { username: options.adminUser ?? 'admin', password: secret() };
    let installed: { version?: unknown };
    try {
      const out = await runToEnd(PHP, [join(WORDPRESS_SUPPORT_DIR, 'install.php'), siteDir], {
        timeoutMs,
        env: {
          ...process.env,
          BELAY_WP_HOST: host,
          BELAY_WP_TITLE: 'Belay test site',
          BELAY_WP_ADMIN_USER: admin.username,
          BELAY_WP_ADMIN_EMAIL: `${admin.username}@example.test`,
          BELAY_WP_ADMIN_PASSWORD: admin.password,
        },
      });
      installed = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { version?: unknown };
    } catch (err) {
      throw new RealAppSetupError('wordpress install', (err as Error).message, { cause: err });
    }

    php = await startPhpServer({
      docroot: siteDir,
      dir: logs,
      port,
      workers: options.workers ?? 4,
      readyPath: '/wp-login.php',
      timeoutMs,
    });
    const server = php;
    const database = db;
    posts = wordpressPosts({
      port: db.port,
      database: 'wordpress',
      user: 'belay_reader',
      password: readerPassword,
    });
    return {
      url: server.url,
      version: typeof installed.version === 'string' ? installed.version : 'unknown',
      dir,
      admin,
      posts,
      serverLog: async () => parseServerLog(await readFile(server.logFile, 'utf8').catch(() => '')),
      handledRequests: async () => parseHandledRequests(await readFile(requestLog, 'utf8').catch(() => '')),
      pids: () => [...database.pids(), ...server.pids()],
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
