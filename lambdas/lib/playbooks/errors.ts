import { BelayError } from '../errors.ts';

/** Named errors of the playbooks. */

/** No playbook is registered under that `name@version`. */
export class UnknownPlaybookError extends BelayError {
  readonly playbookId: string;
  readonly known: readonly string[];
  constructor(playbookId: string, known: readonly string[], options?: ErrorOptions) {
    super(
      'UnknownPlaybookError',
      'unknown-playbook',
      `Unknown playbook ${playbookId}; known: ${known.join(', ')}`,
      options,
    );
    this.playbookId = playbookId;
    this.known = known;
  }
}

/** The application refused the account's credentials (or the authenticator code). Never carries them. */
export class SignInFailedError extends BelayError {
  readonly application: string;
  constructor(application: string, detail: string, options?: ErrorOptions) {
    super('SignInFailedError', 'sign-in-failed', `Sign-in to ${application} failed: ${detail}`, options);
    this.application = application;
  }
}

/**
 * A sign-in step's run reached a one-time code only a person can supply. The engine normally
 * never sees this: the step's precondition reports `signed_out` first and the engine's
 * re-authentication (which returns `mfa_required`) signs in.
 */
export class MfaRequiredError extends BelayError {
  readonly application: string;
  constructor(application: string, detail: string, options?: ErrorOptions) {
    super(
      'MfaRequiredError',
      'mfa-required',
      `Sign-in to ${application} needs a one-time code from a person: ${detail}`,
      options,
    );
    this.application = application;
  }
}

/** The page does not offer what the step's inputs ask for (no such product, saved card or customer). */
export class StepActionError extends BelayError {
  readonly step: string;
  constructor(step: string, detail: string, options?: ErrorOptions) {
    super('StepActionError', 'step-action', `${step}: ${detail}`, options);
    this.step = step;
  }
}

/** The step context has no base URL for an application the step needs. */
export class MissingApplicationError extends BelayError {
  readonly application: string;
  constructor(application: string, options?: ErrorOptions) {
    super(
      'MissingApplicationError',
      'missing-application',
      `The step context has no base URL for application ${application}`,
      options,
    );
    this.application = application;
  }
}

/**
 * A step's model asked a person a question (an agent step's `ask_person`): the job waits for a
 * review with the question, and the answer is given to the step when it runs again.
 */
export class PersonAskedError extends BelayError {
  readonly step: string;
  readonly question: string;
  constructor(step: string, question: string, options?: ErrorOptions) {
    super('PersonAskedError', 'person-asked', `${step} asks a person: ${question}`, options);
    this.step = step;
    this.question = question;
  }
}

/** A step is configured in a way this deployment cannot run (a model it does not offer): the job fails. */
export class StepConfigurationError extends BelayError {
  readonly step: string;
  constructor(step: string, detail: string, options?: ErrorOptions) {
    super('StepConfigurationError', 'misconfigured', `${step}: ${detail}`, options);
    this.step = step;
  }
}

/** A step tried to write its action record where only reading it is allowed (a probe, a sign-in). */
export class StepRecordRefusedError extends BelayError {
  readonly step: string;
  constructor(step: string, options?: ErrorOptions) {
    super(
      'StepRecordRefusedError',
      'step-record-refused',
      `${step}: the step's record is written only while the step runs (RunStep)`,
      options,
    );
    this.step = step;
  }
}
