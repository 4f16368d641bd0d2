/**
 * The key job receipts are signed with: an asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY),
 * whose private half never leaves KMS. `bindReceiptKey` names it to a function
 * (`BELAY_RECEIPT_KEY=kms:<arn>`) and allows exactly what signing needs: `kms:Sign` and
 * `kms:GetPublicKey`, on this key only. Every signature is in CloudTrail.
 */
import { type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { RECEIPT_KEY_VARIABLE } from '../../lambdas/lib/receipts/config.ts';

/** What signing a receipt needs of the key. */
export const RECEIPT_SIGN = Object.freeze(['kms:Sign', 'kms:GetPublicKey'] as const);

export interface ReceiptKeyProps {
  /** Keep the key when the stack goes (receipts already issued name it; the public key in them still verifies). */
  readonly removalPolicy: RemovalPolicy;
}

/** The receipt signing key of a deployment. */
export class ReceiptKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string, props: ReceiptKeyProps) {
    super(scope, id);
    // Asymmetric keys do not rotate: a new key is a new key id in new receipts, the old ones keep theirs.
    this.key = new Key(this, 'Key', {
      description: `Signs Belay job receipts (${Stack.of(this).stackName})`,
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: props.removalPolicy,
    });
  }
}

/**
 * Sets `BELAY_RECEIPT_KEY` to the key and allows the function to sign with it and read its
 * public key, nothing else.
 *
 * @example
 * bindReceiptKey(apiHandler, new ReceiptKey(this, 'Receipts', { removalPolicy }).key);
 */
export function bindReceiptKey(fn: LambdaFunction, key: Key): iam.Grant {
  fn.addEnvironment(RECEIPT_KEY_VARIABLE, `kms:${key.keyArn}`);
  return key.grant(fn, ...RECEIPT_SIGN);
}
