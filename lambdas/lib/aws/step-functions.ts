import { traced } from '../observability/tracing.ts';
import { clientConfigFromEnv } from './endpoint.ts';
import { SFNClient } from './sdk/client-sfn.ts';

/** A Step Functions client; `SFN_ENDPOINT` points it at the local Step Functions runner. */
export function sfnClientFromEnv(env: NodeJS.ProcessEnv = process.env): SFNClient {
  return traced(new SFNClient(clientConfigFromEnv('SFN_ENDPOINT', env)));
}
