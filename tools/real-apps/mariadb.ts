/**
 * A private MariaDB server for one test: Debian's `mariadbd` on a fresh data directory in a
 * folder of the caller's, listening on 127.0.0.1 only (a free port) and on its own socket, with
 * no configuration file read (`--no-defaults`). Its administrator account is reached only through
 * that socket, by the system user that started it (MariaDB's `unix_socket` authentication): no
 * password exists that could leak, and nothing on the TCP port can act as administrator.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../local/ports.ts';
import { RealAppMissingError, RealAppSetupError } from './errors.ts';
import { accepts, runToEnd, type StartedProcess, startProcess, waitReady } from './processes.ts';

/** Where Debian puts the server (`/usr/sbin` is not on every user's PATH). */
export const MARIADBD = '/usr/sbin/mariadbd';
export const MARIADB_INSTALL_DB = '/usr/bin/mariadb-install-db';
export const MARIADB_CLIENT = '/usr/bin/mariadb';

/** Small InnoDB files: the data directory is ~25 MB instead of ~115 MB, and starts sooner. */
const SMALL_INNODB = ['--innodb-log-file-size=8M', '--innodb-buffer-pool-size=32M'];

export interface MariaDbOptions {
  /** A folder of the caller's (created when missing): data, socket, logs. */
  dir: string;
  /** How long starting may take (default 30 s). */
  timeoutMs?: number;
}

/** A running private MariaDB server. */
export interface MariaDb {
  /** TCP port on 127.0.0.1. */
  port: number;
  /** The server's own socket (administration). */
  socket: string;
  pid: number;
  /** Every PID it runs as (one process). */
  pids(): number[];
  /**
   * Runs SQL as the administrator through the socket (statements on stdin, never on a command
   * line), answering the client's tab-separated output.
   */
  admin(sql: string): Promise<string>;
  /** Stops the server by PID (SIGTERM, then SIGKILL) and waits until it is gone. */
  stop(): Promise<void>;
}

/** The Debian files the server needs that are missing (empty when all are there). */
export function missingMariaDbFiles(): string[] {
  return [MARIADBD, MARIADB_INSTALL_DB, MARIADB_CLIENT].filter((f) => !existsSync(f));
}

/** mariadbd refuses to run as root unless told to; as anyone else `--user` only draws a warning. */
function userArgs(): string[] {
  return process.getuid?.() === 0 ? ['--user=root'] : [];
}

/**
 * Starts a private MariaDB server and resolves once it accepts connections.
 *
 * @throws RealAppMissingError when Debian's MariaDB server is not installed
 * @throws RealAppStartError when it does not start in time (the end of its log in the message)
 * @example
 * const db = await startMariaDb({ dir: '/tmp/x/mariadb' });
 * await db.admin('CREATE DATABASE app');
 * await db.stop();
 */
export async function startMariaDb(options: MariaDbOptions): Promise<MariaDb> {
  const missing = missingMariaDbFiles();
  if (missing.length > 0) throw new RealAppMissingError(missing);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const dataDir = join(options.dir, 'data');
  const socket = join(options.dir, 'mysqld.sock');
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  const osUser = userInfo().username;
  await runToEnd(
    MARIADB_INSTALL_DB,
    [
      '--no-defaults',
      `--datadir=${dataDir}`,
      ...userArgs(),
      '--auth-root-authentication-method=socket',
      `--auth-root-socket-user=${osUser}`,
      '--skip-test-db',
      '--skip-name-resolve',
      ...SMALL_INNODB,
    ],
    { timeoutMs },
  );

  for (let attempt = 1; ; attempt++) {
    const port = (await freePorts(1))[0] as number;
    const server = startProcess(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${dataDir}`,
        ...userArgs(),
        `--socket=${socket}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--pid-file=${join(options.dir, 'mysqld.pid')}`,
        '--skip-name-resolve',
        '--skip-log-bin',
        ...SMALL_INNODB,
      ],
      { logFile: join(options.dir, 'mysqld.log') },
    );
    try {
      await waitReady(server, 'mariadbd', () => accepts(port), timeoutMs);
    } catch (err) {
      await server.stop().catch(() => undefined);
      const taken = /address already in use|bind on TCP\/IP port/i.test(await server.logTail());
      if (taken && attempt < 3) continue;
      throw err;
    }
    return running(server, port, socket, osUser);
  }
}

function running(server: StartedProcess, port: number, socket: string, osUser: string): MariaDb {
  return {
    port,
    socket,
    pid: server.pid,
    pids: () => server.pids(),
    admin: (sql) =>
      runToEnd(
        MARIADB_CLIENT,
        ['--no-defaults', `--socket=${socket}`, `--user=${osUser}`, '--batch', '--skip-column-names'],
        { timeoutMs: 15_000, input: sql },
      ).catch((err: unknown) => {
        // The client echoes the failing statement's text: say only that it failed, and how.
        const code = /ERROR (\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
        throw new RealAppSetupError(
          'mariadb',
          `an administration statement failed${code ? ` (ERROR ${code})` : ''}`,
        );
      }),
    stop: () => server.stop(10_000),
  };
}
