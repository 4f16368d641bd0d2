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

/**
 * A target's `within` finds more than one element: which one the step meant is a guess, and a
 * step never acts on a guess (it would fill or read another record's row).
 */
export class AmbiguousTargetError extends BelayError {
  readonly target: string;
  readonly count: number;
  constructor(target: string, count: number, options?: ErrorOptions) {
    super(
      'AmbiguousTargetError',
      'ambiguous-target',
      `within ${target} finds ${count} elements: name one (a where filter, nth, or a name that only it has)`,
      options,
    );
    this.target = target;
    this.count = count;
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

/** A playbook (or application) fails the SDK's checks: every problem, one per line. */
export class PlaybookDefinitionError extends BelayError {
  readonly playbook: string;
  readonly problems: readonly string[];
  constructor(playbook: string, problems: readonly string[], options?: ErrorOptions) {
    super(
      'PlaybookDefinitionError',
      'playbook-definition',
      `${playbook} is not a valid playbook:\n  ${problems.join('\n  ')}`,
      options,
    );
    this.playbook = playbook;
    this.problems = problems;
  }
}

/** A playbook file could not be loaded or is not valid; `problems` name the line and field where known. */
export class PlaybookFileError extends BelayError {
  readonly file: string;
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[], options?: ErrorOptions) {
    super('PlaybookFileError', 'playbook-file', `${file}:\n  ${problems.join('\n  ')}`, options);
    this.file = file;
    this.problems = problems;
  }
}

/** Two playbook files define the same `name@version`. */
export class DuplicatePlaybookError extends BelayError {
  readonly playbookId: string;
  readonly files: readonly string[];
  constructor(playbookId: string, files: readonly string[], options?: ErrorOptions) {
    super(
      'DuplicatePlaybookError',
      'duplicate-playbook',
      `two playbooks have the id ${playbookId}: ${files.join(' and ')}; change the name or the version of one`,
      options,
    );
    this.playbookId = playbookId;
    this.files = files;
  }
}

/** A folder given to look for playbooks in does not exist or cannot be read. */
export class PlaybookDirectoryError extends BelayError {
  readonly directory: string;
  constructor(directory: string, detail: string, options?: ErrorOptions) {
    super(
      'PlaybookDirectoryError',
      'playbook-directory',
      `playbooks folder ${directory}: ${detail}`,
      options,
    );
    this.directory = directory;
  }
}

/** The engine was run from its sources without playbooks: they come from the bundle or from `loadPlaybooks`. */
export class UnbundledPlaybooksError extends BelayError {
  constructor(options?: ErrorOptions) {
    super(
      'UnbundledPlaybooksError',
      'unbundled-playbooks',
      'no playbooks: this code runs unbundled; bundle it with lambdas/bundling.ts (which generates the registry) or pass the playbooks from loadPlaybooks()',
      options,
    );
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

/**
 * A step asked a person to act in the live browser (`ctx.takeover`): the job waits for them with
 * the session's live view, and the step runs again from its precondition once they are done.
 */
export class TakeoverRequestedError extends BelayError {
  readonly step: string;
  readonly request: string;
  constructor(step: string, request: string, options?: ErrorOptions) {
    super(
      'TakeoverRequestedError',
      'takeover-requested',
      `${step} asks a person to act in the browser: ${request}`,
      options,
    );
    this.step = step;
    this.request = request;
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
