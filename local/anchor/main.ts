/**
 * `npm run local:anchor`: the local Anchor-compatible service as its own process.
 *
 * Prints `ANCHORBROWSER_BASE_URL=...` and `ANCHORBROWSER_API_KEY=...` (the variables the
 * adapter and the SDK read). SIGTERM/SIGINT close the server and leave live sessions running
 * (a restart re-adopts them) unless `--end-sessions-on-exit`.
 */
import { Command, InvalidArgumentError } from 'commander';
import { startAnchorService } from './service.ts';

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('not a non-negative integer');
  return n;
}

const program = new Command()
  .name('local:anchor')
  .description('Local Anchor-compatible browser session service (real Chromium, loopback only)')
  .option(
    '--port <port>',
    'port on 127.0.0.1 (env ANCHOR_LOCAL_PORT)',
    integer,
    Number(process.env.ANCHOR_LOCAL_PORT ?? 8790),
  )
  .option(
    '--data-dir <dir>',
    'records, browsers, profiles (env ANCHOR_LOCAL_DATA_DIR)',
    process.env.ANCHOR_LOCAL_DATA_DIR ?? '.local/anchor',
  )
  .option(
    '--minute-ms <ms>',
    'length of an API minute, for tests (env ANCHOR_LOCAL_MINUTE_MS)',
    integer,
    Number(process.env.ANCHOR_LOCAL_MINUTE_MS ?? 60_000),
  )
  .option(
    '--end-sessions-on-exit',
    'end every session on SIGTERM/SIGINT',
    process.env.ANCHOR_LOCAL_END_SESSIONS_ON_EXIT === '1',
  )
  .option('--quiet', 'no session log lines', false);
program.parse();
const opts = program.opts<{
  port: number;
  dataDir: string;
  minuteMs: number;
  endSessionsOnExit: boolean;
  quiet: boolean;
}>();

const service = await startAnchorService({
  port: opts.port,
  dataDir: opts.dataDir,
  minuteMs: opts.minuteMs,
  ...(process.env.ANCHOR_LOCAL_API_KEY ? { apiKey: process.env.ANCHOR_LOCAL_API_KEY } : {}),
  ...(process.env.CHROMIUM_PATH ? { chromiumPath: process.env.CHROMIUM_PATH } : {}),
  log: opts.quiet ? undefined : (line) => console.error(`[anchor-local] ${line}`),
}).catch((err: unknown) => {
  console.error(`[anchor-local] cannot start: ${(err as Error).message}`);
  process.exit(1);
});
console.log(`ANCHORBROWSER_BASE_URL=${service.baseUrl}`);
console.log(`ANCHORBROWSER_API_KEY=${service.apiKey}`);
console.log(`ANCHOR_LOCAL_PID=${service.pid}`);

let exiting = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (exiting) return;
    exiting = true;
    service.stop({ endSessions: opts.endSessionsOnExit }).then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('[anchor-local] stop failed', err);
        process.exit(1);
      },
    );
  });
}
