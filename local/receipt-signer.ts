/**
 * The local stack's receipt signer held to the API's policy in the synthesized template, as KMS
 * would hold it: the key file signs only if the policy allows `kms:Sign` (and `kms:GetPublicKey`
 * for the public key) on the key the template names to the function (`BELAY_RECEIPT_KEY`). A
 * template that gives the API no key, or no grant on it, fails here as it would in AWS.
 */
import { ReceiptSigningError } from '../lambdas/lib/receipts/errors.ts';
import type { ReceiptSigner } from '../lambdas/lib/receipts/sign.ts';
import { evaluate } from './iam/evaluate.ts';
import type { EnforcementSpec } from './iam/policies.ts';
import { refusalMessage } from './iam/refusal.ts';
import { iamRequests } from './iam/requests.ts';

/** A refused call, as the stack reports refusals. */
export interface SignerRefusal {
  functionName: string;
  action: string;
  resource: string;
  message: string;
}

/**
 * `signer`, refused as IAM would refuse KMS when `spec`'s policy does not allow the call on
 * `keyArn` (the local ARN of the template's key; `undefined` when the template names none).
 */
export function policyHeldSigner(
  signer: ReceiptSigner,
  spec: EnforcementSpec,
  keyArn: string | undefined,
  onRefused: (refusal: SignerRefusal) => void,
): ReceiptSigner {
  const check = (command: 'SignCommand' | 'GetPublicKeyCommand'): void => {
    if (keyArn === undefined) throw new ReceiptSigningError('the template names no receipt key to the API');
    for (const request of iamRequests(spec.facts, 'KMSClient', command, { KeyId: keyArn })) {
      const decision = evaluate(spec.policy.statements, request);
      if (decision.allowed) continue;
      const message = refusalMessage(spec.policy.callerArn, request, decision.explicitDeny);
      onRefused({
        functionName: spec.policy.functionName,
        action: request.action,
        resource: request.resource,
        message,
      });
      throw new ReceiptSigningError(`AccessDeniedException: ${message}`);
    }
  };
  return {
    async publicKey() {
      check('GetPublicKeyCommand');
      return signer.publicKey();
    },
    async sign(message) {
      check('SignCommand');
      return signer.sign(message);
    },
  };
}
