// In-process tests of the queue's pure pieces: the list filters (fields per endpoint, values,
// cursors, counts), Upstash-Redact-Fields, the five-field cron rule and Go's header name form.
import { describe, expect, it } from 'vitest';
import { canonicalHeader } from '../../src/platform/queue/delivery.js';
import { QueueError } from '../../src/platform/queue/errors.js';
import { parseListQuery, stateMatches } from '../../src/platform/queue/filters.js';
import { readRedaction, redactHeaders, redacted } from '../../src/platform/queue/redact.js';
import { checkCron } from '../../src/platform/queue/schedules.js';

const q = (s: string) => new URLSearchParams(s);
const refused = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof QueueError) return `${err.status} ${err.message}`;
    throw err;
  }
  return 'accepted';
};
const msg = { messageId: 'msg_1', url: 'https://a.example/p?x=1', labels: ['l1', 'l2'], callerIp: '10.0.0.1', createdAt: 1000 };

describe('parseListQuery', () => {
  it('refuses a field the endpoint does not take, accepts the token and the removed api filter', () => {
    expect(refused(() => parseListQuery('dlq', q('labeel=x')))).toMatch(/^400 unknown query parameter 'labeel'/);
    expect(refused(() => parseListQuery('dlq', q('host=a.example')))).toMatch(/^400 unknown query parameter 'host'/);
    expect(refused(() => parseListQuery('messages', q('cursor=1-1')))).toMatch(/^400 unknown query parameter 'cursor'/);
    expect(refused(() => parseListQuery('logs', q('responseStatus=500')))).toMatch(/^400 unknown/);
    expect(refused(() => parseListQuery('dlq', q('qstash_token=t&api=llm')))).toBe('accepted');
  });

  it('values repeat or are comma-separated (ORed); fields AND; callerIP is callerIp', () => {
    expect(parseListQuery('dlq', q('label=zz&label=l2')).keep(msg)).toBe(true);
    expect(parseListQuery('dlq', q('label=zz,l1')).keep(msg)).toBe(true);
    expect(parseListQuery('dlq', q('label=l1&url=https://other')).keep(msg)).toBe(false);
    expect(parseListQuery('dlq', q('callerIP=10.0.0.1')).keep(msg)).toBe(true);
    expect(parseListQuery('dlq', q('callerIP=10.0.0.2')).keep(msg)).toBe(false);
    expect(parseListQuery('dlq', q('messageId=msg_1')).keep(msg)).toBe(true);
    expect(parseListQuery('dlq', q('messageId=msg_2')).keep(msg)).toBe(false);
    expect(parseListQuery('logs', q('host=a.example&path=/p')).keep(msg)).toBe(true);
    expect(parseListQuery('logs', q('fromDate=1000&toDate=1000')).keep(msg)).toBe(true);
    expect(parseListQuery('logs', q('fromDate=1001')).keep(msg)).toBe(false);
    expect(parseListQuery('dlq', q('responseStatus=500,404&responseStatus=418')).responseStatus).toEqual([500, 404, 418]);
  });

  it('ids: dlqIds for the DLQ, messageIds for a cancel, messageId(s) for the logs', () => {
    expect(parseListQuery('dlq', q('dlqIds=1-1,2-2')).ids).toEqual(['1-1', '2-2']);
    expect(parseListQuery('messages', q('messageIds=a&messageIds=b')).ids).toEqual(['a', 'b']);
    expect(parseListQuery('logs', q('messageIds=a&messageId=b')).ids).toEqual(['a', 'b']);
  });

  it('checks numbers, states, orders and cursors; bounds count per endpoint', () => {
    for (const [endpoint, query] of [
      ['dlq', 'cursor=abc'],
      ['dlq', 'cursor=12.3'],
      ['logs', 'cursor=abc'],
      ['logs', 'state=done'],
      ['dlq', 'order=newest'],
      ['dlq', 'count=0'],
      ['messages', 'count=501'],
      ['logs', 'fromDate=today'],
    ] as const)
      expect(
        refused(() => parseListQuery(endpoint, q(query))),
        query,
      ).toMatch(/^400 invalid /);
    expect(parseListQuery('dlq', q('count=500')).count).toBe(100);
    expect(parseListQuery('messages', q('count=500')).count).toBe(500);
    expect(parseListQuery('messages', q('')).count).toBeUndefined();
    for (const cursor of ['1700000000000', '1700000000000-3', '1700000000000-3.7'])
      expect(parseListQuery('logs', q(`cursor=${cursor}`)).cursor).toBe(cursor);
    expect(parseListQuery('logs', q('state=in_progress')).states).toEqual(['IN_PROGRESS']);
    expect(parseListQuery('dlq', q('')).order).toBe('earliestFirst');
  });

  it('IN_PROGRESS selects ACTIVE, RETRY and ERROR', () => {
    expect(['ACTIVE', 'RETRY', 'ERROR', 'DELIVERED'].map((s) => stateMatches(['IN_PROGRESS'], s))).toEqual([true, true, true, false]);
    expect(stateMatches([], 'CREATED')).toBe(true);
  });
});

describe('Upstash-Redact-Fields', () => {
  it('reads the reference and SDK spellings; refuses anything else', () => {
    expect(readRedaction('body, headers[Authorization]')).toEqual({ body: true, allHeaders: false, headers: ['authorization'] });
    expect(readRedaction('header,header[X-A]')).toEqual({ body: false, allHeaders: true, headers: ['x-a'] });
    expect(readRedaction(undefined)).toBeUndefined();
    expect(refused(() => readRedaction('body,cookies'))).toMatch(/^400 invalid Upstash-Redact-Fields/);
  });

  it('redacts the named headers with their SHA-256', () => {
    const r = readRedaction('headers[authorization]');
    expect(redactHeaders(r, { Authorization: ['a'], Other: ['b'] })).toEqual({ Authorization: [redacted('a')], Other: ['b'] });
    expect(redacted('a')).toBe('REDACTED:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb');
  });
});

describe('cron and header names', () => {
  it('a cron has five fields (optionally after CRON_TZ=)', () => {
    expect(refused(() => checkCron('*/5 * * * *'))).toBe('accepted');
    expect(refused(() => checkCron('CRON_TZ=UTC 0 9 * * 1'))).toBe('accepted');
    expect(refused(() => checkCron('* * * * * *'))).toMatch(/^400 invalid cron expression/);
    expect(refused(() => checkCron('* * * *'))).toMatch(/^400 invalid cron expression/);
  });

  it("header names take Go's canonical form", () => {
    expect(['content-type', 'X-CUSTOM', 'bypass-tunnel-reminder', 'x_under'].map(canonicalHeader)).toEqual([
      'Content-Type',
      'X-Custom',
      'Bypass-Tunnel-Reminder',
      'X_under',
    ]);
  });
});
