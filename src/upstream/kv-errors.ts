// Texts of the errors the Area B client makes itself (the upstream's own errors pass through).
// Every text says whether the command ran: "was not executed" only when the request was refused
// before the upstream could act on it, "outcome … is unknown" whenever it may have run.
import type { Exchange } from './http-exchange.js';

export type Subject = 'command' | 'transaction';

const UNKNOWN: Record<Subject, string> = {
  command: 'the outcome of this command is unknown',
  transaction: 'the outcome of the transaction is unknown',
};
const NOT_EXECUTED: Record<Subject, string> = {
  command: 'the command was not executed',
  transaction: 'the transaction was not executed',
};

/** A failed exchange (network error or deadline). */
export function failureText(answer: Extract<Exchange, { ok: false }>, subject: Subject, timeoutMs: number): string {
  if (answer.timedOut) {
    return answer.notSent
      ? `ERR upstream timed out after ${timeoutMs} ms waiting for a connection; ${NOT_EXECUTED[subject]}`
      : `ERR upstream timed out after ${timeoutMs} ms; ${UNKNOWN[subject]}`;
  }
  return answer.notSent
    ? `ERR upstream unavailable: ${answer.problem}; ${NOT_EXECUTED[subject]}`
    : `ERR upstream connection failed: ${answer.problem}; ${UNKNOWN[subject]}`;
}

export const AUTH_FAILED = 'ERR upstream authentication failed (HTTP 401): check the upstream token (--upstream-token)';

/** A 401 to a connection's own token (pass-through, ACL users) that worked at AUTH: revoked or rotated since. */
export const CLIENT_TOKEN_REFUSED =
  'ERR upstream authentication failed (HTTP 401): the token this connection authenticated with is no longer accepted (revoked or rotated); AUTH again with a valid one';

/**
 * An HTTP status that is neither a success nor one the caller handles itself. `retryAfter`: the
 * answer's Retry-After header (429 rate limits, 503 overload), given to the client as is: the proxy
 * never sends a request again by itself, since a write may not be repeated.
 */
export function statusText(status: number, body: Buffer, subject: Subject, redact: (s: string) => string, retryAfter?: string): string {
  const detail = bodySnippet(body, redact);
  const what = detail ? `HTTP ${status}: ${detail}` : `HTTP ${status}`;
  const retry = retryAfterText(retryAfter);
  if (status === 429) return `ERR upstream rate limit reached (${what})${retry}; ${NOT_EXECUTED[subject]}`;
  if (status >= 500) return `ERR upstream failed (${what})${retry}; ${UNKNOWN[subject]}`;
  if (status === 401) return AUTH_FAILED;
  const hint = status === 404 || status === 405 || (status >= 300 && status < 400) ? ' (check the upstream URL, --upstream-url)' : '';
  return `ERR upstream refused the request (${what})${hint}; ${NOT_EXECUTED[subject]}`;
}

/**
 * `, retry after 3 s` for a Retry-After header in seconds; `, retry after 5 s (at Mon, 23 Nov 2026
 * 05:00:00 GMT)` for an HTTP date; empty when absent or not understood (RFC 9110, section 10.2.3).
 */
export function retryAfterText(value: string | undefined, now = Date.now()): string {
  const v = value?.trim();
  if (!v) return '';
  if (/^\d{1,10}$/.test(v)) return `, retry after ${Number(v)} s`;
  const at = /[a-z]/i.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(at)) return '';
  return `, retry after ${Math.max(0, Math.ceil((at - now) / 1000))} s (at ${new Date(at).toUTCString()})`;
}

/** A 2xx answer that cannot be read. */
export function malformedText(problem: string, subject: Subject): string {
  return `ERR upstream sent a malformed answer (${problem}); ${UNKNOWN[subject]}`;
}

/** A command of a batch not sent because an earlier request of the batch may still be running. */
export function skippedText(cause: string): string {
  return `ERR upstream not asked: an earlier request of the same batch failed (${cause}) and its outcome is unknown; the command was not executed`;
}

/** The `error` field of a JSON error object, or undefined. */
export function jsonErrorField(body: Buffer): string | undefined {
  if (body.length === 0 || body[0] !== 0x7b /* { */) return undefined;
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    if (value && typeof value === 'object' && typeof (value as { error?: unknown }).error === 'string') {
      return (value as { error: string }).error;
    }
  } catch {
    // not JSON
  }
  return undefined;
}

/** Short printable description of an answer body, for error texts. */
function bodySnippet(body: Buffer, redact: (s: string) => string): string {
  const error = jsonErrorField(body);
  const text = error ?? body.toString('utf8', 0, Math.min(body.length, 200));
  const clean = redact(text)
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x1f\x7f]+/g, ' ')
    .trim();
  return clean.length > 200 ? clean.slice(0, 200) + '…' : clean;
}
