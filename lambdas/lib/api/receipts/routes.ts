import { buildReceipt } from '../../receipts/build.ts';
import { ReceiptError } from '../../receipts/errors.ts';
import type { Receipt } from '../../receipts/format.ts';
import { signReceipt } from '../../receipts/sign.ts';
import type { ApiDeps } from '../deps.ts';
import { ServiceUnavailableError } from '../errors.ts';
import { toEntryView } from '../jobs/views.ts';
import { ANY_ROLE, ok, type Route } from '../route.ts';

/**
 * A job's signed receipt, built from its ledger as stored: its entries redacted as the API shows
 * them, with what checks each one's hash, and its writes. Any key of the tenant may read it,
 * as it may read the ledger; another tenant's job is a 404 like a missing one.
 */
export async function jobReceipt(deps: ApiDeps, tenantId: string, jobId: string): Promise<Receipt> {
  const { ledger } = deps.engine;
  const { job, entries } = await ledger.readPartition(tenantId, jobId);
  const unsigned = await buildReceipt({
    job,
    entries,
    evidence: (entry) => ledger.getEvidence(entry),
    view: toEntryView,
    now: deps.engine.clock(),
  });
  try {
    return await signReceipt(unsigned, deps.receipts);
  } catch (err) {
    if (err instanceof ReceiptError) throw new ServiceUnavailableError(err.message, { cause: err });
    throw err;
  }
}

export const RECEIPT_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/jobs/{jobId}/receipt',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const jobId = req.params.jobId ?? '';
      const receipt = await jobReceipt(req.deps, req.principal.tenantId, jobId);
      return ok(receipt, 200, { 'Content-Disposition': `attachment; filename="receipt-${jobId}.json"` });
    },
  },
];
