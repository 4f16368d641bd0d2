/**
 * The demos' HTTP client for the API: JSON in and out with the demo tenant's key, the status
 * handed back (not thrown) so that a demo can report what the API answered.
 */

export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

/** Calls the API at `baseUrl` as the holder of `apiKey`; each call gives up after 30 s. */
export function apiClient(baseUrl: string, apiKey: string): ApiCall {
  return async (method, path, body) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
}
