import { BelayError, type BelayErrorOptions } from '../errors.ts';

/** Errors of receipts: building, signing and reading them. */

/** Base of the receipt errors. */
export class ReceiptError extends BelayError {
  constructor(name: string, reason: string, message: string, options?: BelayErrorOptions) {
    super(name, reason, message, options);
  }
}

/** The deployment has no receipt key (`BELAY_RECEIPT_KEY`): receipts cannot be signed. */
export class ReceiptsUnavailableError extends ReceiptError {
  constructor(message = 'receipts are not configured on this deployment (BELAY_RECEIPT_KEY)') {
    super('ReceiptsUnavailableError', 'receipts-unavailable', message);
  }
}

/** The receipt key could not be used (the key file unreadable, KMS refused or unreachable). */
export class ReceiptSigningError extends ReceiptError {
  constructor(message: string, options?: BelayErrorOptions) {
    super('ReceiptSigningError', 'receipt-signing-failed', message, options);
  }
}

/** `BELAY_RECEIPT_KEY` names no key this code can use. */
export class ReceiptKeyConfigError extends ReceiptError {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super('ReceiptKeyConfigError', 'receipt-key-config', `${variable}: ${message}`);
    this.variable = variable;
  }
}
