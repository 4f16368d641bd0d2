import { type KMSClient, kmsSdk } from '../aws/sdk/client-kms.ts';
import { getOptionalStringFromEnv } from '../config.ts';
import { traced } from '../observability/tracing.ts';
import { RECEIPT_KEY_VARIABLE } from './config.ts';
import { ReceiptKeyConfigError, ReceiptsUnavailableError } from './errors.ts';
import { createFileSigner } from './file-signer.ts';
import { createKmsSigner } from './kms-signer.ts';
import type { ReceiptSigner } from './sign.ts';

export { RECEIPT_KEY_VARIABLE } from './config.ts';

/** A signer for a deployment without a receipt key: every receipt is refused with `ReceiptsUnavailableError`. */
export function unavailableReceiptSigner(): ReceiptSigner {
  const refuse = async (): Promise<never> => {
    throw new ReceiptsUnavailableError();
  };
  return { publicKey: refuse, sign: refuse };
}

/**
 * The receipt signer `BELAY_RECEIPT_KEY` names, read once at cold start: a KMS key (the client is
 * made on the first receipt), or a local key file (created on first use). Unset: receipts are refused.
 *
 * @throws ReceiptKeyConfigError when the variable names neither
 */
export function receiptSignerFromEnv(env: NodeJS.ProcessEnv = process.env): ReceiptSigner {
  const value = getOptionalStringFromEnv(RECEIPT_KEY_VARIABLE, env);
  if (value === undefined) return unavailableReceiptSigner();
  if (value.startsWith('file:') && value.length > 5) return createFileSigner(value.slice(5));
  if (value.startsWith('kms:') && value.length > 4) {
    let client: KMSClient | undefined;
    const kms = {
      send: (command: unknown) => {
        client ??= traced(new (kmsSdk().KMSClient)({}));
        return client.send(command as never) as Promise<unknown>;
      },
    };
    return createKmsSigner(kms, value.slice(4));
  }
  throw new ReceiptKeyConfigError(RECEIPT_KEY_VARIABLE, 'must be kms:<key id or ARN> or file:<path>');
}
