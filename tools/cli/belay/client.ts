import { ApiCallError, CliError, EXIT } from './errors.ts';

/** The HTTP API as `belay` calls it: JSON in and out, the bearer key, errors as `ApiCallError`. */
export interface BelayClient {
  readonly url: string;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T>;
}

export function createClient(url: string, key: string | undefined): BelayClient {
  return {
    url,
    async request(method, path, body, headers = {}) {
      let res: Response;
      try {
        res = await fetch(`${url}${path}`, {
          method,
          headers: {
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(60_000),
        });
      } catch (err) {
        throw new CliError(
          `cannot reach Belay at ${url} (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}): is it running (\`npm start\`) and is BELAY_URL right?`,
          EXIT.unavailable,
          { cause: err },
        );
      }
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : {};
      } catch {
        json = undefined;
      }
      if (!res.ok) {
        const error = (json as { error?: { code?: string; message?: string; details?: unknown } } | undefined)
          ?.error;
        throw new ApiCallError(
          res.status,
          error?.code ?? '',
          error?.message ?? (text.slice(0, 200) || res.statusText),
          error?.details,
        );
      }
      if (json === undefined)
        throw new CliError(`Belay answered ${path} with something that is not JSON`, EXIT.error);
      return json as never;
    },
  };
}
