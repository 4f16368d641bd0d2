/**
 * The variable naming the receipt key: `kms:<key id or ARN>` in AWS (the CDK stack sets it),
 * `file:<path>` locally (the local stack sets it). Its own module: the CDK app reads it without
 * loading any runtime code.
 */
export const RECEIPT_KEY_VARIABLE = 'BELAY_RECEIPT_KEY';
