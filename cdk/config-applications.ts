/**
 * The `belay:applications` context value: the target applications jobs may work in. It
 * becomes the handlers' `BELAY_APPLICATIONS` (read by `applicationsFromEnv` in
 * `lambdas/lib/engine/runtime.ts`), so it is checked here at synth with the same rules
 * and more: a deployed function that cannot parse it fails every job.
 */
import { ConfigError } from './errors.ts';

/** One target application. */
export interface ApplicationConfig {
  /** Where the application lives: an https URL without credentials. */
  readonly baseUrl: string;
  /**
   * Further hosts its pages may reach besides the base URL's (hostnames, `*.domain`
   * wildcards, either with `:port`); see `isAllowedUrl` in `lambdas/lib/browser/allowlist.ts`.
   * @default - only the base URL's host
   */
  readonly allowedDomains?: readonly string[];
}

/** Target applications by name (the names playbooks use, e.g. `shop`). */
export type ApplicationsConfig = Readonly<Record<string, ApplicationConfig>>;

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const DOMAIN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;
const EXPECTED =
  'an object of application name -> { "baseUrl": "https://...", "allowedDomains"?: ["host", "*.domain"] }';

/**
 * Parses `belay:applications` (an object, or its JSON text as `--context` passes it).
 *
 * @param key the context key, for messages
 * @throws ConfigError naming the key and the first problem found
 * @example
 * parseApplications('belay:applications', '{"shop":{"baseUrl":"https://shop.example.com"}}');
 */
export function parseApplications(key: string, value: unknown): ApplicationsConfig {
  if (value === undefined) return Object.freeze({});
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (cause) {
      throw new ConfigError(key, value, `${EXPECTED} (as JSON)`, { cause });
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(key, value, EXPECTED);
  }
  const out: Record<string, ApplicationConfig> = {};
  for (const [name, app] of Object.entries(parsed)) {
    const fail = (problem: string): never => {
      throw new ConfigError(key, value, `${EXPECTED}; application '${name}': ${problem}`);
    };
    if (!NAME.test(name)) fail('names are lower-case letters, digits and dashes, starting with a letter');
    if (app === null || typeof app !== 'object' || Array.isArray(app)) fail('must be an object');
    const { baseUrl, allowedDomains, ...rest } = app as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) fail(`unknown field(s) ${unknown.join(', ')}`);
    if (typeof baseUrl !== 'string' || !isHttpsUrl(baseUrl))
      fail('baseUrl must be an https URL without credentials');
    if (allowedDomains !== undefined) {
      if (!Array.isArray(allowedDomains)) fail('allowedDomains must be an array of hostnames');
      for (const domain of allowedDomains as unknown[]) {
        if (typeof domain !== 'string' || !DOMAIN.test(domain)) {
          fail(`allowedDomains entry ${JSON.stringify(domain)} is not a hostname, *.domain or host:port`);
        }
      }
    }
    out[name] = Object.freeze({
      baseUrl: baseUrl as string,
      ...(allowedDomains === undefined ? {} : { allowedDomains: [...(allowedDomains as string[])] }),
    });
  }
  return Object.freeze(out);
}

function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}
