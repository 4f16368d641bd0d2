/**
 * `invoice-handoff@1` on the whole local stack (DynamoDB Local, the local Step Functions and
 * Lambda runners, the local Anchor service with real Chromium, the demo sites de-duplicating
 * nothing), with the RunStep worker SIGKILLed between the download and the upload, and again
 * after the upload's action: each job downloads the invoice once, attaches it once, and the
 * bytes the CRM holds hash to the SHA-256 the ledger recorded for the download.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKeyOf } from '../../../lambdas/lib/engine/job-identity.ts';
import { DEMO_TENANT } from '../../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../../local/stack.ts';
import { createClient } from '../../../tools/cli/belay/client.ts';
import { runScenario } from '../../../tools/playbook/drive.ts';
import type { Scenario } from '../../../tools/playbook/verdicts.ts';

const PLAYBOOK = 'invoice-handoff@1';
const ATTACH = 3; // the step index of attach-invoice (after billing-sign-in, download-invoice, crm-sign-in)

interface Counts {
  downloads: number;
  attachments: { key: string; sha256: string; size: number; contentBase64: string }[];
}

describe('Playbook: invoice-handoff@1 on the local stack, killed around the upload', () => {
  let dataDir: string;
  let stack: LocalStack;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-handoff-'));
    stack = await startLocalStack({
      dataDir,
      fresh: true,
      resume: false,
      apiPort: 0,
      ports: { anchor: 0, shop: 0, crm: 0, billing: 0, dynamodb: 0, sfn: 0 },
      lambdaMode: 'warm',
      retryIntervalMs: 150,
      waitTimeOverrides: { RetryBackoff: 200, FinishBackoff: 200, WaitForCapacity: 500 },
      env: { BELAY_RETRY_BACKOFF_SECONDS: '0', BELAY_CAPACITY_POLL_SECONDS: '1', LOG_LEVEL: 'error' },
    });
    // Every upload request commits an attachment: a second upload would show.
    stack.sites.setFaults('crm', { dedupe: false });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop({ endSessions: true });
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** What the sites hold, from their own persisted data. */
  const sites = (): Counts => {
    // A site writes its file at its first change: none yet is its seed, with no download or attachment.
    const read = <D>(site: string): Partial<D> => {
      const file = join(stack.dataDir, 'sites', `${site}.json`);
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { data: D }).data : {};
    };
    const billing = read<{ downloads?: { invoiceId: string }[] }>('billing');
    const crm = read<{ attachments?: Counts['attachments'] }>('crm');
    return {
      downloads: (billing.downloads ?? []).filter((d) => d.invoiceId === 'INV-5003-01').length,
      attachments: crm.attachments ?? [],
    };
  };

  it.each<[string, Scenario]>([
    ['killed between the download and the upload', { fault: 'kill-before', stepIndex: ATTACH }],
    ['killed after the upload, before its checkpoint', { fault: 'kill-after', stepIndex: ATTACH }],
  ])(
    '%s: one download, one upload, the CRM holds the recorded bytes',
    async (_what, scenario) => {
      const playbook = stack.playbooks.registry.get(PLAYBOOK);
      const client = createClient(stack.apiUrl ?? '', stack.demoApiKey);
      const before = sites();
      const jobId = `handoff-${scenario.fault}-${Date.now().toString(36)}`;
      const outcome = await runScenario(
        { stack, client, playbook, jobTimeoutMs: 240_000, proxies: {}, committing: {} },
        scenario,
        jobId,
        { billing: 'acct_demo_billing', crm: 'acct_demo_crm' },
        playbook.exampleInputs,
      );
      expect(outcome.status, outcome.detail).toBe('SUCCEEDED');
      expect(outcome.struck).toBe(true);

      const { job, entries } = await stack.ledger.readJob(DEMO_TENANT, jobId);
      const downloadDone = entries.filter(
        (e) => e.type === 'step-completed' && e.step === 'download-invoice',
      );
      expect(downloadDone).toHaveLength(1);
      const evidence = downloadDone[0]?.evidence as { sha256: string; size: number; path: string };
      expect(evidence.path).toBe(`tenants/${DEMO_TENANT}/jobs/${jobId}/invoice-INV-5003-01.pdf`);

      const after = sites();
      expect(after.downloads - before.downloads).toBe(1);
      const key = idempotencyKeyOf(job, 'attach-invoice');
      const mine = after.attachments.filter((a) => a.key === key);
      expect(mine).toHaveLength(1);
      const held = Buffer.from(mine[0]?.contentBase64 ?? '', 'base64');
      expect(held.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(createHash('sha256').update(held).digest('hex')).toBe(evidence.sha256);
      expect(held.length).toBe(evidence.size);
    },
    300_000,
  );
});
