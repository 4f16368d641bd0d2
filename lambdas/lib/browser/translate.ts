/**
 * Translation of `anchorbrowser` SDK and CDP-connect failures into the browser layer's errors.
 */
// The SDK's error classes alone (a few ms to load); the client module pulls in a browser library.
import { APIError, NotFoundError } from 'anchorbrowser/core/error';
import { BrowserRequestError, SessionGoneError, SessionUnavailableError } from './errors.ts';

/** Session statuses after which a session never runs again. Anything else counts as alive. */
export const TERMINAL_SESSION_STATUSES: ReadonlySet<string> = new Set([
  'completed',
  'failed',
  'terminated',
  'ended',
  'stopped',
  'expired',
  'timeout',
  'timed_out',
  'closed',
  'crashed',
  'error',
]);

/** True when the reported status means the session is over. */
export function isTerminalStatus(status: string | undefined): boolean {
  return status !== undefined && TERMINAL_SESSION_STATUSES.has(status.toLowerCase());
}

/** HTTP statuses worth another try. */
function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408 || status === 409;
}

/**
 * Translate an SDK error. On calls about an existing session a 404 means the session is gone;
 * on `create` it means a referenced resource (a profile) does not exist.
 */
export function translateApiError(
  err: unknown,
  operation: 'create' | 'retrieve' | 'delete' | 'attach' | 'list' | 'volumes',
  sessionId?: string,
): Error {
  if (!(err instanceof APIError)) return err instanceof Error ? err : new Error(String(err));
  const message = `${operation}${sessionId ? ` ${sessionId}` : ''}: ${err.message}`;
  if (err instanceof NotFoundError && sessionId !== undefined && operation !== 'create') {
    return new SessionGoneError(message, { sessionId }, { cause: err });
  }
  const { status } = err;
  if (status === undefined || isTransientStatus(status)) {
    return new SessionUnavailableError(
      message,
      { operation, ...(sessionId ? { sessionId } : {}) },
      { cause: err },
    );
  }
  return new BrowserRequestError(message, { operation, status }, { cause: err });
}

/** HTTP status the CDP endpoint answered a refused WebSocket upgrade with, if the error says so. */
export function refusedUpgradeStatus(err: unknown): number | undefined {
  const text = err instanceof Error ? err.message : String(err);
  const match =
    /WebSocket error: \S+ (\d{3})\b/.exec(text) ?? /Unexpected server response: (\d{3})/.exec(text);
  return match?.[1] ? Number(match[1]) : undefined;
}

/**
 * Decide what a failed CDP connect means, given what the API says about the session
 * (`lookup` resolves to its status, or rejects with the SDK's error).
 */
export async function classifyConnectFailure(
  sessionId: string,
  err: unknown,
  lookup: () => Promise<string | undefined>,
): Promise<Error> {
  const refused = refusedUpgradeStatus(err);
  const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
  const gone = (status?: string): SessionGoneError =>
    new SessionGoneError(
      `session ${sessionId} is gone${status ? ` (${status})` : ''}: ${detail}`,
      { sessionId, ...(status ? { status } : {}) },
      { cause: err },
    );
  let status: string | undefined;
  try {
    status = await lookup();
  } catch (lookupErr) {
    const translated = translateApiError(lookupErr, 'attach', sessionId);
    if (translated instanceof SessionGoneError) return gone('not found');
    if (refused === 404 || refused === 410) return gone();
    if (translated instanceof BrowserRequestError) return translated;
    return new SessionUnavailableError(
      `attach ${sessionId}: ${detail}`,
      { sessionId, operation: 'attach' },
      { cause: err },
    );
  }
  if (isTerminalStatus(status)) return gone(status);
  if (refused === 404 || refused === 410) return gone();
  if (refused === 401 || refused === 403) {
    return new BrowserRequestError(
      `attach ${sessionId}: ${detail}`,
      { operation: 'attach', status: refused },
      { cause: err },
    );
  }
  return new SessionUnavailableError(
    `attach ${sessionId}: ${detail}`,
    { sessionId, operation: 'attach' },
    { cause: err },
  );
}
