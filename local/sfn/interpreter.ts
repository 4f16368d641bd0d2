/**
 * The interpreter (aws-local-stepfunctions), loaded with the Node 20 polyfill, and the pieces of it
 * the runner needs but the package does not export.
 */
import './polyfill.ts';
import { StateMachine } from 'aws-local-stepfunctions';

export { StateMachine };

let timeoutPrototype: Promise<object> | undefined;

/**
 * The interpreter matches `States.TaskFailed` against every error except instances of its own
 * (unexported) `States.Timeout` class, so a timeout the runner raises must be one of those. This
 * captures the class once by letting a throw-away one-state machine time out after 1 ms.
 */
function captureTimeoutPrototype(): Promise<object> {
  timeoutPrototype ??= (async () => {
    const machine = new StateMachine(
      {
        StartAt: 'T',
        States: {
          T: {
            Type: 'Task',
            Resource: 'arn:aws:lambda:us-east-1:123456789012:function:capture',
            TimeoutSeconds: 0.001,
            End: true,
          },
        },
      },
      { validationOptions: { noValidate: true } },
    );
    const run = machine.run(null, {
      overrides: { taskResourceLocalHandlers: { T: () => new Promise<never>(() => {}) } },
    });
    try {
      await run.result;
    } catch (err) {
      const cause = (err as Error).cause;
      if (cause instanceof Error && cause.name === 'States.Timeout')
        return Object.getPrototypeOf(cause) as object;
    }
    throw new Error('aws-local-stepfunctions did not raise States.Timeout as expected');
  })();
  return timeoutPrototype;
}

/** Returns a factory of genuine interpreter `States.Timeout` errors. */
export async function timeoutErrorFactory(): Promise<(message: string) => Error> {
  const Ctor = (await captureTimeoutPrototype()).constructor as new () => Error;
  return (message: string): Error => {
    const err = new Ctor();
    err.message = message;
    return err;
  };
}
