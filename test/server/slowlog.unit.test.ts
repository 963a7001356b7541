// The proxy's SLOWLOG store: newest first, at most slowlog-max-len entries, trimmed as Redis trims
// (when an entry is added, not when the setting changes), and the same answers after thousands of
// entries as after a few (old entries are dropped in batches, not per record).
import { describe, expect, it } from 'vitest';
import { Slowlog } from '../../src/server/slowlog.js';

const conn = { address: '127.0.0.1:5000', name: 'c' };
const args = (n: number) => [Buffer.from('GET'), Buffer.from(`k${n}`)];
const keys = (log: Slowlog, count = -1) => log.get(count).map((e) => e.args[1].toString());

describe('Slowlog', () => {
  it('keeps the newest max-len entries, newest first, with ids in order', () => {
    const log = new Slowlog(0, 3);
    for (let i = 0; i < 5; i++) expect(log.record(10, args(i), conn)).toBe(true);
    expect(log.length).toBe(3);
    expect(keys(log)).toEqual(['k4', 'k3', 'k2']);
    expect(keys(log, 2)).toEqual(['k4', 'k3']);
    expect(keys(log, 10)).toEqual(['k4', 'k3', 'k2']);
    expect(log.get(-1).map((e) => e.id)).toEqual([4, 3, 2]);
  });

  it('answers the same after many thousands of entries', () => {
    const log = new Slowlog(0, 128);
    for (let i = 0; i < 10_000; i++) log.record(10, args(i), conn);
    expect(log.length).toBe(128);
    expect(keys(log, 3)).toEqual(['k9999', 'k9998', 'k9997']);
    expect(keys(log).at(-1)).toBe('k9872');
    expect(log.get(1)[0].id).toBe(9999);
  });

  it('trims to a lowered max-len at the next entry, and a raised one does not bring back dropped entries', () => {
    const log = new Slowlog(0, 4);
    for (let i = 0; i < 4; i++) log.record(10, args(i), conn);
    log.maxLen = 2;
    expect(log.length).toBe(4); // Redis: CONFIG SET slowlog-max-len does not trim by itself
    log.record(10, args(4), conn);
    expect(keys(log)).toEqual(['k4', 'k3']);
    log.maxLen = 10;
    log.record(10, args(5), conn);
    expect(keys(log)).toEqual(['k5', 'k4', 'k3']);
  });

  it('logs nothing below the threshold, when disabled or with max-len 0; RESET empties it', () => {
    const log = new Slowlog(100, 5);
    expect(log.record(99, args(0), conn)).toBe(false);
    expect(log.record(100, args(1), conn)).toBe(true);
    log.slowerThanUs = -1;
    expect(log.record(1e9, args(2), conn)).toBe(false);
    log.slowerThanUs = 0;
    log.maxLen = 0;
    expect(log.record(1, args(3), conn)).toBe(false);
    expect(keys(log)).toEqual(['k1']);
    log.maxLen = 5;
    log.reset();
    expect(log.length).toBe(0);
    expect(log.get(-1)).toEqual([]);
    log.record(1, args(4), conn);
    expect(keys(log)).toEqual(['k4']);
  });

  it("keeps the arguments as Redis trims them (32, each at most 128 bytes), copied: later changes to the client's bytes do not show", () => {
    const log = new Slowlog(0, 10);
    const many = Array.from({ length: 40 }, (_, i) => Buffer.from(i === 1 ? 'y'.repeat(300) : `a${i}`));
    log.record(5, many, conn);
    const short = [Buffer.from('GET'), Buffer.from('key')];
    log.record(6, short, conn);
    short[1].write('KEY');
    many[2].write('b');
    const [newest, older] = log.get(-1);
    expect(newest.args.map(String)).toEqual(['GET', 'key']);
    expect(older.args).toHaveLength(32);
    expect(older.args.map(String)).toEqual([
      'a0',
      'y'.repeat(128) + '... (172 more bytes)',
      ...Array.from({ length: 29 }, (_, i) => `a${i + 2}`),
      '... (9 more arguments)',
    ]);
    expect(older).toMatchObject({ id: 0, durationUs: 5, client: conn.address, clientName: conn.name });
    // Every read gives the same arguments.
    expect(older.args.map(String)).toEqual(log.get(-1)[1].args.map(String));
  });
});
