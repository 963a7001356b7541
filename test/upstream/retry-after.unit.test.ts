// Retry-After in the proxy's error texts (upstream/kv-errors.ts): seconds, HTTP dates (also past
// ones and the obsolete formats RFC 9110 still accepts), and values that are neither.
import { describe, expect, it } from 'vitest';
import { retryAfterText, statusText } from '../../src/upstream/kv-errors.js';

const now = Date.parse('2026-11-23T05:00:00Z');
const same = (s: string) => s;

describe('retryAfterText', () => {
  it('seconds', () => {
    expect(retryAfterText('3', now)).toBe(', retry after 3 s');
    expect(retryAfterText(' 120 ', now)).toBe(', retry after 120 s');
    expect(retryAfterText('0', now)).toBe(', retry after 0 s');
  });

  it('an HTTP date: the seconds left and the date, rounded up; a past date is 0 s', () => {
    expect(retryAfterText('Mon, 23 Nov 2026 05:00:30 GMT', now)).toBe(', retry after 30 s (at Mon, 23 Nov 2026 05:00:30 GMT)');
    expect(retryAfterText('Monday, 23-Nov-26 05:00:01 GMT', now)).toBe(', retry after 1 s (at Mon, 23 Nov 2026 05:00:01 GMT)');
    expect(retryAfterText('Mon, 23 Nov 2026 04:59:00 GMT', now)).toBe(', retry after 0 s (at Mon, 23 Nov 2026 04:59:00 GMT)');
  });

  it('absent, empty, negative, fractional or not a date: left out', () => {
    for (const v of [undefined, '', '  ', '-1', '1.5', 'soon', '12345678901', 'Mon']) expect(retryAfterText(v, now), String(v)).toBe('');
  });
});

describe('statusText with Retry-After', () => {
  it('429 names the rate limit; nothing ran', () => {
    expect(statusText(429, Buffer.from('{"error":"ERR max requests limit exceeded"}'), 'command', same, '3')).toBe(
      'ERR upstream rate limit reached (HTTP 429: ERR max requests limit exceeded), retry after 3 s; the command was not executed',
    );
    expect(statusText(429, Buffer.alloc(0), 'transaction', same)).toBe(
      'ERR upstream rate limit reached (HTTP 429); the transaction was not executed',
    );
  });

  it('503 keeps its unknown outcome and gains the wait', () => {
    expect(statusText(503, Buffer.from('overloaded'), 'command', same, '120')).toBe(
      'ERR upstream failed (HTTP 503: overloaded), retry after 120 s; the outcome of this command is unknown',
    );
  });
});
