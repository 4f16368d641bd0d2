/**
 * Target applications from configuration: `BELAY_APPLICATIONS` (the handlers), `npm start --
 * --applications` (the local stack, over the demo sites it starts) and `belay:applications`
 * (CDK, which checks the same shape with its own stricter rules: https only). A bad value is
 * refused with the field named.
 */
import { z } from 'zod';
import { ConfigError } from '../config.ts';
import type { ApplicationEndpoint } from './types.ts';

/** One application as configured: where it lives, and further hosts its pages may reach. */
export interface ApplicationConfig {
  baseUrl: string;
  allowedDomains?: string[];
}

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const DOMAIN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;

const ApplicationSchema = z
  .object({
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
      .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), 'must not carry credentials'),
    allowedDomains: z.array(z.string().regex(DOMAIN, 'a hostname, *.domain or host:port')).max(50).optional(),
  })
  .strict();

const ApplicationsSchema = z.record(
  z
    .string()
    .regex(NAME, 'application names are lower-case letters, digits and dashes, starting with a letter'),
  ApplicationSchema,
);

/**
 * Parses an applications value (an object, or its JSON text), naming the field of the first
 * problem: `--applications: expenses.baseUrl: must be an http or https URL`.
 *
 * @param source what the value came from, for messages (`BELAY_APPLICATIONS`, `--applications`)
 * @throws ConfigError naming `source` and the field
 * @example
 * parseApplications('{"expenses":{"baseUrl":"http://127.0.0.1:9100"}}', '--applications');
 */
export function parseApplications(value: unknown, source: string): Record<string, ApplicationConfig> {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (cause) {
      throw new ConfigError(
        source,
        'is not valid JSON; expected {"<name>": {"baseUrl": "https://...", "allowedDomains"?: [...]}}',
        { cause },
      );
    }
  }
  const checked = ApplicationsSchema.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = issue?.path.join('.') || '(the value)';
    throw new ConfigError(
      source,
      `${field}: ${issue?.code === 'invalid_key' ? 'is not a valid application name' : issue?.message}`,
    );
  }
  return checked.data;
}

/** Endpoints the engine uses: the base URL's host is always allowed. */
export function endpointsOf(configs: Record<string, ApplicationConfig>): Record<string, ApplicationEndpoint> {
  const out: Record<string, ApplicationEndpoint> = {};
  for (const [name, app] of Object.entries(configs)) {
    out[name] = {
      baseUrl: app.baseUrl,
      allowedDomains: [new URL(app.baseUrl).hostname, ...(app.allowedDomains ?? [])],
    };
  }
  return out;
}

/**
 * The applications a local process is given: `BELAY_APPLICATIONS` from its environment, then the
 * `--applications` flag over it (the flag wins per application). `npm start`, `npm run playbook
 * -- test` and `npm run chaos` read them so.
 *
 * @throws ConfigError naming `BELAY_APPLICATIONS` or `--applications` and the field
 * @example
 * configuredApplications(process.env.BELAY_APPLICATIONS, opts.applications);
 */
export function configuredApplications(
  fromEnv: string | undefined,
  fromFlag: string | undefined,
): Record<string, ApplicationConfig> {
  return {
    ...(fromEnv ? parseApplications(fromEnv, 'BELAY_APPLICATIONS') : {}),
    ...(fromFlag ? parseApplications(fromFlag, '--applications') : {}),
  };
}
