/**
 * Which requests commit a write. A page sends requests of its own while a step acts (a
 * heartbeat, autosave, a widget's refresh): the write is the unsafe request its action sends, or
 * the one its step names (`commits`). The write guard, the declarative `click: { wait: response }`
 * and the test tools' proxy all tell them apart with these rules.
 */

/** Methods that change something on the server: the requests the guard holds and counts. */
export const UNSAFE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The request that commits a write: its method (default any unsafe one) and a regular expression on its path. */
export interface CommitsSpec {
  method?: string | undefined;
  path: string;
  /** Sent more than once on purpose: no limit (see {@link commitLimit}). */
  repeats?: boolean | undefined;
}

/**
 * Whether a write step commits once, and which requests count: the write guard refuses the second
 * (`WriteGuardOptions.once`). An agent step commits once (a model must not talk itself into a
 * second submit): its `commits`, else any unsafe request. A scripted step only where it names its
 * committing request, so a script that posts twice on purpose (and says nothing) keeps working.
 * `repeats: true` lifts the limit.
 *
 * @example
 * commitLimit({ kind: 'write', agent: true }); // { commits: any POST, PUT, PATCH or DELETE }
 * commitLimit({ kind: 'write', commits: { path: '^/api/lines$', repeats: true } }); // undefined
 */
export function commitLimit(step: {
  kind: string;
  commits?: CommitsSpec | undefined;
  agent?: unknown;
}): { once: { commits(method: string, url: string): boolean } } | undefined {
  if (step.kind !== 'write' || step.commits?.repeats) return undefined;
  if (step.agent === undefined && step.commits === undefined) return undefined;
  return { once: { commits: committingRequest(step.commits) } };
}

/**
 * A test of (method, URL) for the committing request: the step's `commits` when it names one,
 * else any unsafe request.
 *
 * @example
 * const commits = committingRequest({ method: 'POST', path: '^/wp-admin/post\\.php$' });
 * commits('POST', 'http://127.0.0.1:8080/wp-admin/post.php'); // true
 * commits('POST', 'http://127.0.0.1:8080/wp-admin/admin-ajax.php'); // false
 */
export function committingRequest(spec?: CommitsSpec): (method: string, url: string) => boolean {
  const path = spec ? new RegExp(spec.path) : undefined;
  const method = spec?.method?.toUpperCase();
  return (m, url) => {
    const upper = m.toUpperCase();
    if (!UNSAFE_METHODS.has(upper) || (method !== undefined && upper !== method)) return false;
    if (!path) return true;
    try {
      return path.test(new URL(url).pathname);
    } catch {
      return false;
    }
  };
}

/** A request's origin and path (no query: it may carry secrets), as reports name it. */
export function originAndPath(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '<invalid url>';
  }
}

/** One unsafe request a page sent while a write step acted, and its answer (the write guard's record). */
export interface SentRequest {
  method: string;
  /** Origin and path (no query: it may carry secrets). */
  url: string;
  /** When the page sent it (ISO 8601). */
  at: string;
  /** A navigation (a form posted as a page load), not a request of the page's scripts. */
  navigation: boolean;
  /** The answer's HTTP status; absent when none came back before the step ended. */
  status?: number;
  /** No answer came: the connection failed (reset, dropped, refused). */
  failed?: true;
  /** What the answer said, for the write's receipt (the engine keeps a redacted excerpt of `body`). */
  response?: AnswerSeen;
}

/** What the write guard kept of an answer: its media type, where a redirect sent the page, the start of its body. */
export interface AnswerSeen {
  contentType?: string;
  /** A redirect's target, origin and path (no query). */
  location?: string;
  /** The body's first bytes (at most 64 KiB); none for a redirect or an empty answer. */
  body?: Buffer;
}

/** A step's unsafe requests told apart: those that committed its write, and the page's own. */
export interface ClassifiedRequests {
  commits: SentRequest[];
  background: SentRequest[];
}

const signature = (r: Pick<SentRequest, 'method' | 'url'>): string => `${r.method} ${r.url}`;

/**
 * Which of a write step's unsafe requests committed it. With `commits`, the requests it names.
 * Without, the page's own requests are told apart by time and kind: what the page sent before
 * the action that commits (`commitFrom`: the step's last action, or its start) is background,
 * and so is every later request to the same method and path (a heartbeat sends the same one
 * again and again); of the rest, a navigation (a posted form) commits, else the first request
 * and every one to its method and path.
 */
export function classifyRequests(
  requests: readonly SentRequest[],
  options: { commits?: CommitsSpec | undefined; commitFrom?: string | undefined } = {},
): ClassifiedRequests {
  if (options.commits) {
    const commits = committingRequest(options.commits);
    return {
      commits: requests.filter((r) => commits(r.method, r.url)),
      background: requests.filter((r) => !commits(r.method, r.url)),
    };
  }
  const from = options.commitFrom ?? '';
  const earlier = new Set(requests.filter((r) => r.at < from).map(signature));
  const candidates = requests.filter((r) => r.at >= from && !earlier.has(signature(r)));
  const navigations = candidates.filter((r) => r.navigation);
  const first = navigations[0] ?? candidates[0];
  const committing = first
    ? navigations.length > 0
      ? new Set(navigations.map(signature))
      : new Set([signature(first)])
    : new Set<string>();
  const isCommit = (r: SentRequest): boolean =>
    r.at >= from && !earlier.has(signature(r)) && committing.has(signature(r));
  return { commits: requests.filter(isCommit), background: requests.filter((r) => !isCommit(r)) };
}
