/**
 * PHP's built-in web server (`php -S`) on a free 127.0.0.1 port, with several workers
 * (`PHP_CLI_SERVER_WORKERS`) so a page and its background requests are served at once.
 *
 * Stopping it needs every PID: on SIGTERM the server's first process exits and leaves its forked
 * workers running (still accepting on the port), so the workers are recorded once it is up and
 * each is stopped by its PID.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { freePorts } from '../../local/ports.ts';
import { RealAppMissingError } from './errors.ts';
import { type StartedProcess, startProcess, waitReady } from './processes.ts';

export const PHP = '/usr/bin/php';

export interface PhpServerOptions {
  /** The document root. */
  docroot: string;
  /** A folder of the caller's for the server's log and PHP's error log. */
  dir: string;
  /** The port; a free one when not given (then another is tried if it was taken meanwhile). */
  port?: number;
  /** Workers serving requests at once (default 4). */
  workers?: number;
  /** A path that answers once the application is ready (default `/`). */
  readyPath?: string;
  /** How long starting may take (default 20 s). */
  timeoutMs?: number;
}

/** A running PHP built-in server. */
export interface PhpServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** The server's log: one line per request (`[200]: POST /wp-admin/post.php`), no bodies. */
  logFile: string;
  /** PHP's error log (display_errors is off, so notices never reach a page). */
  errorLog: string;
  /** The server's PIDs: its first process and its workers. */
  pids(): number[];
  /** Stops every PID (SIGTERM, then SIGKILL) and waits until they are gone. */
  stop(): Promise<void>;
}

/** Any HTTP answer on `path` means the server is up. */
function answers(port: number, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', timeout: 5_000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/**
 * Starts `php -S` on a free loopback port and resolves once `readyPath` answers.
 *
 * @throws RealAppMissingError when PHP's command-line interpreter is not installed
 * @throws RealAppStartError when it does not answer in time (the end of its log in the message)
 * @example
 * const php = await startPhpServer({ docroot: '/tmp/x/site', dir: '/tmp/x' });
 * await fetch(`${php.url}/`);
 * await php.stop();
 */
export async function startPhpServer(options: PhpServerOptions): Promise<PhpServer> {
  if (!existsSync(PHP)) throw new RealAppMissingError([PHP]);
  const workers = options.workers ?? 4;
  const logFile = join(options.dir, 'php-server.log');
  const errorLog = join(options.dir, 'php-errors.log');
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? ((await freePorts(1))[0] as number);
    const server: StartedProcess = startProcess(
      PHP,
      [
        // Compiled scripts shared by the workers: a WordPress page is several times faster.
        '-d',
        'opcache.enable_cli=1',
        '-d',
        'display_errors=0',
        '-d',
        'log_errors=1',
        '-d',
        `error_log=${errorLog}`,
        '-S',
        `127.0.0.1:${port}`,
        '-t',
        options.docroot,
      ],
      {
        logFile,
        cwd: options.docroot,
        env: { ...process.env, PHP_CLI_SERVER_WORKERS: String(workers) },
      },
    );
    try {
      await waitReady(
        server,
        'php -S',
        () => answers(port, options.readyPath ?? '/'),
        options.timeoutMs ?? 20_000,
      );
    } catch (err) {
      await server.stop().catch(() => undefined);
      const taken = /Address already in use/i.test(await server.logTail());
      if (taken && options.port === undefined && attempt < 3) continue;
      throw err;
    }
    server.recordChildren();
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      logFile,
      errorLog,
      pids: () => server.pids(),
      stop: () => server.stop(),
    };
  }
}
