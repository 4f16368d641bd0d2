/**
 * What a real application's logs say about the requests it answered. Two logs, read apart:
 *
 * - PHP's built-in server logs one line per request: its status, method and path with the query
 *   (`[200]: POST /wp-admin/post.php`), never the body. A form's action travels in the body, so
 *   the line of a WordPress Quick Draft save (`action=post-quickdraft-save`) looks like any other
 *   POST to `post.php`, and every background POST of the dashboard is a POST to `admin-ajax.php`.
 * - The test site's must-use plugin (`wordpress/mu-plugins/belay-test-site.php`) appends one JSON
 *   line per unsafe request WordPress handled, with the request's `action` field and the status
 *   it answered: enough to tell a Quick Draft save from a Heartbeat. It never logs other fields.
 *
 * Neither says what the database holds (a request may fail after its insert, a save may update
 * an auto-draft): the tests count the posts in MariaDB, and use these to count requests.
 */

/** One request line of PHP's built-in server. */
export interface ServerLogLine {
  status: number;
  method: string;
  /** Path and query as requested. */
  url: string;
}

const SERVER_LINE = / \[(\d{3})\]: ([A-Z]+) (\S+)\s*$/;

/**
 * The request lines of a PHP built-in server's log (its start-up and connection lines are left out).
 * @example
 * parseServerLog('[7] [Sat Dec  5 10:30:20 2026] 127.0.0.1:40226 [302]: GET /wp-admin/');
 * // [{ status: 302, method: 'GET', url: '/wp-admin/' }]
 */
export function parseServerLog(text: string): ServerLogLine[] {
  const out: ServerLogLine[] = [];
  for (const line of text.split('\n')) {
    const m = SERVER_LINE.exec(line);
    if (m) out.push({ status: Number(m[1]), method: m[2] as string, url: m[3] as string });
  }
  return out;
}

/** One unsafe request as WordPress handled it (a line of the must-use plugin's log). */
export interface HandledRequest {
  method: string;
  /** The path, without the query. */
  path: string;
  /** The request's `action` field (query or body), or null. */
  action: string | null;
  /** The status WordPress answered with. */
  status: number;
  /** When it finished (epoch milliseconds). */
  at: number;
}

function handled(value: unknown): HandledRequest | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const o = value as Record<string, unknown>;
  if (typeof o.method !== 'string' || typeof o.path !== 'string' || typeof o.status !== 'number')
    return undefined;
  return {
    method: o.method,
    path: o.path,
    action: typeof o.action === 'string' ? o.action : null,
    status: o.status,
    at: typeof o.at === 'number' ? o.at : 0,
  };
}

/**
 * The lines of the must-use plugin's request log; a line that is not one (cut short by a worker
 * being stopped mid-write) is left out.
 */
export function parseHandledRequests(text: string): HandledRequest[] {
  const out: HandledRequest[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = handled(JSON.parse(line));
      if (r) out.push(r);
    } catch {
      // a partial line
    }
  }
  return out;
}
