/**
 * `belay/sdk`: everything a playbook imports. A playbook folder anywhere on disk imports this
 * (and may import Belay's own `zod` and `playwright-core`) with nothing installed: the bundler
 * aliases it (`lambdas/bundling.ts`) and `npm start`, `npm run playbook` and `cdk synth`
 * resolve it for files outside the repository (`discovery/register.ts`).
 *
 * @example
 * import { definePlaybook, formSignIn, signInStep, startsAt, clickAndWait, tid } from 'belay/sdk';
 * import { z } from 'zod';
 */

// Agent probes: a write's probe answered by the step's model from the page, checked against the page's data.
export {
  type AgentProbe,
  type AgentProbeOptions,
  agentProbe,
  type ProbeFacts,
} from '../agent/agent-probe.ts';
// Agent steps: a model chooses each action, recorded in the ledger before it runs.
export { type AgentStep, type AgentStepOptions, agentStep } from '../agent/agent-step.ts';
export type { Evidence } from '../ledger/types.ts';
// The step contract.
export type {
  Application,
  CommittingRequest,
  Credentials,
  CredentialsProvider,
  Effect,
  EffectField,
  FaultPoint,
  Logger,
  Playbook,
  PreconditionResult,
  ProbeResult,
  ScreenshotPolicy,
  SignInResult,
  Step,
  StepContext,
  StepKind,
  WriteEffect,
} from './contract.ts';
// Checking and building playbooks.
export { defineApplication, definePlaybook, NAME_PATTERN } from './define.ts';
// Approval bound to the effect: what a form would submit.
export { formEffect } from './effect-capture.ts';
// The errors a playbook throws (or the engine recognises).
export {
  MfaRequiredError,
  MissingApplicationError,
  PlaybookDefinitionError,
  SignInFailedError,
  StepActionError,
} from './errors.ts';
export {
  type FormSignInApplication,
  type FormSignInConfig,
  formSignIn,
  type OneTimeCodePage,
} from './form-sign-in.ts';
// Page helpers and their timeouts.
export {
  appBase,
  appUrl,
  checkStart,
  clickAndWait,
  countedProbe,
  dataAttr,
  EVIDENCE_TIMEOUT_MS,
  goto,
  hasVisibleError,
  isAt,
  LOAD_TIMEOUT_MS,
  pageUrl,
  READY_TIMEOUT_MS,
  rowsWithKey,
  type StartSpec,
  sameText,
  tid,
  visibleErrorText,
  visibleWithin,
} from './page.ts';
export { type SignInApplication, signInStep } from './sign-in-step.ts';
export { type StartsAtSpec, startsAt } from './starts-at.ts';
export {
  type AttributeFilter,
  describeTarget,
  locate,
  locateAll,
  type Target,
  type TargetSpec,
  targetVisible,
  visibleTarget,
} from './target.ts';
