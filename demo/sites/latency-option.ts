import { InvalidArgumentError } from 'commander';
import { type LatencyProfile, parseLatencyProfile } from './http/latency.ts';

/**
 * `--site-latency p50=300,p95=1200` as commander parses it, for every command that takes it
 * (`npm start`, `npm run local:sites`, `npm run bench`): a bad profile is a usage error naming
 * the option.
 */
export function siteLatencyArgument(value: string): LatencyProfile {
  try {
    return parseLatencyProfile(value, '--site-latency');
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}
