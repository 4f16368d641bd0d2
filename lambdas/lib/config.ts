import { BelayError } from './errors.ts';

/**
 * Environment configuration, read and checked once at cold start. A missing or malformed
 * variable throws with its name, so a misconfigured function fails loudly on its first call.
 */

export class ConfigError extends BelayError {
  readonly variable: string;
  constructor(variable: string, message: string, options?: ErrorOptions) {
    super('ConfigError', 'misconfigured', `${variable}: ${message}`, options);
    this.variable = variable;
  }
}

/** A required string variable. */
export function getStringFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new ConfigError(name, 'is required and not set');
  return value;
}

/** An optional string variable. */
export function getOptionalStringFromEnv(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** An integer variable with a default and bounds. */
export function getIntFromEnv(
  name: string,
  fallback: number,
  bounds: { min?: number; max?: number } = {},
  env: NodeJS.ProcessEnv = process.env,
): number {
  const raw = getOptionalStringFromEnv(name, env);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new ConfigError(name, `must be an integer, got ${JSON.stringify(raw)}`);
  if (bounds.min !== undefined && value < bounds.min) throw new ConfigError(name, `must be >= ${bounds.min}`);
  if (bounds.max !== undefined && value > bounds.max) throw new ConfigError(name, `must be <= ${bounds.max}`);
  return value;
}

/** A JSON variable, parsed and checked by `parse` (e.g. a zod schema's `parse`). */
export function getJsonFromEnv<T>(
  name: string,
  parse: (value: unknown) => T,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const raw = getStringFromEnv(name, env);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (cause) {
    throw new ConfigError(name, 'is not valid JSON', { cause });
  }
  try {
    return parse(value);
  } catch (cause) {
    throw new ConfigError(name, `is not valid: ${(cause as Error).message}`, { cause });
  }
}
