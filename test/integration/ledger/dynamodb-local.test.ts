import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createLedgerTable } from '../../../lambdas/lib/ledger/index.ts';
import { createDynamoDbClient, FAST_START_JVM_ARGS, startDynamoDbLocal } from '../../../local/dynamodb.ts';
import { DynamoDbLocalStartError, JavaMissingError } from '../../../local/errors.ts';

const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** PIDs of the children of `pid`, from ps (which exits 1 when there are none). */
function childrenOf(pid: number): number[] {
  try {
    const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).trim();
    return out === '' ? [] : out.split(/\s+/).map(Number);
  } catch (err) {
    if ((err as { status?: number }).status === 1) return [];
    throw err;
  }
}

describe('Function: startDynamoDbLocal', () => {
  it('keeps tables in dbPath across a restart, answers on 127.0.0.1, and leaves no process behind', async () => {
    const dbPath = await mkdtemp(join(tmpdir(), 'belay-ddb-'));
    dirs.push(dbPath);
    const first = await startDynamoDbLocal({ dbPath });
    const pids = [first.pid];
    try {
      expect(first.endpoint).toBe(`http://127.0.0.1:${first.port}`);
      expect(isRunning(first.pid)).toBe(true);
      expect(childrenOf(first.pid)).toEqual([]);
      // The JVM runs with the fast-start flags (C1 only, serial collector) unless told otherwise.
      const argv = readFileSync(`/proc/${first.pid}/cmdline`, 'utf8').split('\0');
      expect(argv).toEqual(expect.arrayContaining([...FAST_START_JVM_ARGS]));
      const client = createDynamoDbClient(first.endpoint);
      await createLedgerTable(client, 'persisted-ledger');
      client.destroy();
    } finally {
      await first.stop();
    }
    expect(isRunning(first.pid)).toBe(false);

    const second = await startDynamoDbLocal({ dbPath, port: first.port });
    pids.push(second.pid);
    try {
      expect(second.port).toBe(first.port);
      const client = createDynamoDbClient(second.endpoint);
      const { TableNames } = await client.send(new ListTablesCommand({}));
      client.destroy();
      expect(TableNames).toContain('persisted-ledger');
    } finally {
      await second.stop();
      await second.stop();
    }
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it('fails with DynamoDbLocalStartError when the requested port is taken', async () => {
    // Connections are dropped at once, so the port is taken but never answers like DynamoDB.
    const server: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      await expect(startDynamoDbLocal({ port, timeoutMs: 45_000 })).rejects.toBeInstanceOf(
        DynamoDbLocalStartError,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('names the fix when Java is missing', async () => {
    const attempt = startDynamoDbLocal({ javaCommand: '/nonexistent/bin/java' });
    await expect(attempt).rejects.toBeInstanceOf(JavaMissingError);
    await expect(attempt).rejects.toThrow(/npm run setup.*apt-get install -y openjdk-17-jre-headless/);
  });
});
