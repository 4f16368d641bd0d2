import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Receipt, ReceiptWrite } from '../../../lambdas/lib/receipts/format.ts';
import { keyFingerprint } from '../../../lambdas/lib/receipts/sign.ts';
import { keepsEarlier, type ReceiptVerdict, verifyReceipt } from '../../../lambdas/lib/receipts/verify.ts';
import { CliError, EXIT } from './errors.ts';
import type { CommandContext } from './jobs.ts';

/**
 * `belay receipt get` fetches a job's signed receipt; `belay receipt verify` checks one offline,
 * with nothing but the file (and the public key the auditor trusts): exit 0 valid, 1 invalid
 * (each broken entry named), 2 usage (no such file, an unreadable key).
 */
export function registerReceipts(program: Command, ctx: CommandContext): void {
  const receipt = program
    .command('receipt')
    .description("a job's signed receipt: fetch it, verify it offline");
  receipt
    .command('get <jobId>')
    .description("fetch the job's signed receipt (to standard output, or to a file with -o)")
    .option('-o, --output <file>', 'write it to this file')
    .action(async (jobId: string, opts: { output?: string }) => {
      const res = await (await ctx.client()).request('GET', `/jobs/${encodeURIComponent(jobId)}/receipt`);
      const text = `${JSON.stringify(res, null, 2)}\n`;
      if (opts.output) {
        await writeFile(opts.output, text, 'utf8');
        ctx.io.err(`receipt of ${jobId} written to ${opts.output}`);
      } else ctx.io.out(text.trimEnd());
    });
  receipt
    .command('verify <file>')
    .description(
      "check a receipt offline: its signature, every entry against its hash, the chain to the job's head, each write with its evidence; exit 0 valid, 1 invalid, 2 usage",
    )
    .option('--key <pem>', 'a PEM file of the public key you trust: the receipt must be signed by it')
    .option('--since <file>', 'an earlier receipt of the job: every entry it showed must be there, unchanged')
    .action(async (file: string, opts: { key?: string; since?: string }, command: Command) => {
      const input = await readInput(file);
      // `belay --key` is the API key elsewhere; the root program takes the option wherever it is
      // typed, and verifying calls no API, so here it is the public key's file.
      const keyFile = opts.key ?? (command.optsWithGlobals() as { key?: string }).key;
      const trustedKey = keyFile === undefined ? undefined : await readKey(keyFile);
      const verdict = verifyReceipt(input, trustedKey === undefined ? {} : { trustedKey });
      if (opts.since !== undefined && verdict.receipt) {
        const earlier = verifyReceipt(
          await readInput(opts.since),
          trustedKey === undefined ? {} : { trustedKey },
        );
        if (!earlier.receipt || !earlier.valid) {
          verdict.problems.push({ message: `the earlier receipt ${opts.since} is not valid itself` });
        } else verdict.problems.push(...keepsEarlier(earlier.receipt, verdict.receipt));
        verdict.valid = verdict.problems.length === 0;
      }
      ctx.io.out(ctx.json() ? JSON.stringify(jsonVerdict(verdict), null, 2) : report(verdict));
      ctx.exit(verdict.valid ? EXIT.ok : EXIT.error);
    });
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(
      `cannot read the ${what} file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      EXIT.usage,
    );
  }
}

/** A PEM public key the auditor trusts; anything else is a usage error. */
async function readKey(path: string): Promise<string> {
  const pem = await readText(path, 'key');
  try {
    keyFingerprint(pem);
  } catch {
    throw new CliError(`${path} is not a PEM public key`, EXIT.usage);
  }
  return pem;
}

/** The file as JSON; a file that is not JSON is an invalid receipt, not a usage error. */
async function readInput(path: string): Promise<unknown> {
  const text = await readText(path, 'receipt');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function jsonVerdict(v: ReceiptVerdict): Record<string, unknown> {
  return {
    valid: v.valid,
    problems: v.problems,
    notes: v.notes,
    ...(v.key ? { key: v.key } : {}),
    ...(v.receipt ? { job: v.receipt.job, writes: v.receipt.writes } : {}),
  };
}

function writeLine(w: ReceiptWrite): string {
  const requests = w.requests.map(
    (r) =>
      `${r.method} ${r.url} -> ${r.status ?? (r.failed ? 'no answer (failed)' : 'no answer seen')}${r.location ? ` (to ${r.location})` : ''} at ${r.at}${r.excerpt ? `\n      answer: ${r.excerpt}` : ''}`,
  );
  const lines = [`  ${w.step} (entry ${w.entryId}): settled by ${w.settledBy}`];
  for (const r of requests) lines.push(`    committed by ${r}`);
  lines.push(`    evidence ${JSON.stringify(w.evidence)}`);
  if (w.screenshot) lines.push(`    screenshot sha256 ${w.screenshot.sha256} (${w.screenshot.bytes} bytes)`);
  return lines.join('\n');
}

function report(v: ReceiptVerdict): string {
  const lines: string[] = [];
  const r: Receipt | undefined = v.receipt;
  if (r) {
    lines.push(
      `receipt of job ${r.job.jobId} (tenant ${r.job.tenantId}, ${r.job.playbook}, ${r.job.status}), issued ${r.issuedAt}`,
    );
    lines.push(
      `signed by key ${r.signature.keyId}${v.key?.trusted ? ' (the key given)' : ' (embedded; give --key to check it is the one you trust)'}`,
    );
    lines.push(`chain: ${r.chain.length} entries${r.job.chainHead ? `, head ${r.job.chainHead}` : ''}`);
    lines.push(`writes: ${r.writes.length}`);
    for (const w of r.writes) lines.push(writeLine(w));
  }
  for (const n of v.notes) lines.push(`note: ${n}`);
  if (v.valid) lines.push('VALID');
  else {
    lines.push(`INVALID: ${v.problems.length} problem${v.problems.length === 1 ? '' : 's'}`);
    for (const p of v.problems) lines.push(`  ${p.message}`);
  }
  return lines.join('\n');
}
