import { getOptionalStringFromEnv } from '../config.ts';

/** What an AWS client is built with when a variable points it at a local stand-in. */
export interface ClientConfig {
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/**
 * The configuration of an AWS client: in AWS, the defaults (the function's region and role);
 * locally, the stand-in's endpoint from `variable` (`DYNAMODB_ENDPOINT`, `SFN_ENDPOINT`) with
 * throwaway credentials.
 */
export function clientConfigFromEnv(variable: string, env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const endpoint = getOptionalStringFromEnv(variable, env);
  if (!endpoint) return {};
  return {
    endpoint,
    region: env.AWS_REGION ?? 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
}
