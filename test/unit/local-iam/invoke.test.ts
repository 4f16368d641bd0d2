/**
 * Step Functions invokes each task's function as the state machine's role: a role that may not
 * invoke a function fails the task as AWS reports it, and the function is never called.
 */
import { describe, expect, it } from 'vitest';
import { InvokeDeniedError } from '../../../local/iam/errors.ts';
import { invokeAsStateMachine } from '../../../local/iam/invoke.ts';
import type { FunctionPolicy } from '../../../local/iam/policies.ts';
import { describeInvokeError } from '../../../local/sfn/task.ts';

const RUN_STEP = 'arn:aws:lambda:us-east-1:000000000000:function:belay-run-step';
const FINISH = 'arn:aws:lambda:us-east-1:000000000000:function:belay-finish';
const policy: FunctionPolicy = {
  constructId: 'JobsMachine',
  functionName: 'StepFunctions',
  callerArn: 'arn:aws:sts::000000000000:assumed-role/Belay-JobsMachineRole/StepFunctions',
  statements: [{ Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: [RUN_STEP, `${RUN_STEP}:*`] }],
};

describe('Function: invokeAsStateMachine', () => {
  it('invokes a function the role may invoke, and refuses one it may not as Step Functions reports it', async () => {
    const called: string[] = [];
    const invoke = invokeAsStateMachine(policy, async (arn: string, payload: unknown) => {
      called.push(arn);
      return payload;
    });
    expect(await invoke(RUN_STEP, { ok: 1 })).toEqual({ ok: 1 });
    const err = await invoke(FINISH, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvokeDeniedError);
    expect(called).toEqual([RUN_STEP]);
    // What the task's history and the ASL's Retry/Catch see.
    const { error, cause } = describeInvokeError(err);
    expect(error).toBe('Lambda.AWSLambdaException');
    expect(JSON.parse(cause).errorMessage).toContain(
      `is not authorized to perform: lambda:InvokeFunction on resource: ${FINISH}`,
    );
  });
});
