/**
 * The state machine's own IAM: Step Functions invokes each task's function as the state machine's
 * role, so a template whose role may not invoke a function fails that task in AWS. The local Step
 * Functions runner asks here before every invocation.
 */
import { InvokeDeniedError } from './errors.ts';
import { evaluate } from './evaluate.ts';
import type { FunctionPolicy } from './policies.ts';
import { refusalMessage } from './refusal.ts';

/**
 * `invoke` held to the state machine role's policy: a function the role may not invoke is not
 * called, and the task fails with {@link InvokeDeniedError} as Step Functions reports it.
 */
export function invokeAsStateMachine<A extends unknown[], R>(
  policy: FunctionPolicy,
  invoke: (functionArn: string, ...rest: A) => Promise<R>,
): (functionArn: string, ...rest: A) => Promise<R> {
  return async (functionArn, ...rest) => {
    const request = { action: 'lambda:InvokeFunction', resource: functionArn };
    const decision = evaluate(policy.statements, request);
    if (!decision.allowed) {
      const message = refusalMessage(policy.callerArn, request, decision.explicitDeny);
      throw new InvokeDeniedError(
        `${message} (Service: Lambda, Status Code: 403, Error Code: AccessDeniedException)`,
      );
    }
    return invoke(functionArn, ...rest);
  };
}
