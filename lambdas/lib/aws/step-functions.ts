import { SFNClient } from '@aws-sdk/client-sfn';
import { clientConfigFromEnv } from './endpoint.ts';

/** A Step Functions client; `SFN_ENDPOINT` points it at the local Step Functions runner. */
export function sfnClientFromEnv(env: NodeJS.ProcessEnv = process.env): SFNClient {
  return new SFNClient(clientConfigFromEnv('SFN_ENDPOINT', env));
}
