// The small languages of publish headers: durations (Upstash-Delay, -Timeout) and the
// Upstash-Retry-Delay arithmetic over `retried`.
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/platform/queue/duration.js';
import { defaultBackoffMs, parseRetryDelay, retryDelayMs } from '../../src/platform/queue/retry-delay.js';

describe('durations', () => {
  it.each([
    ['10s', 10_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1d10h30m', 124_200_000],
    ['1h30m0.5s', 5_400_500],
    ['250ms', 250],
    ['30', 30_000],
    [' 7s ', 7000],
  ])('%s = %i ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', 's', '10', '-1s', '1w', '10 s', '1.5', 'abc', '1s2'].filter((t) => t !== '10'))('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('retry delay expressions', () => {
  it.each([
    ['1000', 0, 1000],
    ['1000 * (1 + retried)', 2, 3000],
    ['pow(2, retried) * 1000', 3, 8000],
    ['max(1000, pow(2, retried) * 100)', 1, 1000],
    ['min(5000, exp(retried) * 1000)', 1, 2718],
    ['sqrt(16) + abs(-4) + floor(1.7) + ceil(1.2) + round(2.5)', 0, 14],
    ['-retried + 10 % 4', 1, 1],
  ])('%s with retried=%i is %i ms', (expr, retried, ms) => expect(retryDelayMs(expr, retried)).toBe(ms));

  it('is bounded to 0 .. 1 day', () => {
    expect(retryDelayMs('-5000', 0)).toBe(0);
    expect(retryDelayMs('pow(10, 12)', 0)).toBe(86_400_000);
    expect(retryDelayMs('1 / 0', 0)).toBe(86_400_000);
  });

  it.each([
    ['', 'it is empty'],
    ['pow(2', "expected ')'"],
    ['tries * 2', "unknown name 'tries'"],
    ['pow(2)', 'pow takes 2 argument(s)'],
    ['1000 1000', "unexpected '1000'"],
    ['1000; drop', "unexpected ';'"],
  ])('%j is refused: %s', (expr, why) => {
    expect(() => parseRetryDelay(expr)).toThrow(why);
  });

  it("the default backoff is the service's e^(2.5 n) seconds, capped at a day", () => {
    expect([1, 2, 3, 4, 5].map((n) => Math.round(defaultBackoffMs(n, 1) / 1000))).toEqual([12, 148, 1808, 22026, 86400]);
    expect(defaultBackoffMs(1, 0.001)).toBe(12);
  });
});
