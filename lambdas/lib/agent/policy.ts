import type { AgentAction } from './actions.ts';

/**
 * What chooses an agent step's next action, and answers an agent probe's question: a hosted
 * model (Bedrock, Anthropic, OpenAI through the AI SDK) or the local rule-based policy. It only
 * chooses; the step records the choice before anything is executed, so a policy never acts on
 * the page itself.
 */

/**
 * What a policy is shown for one decision. Everything in it has been through `forModel`
 * (`model-view.ts`): secrets and sensitive inputs as placeholders, then redacted.
 */
export interface Observation {
  /** The goal in words, templated (secret values appear only as `{{secret:name}}`). */
  goal: string;
  /** Fields the goal names (label -> value or placeholder): what the local policy matches to labels. */
  fields: Readonly<Record<string, string>>;
  /** The page's URL and accessibility snapshot, trimmed and redacted. Untrusted text. */
  url: string;
  snapshot: string;
  /** The step's actions so far (recorded, replayed or refused), oldest first, in words. */
  history: readonly string[];
  /** Answers people gave to the step's questions, oldest first. */
  answers: readonly string[];
  /** Set when a recorded action no longer resolves: the model chooses again for that action only. */
  healing?: string;
}

/** Who answered and what it cost: on every decision and probe answer, and in the ledger entry that records it. */
export interface ModelCall {
  /** The model spec that decided (`local`, `anthropic:claude-haiku-4-5`, ...). */
  model: string;
  /** The id the provider reported, when it differs from the spec's. */
  providerModelId?: string;
  tokens: { input: number; output: number };
  /** The local policy's latency, simulated (labelled as such in the ledger). */
  simulatedLatencyMs?: number;
}

export interface Decision extends ModelCall {
  action: AgentAction;
}

/** What a policy is shown to answer a probe: the question and the page, nothing to act on. Through `forModel`. */
export interface ProbeObservation {
  /** Templated; quoted values are what to look for (secrets appear only as `{{secret:name}}`). */
  question: string;
  url: string;
  snapshot: string;
}

/** The answer to a probe's question, from the page alone (checked against the page's data before it is used). */
export interface ProbeAnswer {
  /**
   * `done`: the page shows the write's effect; `absent`: it shows the effect is not there;
   * `duplicate`: it shows the effect more than once; `unknown`: it cannot tell.
   */
  status: 'done' | 'absent' | 'duplicate' | 'unknown';
  /** With `duplicate`: how many times the page shows it. */
  count?: number;
  /** The page's text the answer rests on, quoted (untrusted, bounded). */
  evidence?: string;
  /** One sentence for people: why. */
  reason?: string;
}

export interface ProbeDecision extends ModelCall {
  answer: ProbeAnswer;
}

export interface Policy {
  readonly spec: string;
  decide(observation: Observation): Promise<Decision>;
  /** Answers an agent probe's question from the page it observed; it has no action to take. */
  answerProbe(observation: ProbeObservation): Promise<ProbeDecision>;
}
