/** Agent steps in tests: a policy that counts its decisions, and may script some of them. */
import { localProbeAnswer, nextLocalAction } from '../../lambdas/lib/agent/local-policy.ts';
import type {
  Decision,
  Observation,
  Policy,
  ProbeDecision,
  ProbeObservation,
} from '../../lambdas/lib/agent/policy.ts';

/**
 * The local policy's decisions, counted (a model call each); `before` may answer a call
 * instead (its number is 1-based), e.g. to have the model ask a person. Probe answers are the
 * local policy's too, counted apart (`probeCalls`), with what each was shown (`probeSeen`).
 */
export class CountingPolicy implements Policy {
  readonly spec = 'local';
  calls = 0;
  probeCalls = 0;
  readonly probeSeen: ProbeObservation[] = [];
  constructor(
    private readonly before: (o: Observation, call: number) => Decision | undefined = () => undefined,
  ) {}
  async decide(o: Observation): Promise<Decision> {
    this.calls++;
    const scripted = this.before(o, this.calls);
    return scripted ?? { action: nextLocalAction(o), model: 'local', tokens: { input: 0, output: 0 } };
  }
  async answerProbe(o: ProbeObservation): Promise<ProbeDecision> {
    this.probeCalls++;
    this.probeSeen.push(o);
    return { answer: localProbeAnswer(o), model: 'local', tokens: { input: 0, output: 0 } };
  }
}
