/** Errors of the local IAM enforcement: reading a template, resolving it, evaluating a policy. */
import { BelayError } from '../../lambdas/lib/errors.ts';

/** A condition operator the local evaluator does not model: loud, rather than a silent allow or deny. */
export class UnsupportedConditionError extends BelayError {
  constructor(readonly operator: string) {
    super(
      'UnsupportedConditionError',
      'unsupported-condition',
      `the local IAM evaluator does not model the condition operator ${operator}`,
    );
  }
}

/** The template lacks what the local stack needs of it (a function, its role, a resource it binds). */
export class TemplateError extends BelayError {
  constructor(message: string, options?: ErrorOptions) {
    super('TemplateError', 'template', message, options);
  }
}

/** `cdk synth` of the local stack's template failed. */
export class SynthError extends BelayError {
  constructor(message: string, options?: ErrorOptions) {
    super('SynthError', 'synth-failed', message, options);
  }
}

/**
 * The state machine's role may not invoke a task's function: what Step Functions records for such
 * a task (`Lambda.AWSLambdaException`, with Lambda's AccessDeniedException in the cause), so the
 * state's Retry and Catch handle it as they would in AWS.
 */
export class InvokeDeniedError extends Error {
  readonly errorType = 'AccessDeniedException';
  constructor(message: string) {
    super(message);
    this.name = 'Lambda.AWSLambdaException';
  }
}
