// client-output-buffer-limit's pure parts: Redis' syntax and errors, CONFIG GET's form, and the
// hard/soft decision (networking.c checkClientOutputBufferLimits).
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OUTPUT_BUFFER_LIMITS,
  defaultOutputBufferLimits,
  formatOutputBufferLimits,
  outputLimitReached,
  parseOutputBufferLimits,
} from '../../src/server/output-limits.js';

const WRONG_COUNT = { error: 'Wrong number of arguments in buffer limit configuration.' };
const BAD_CLASS = { error: 'Invalid client class specified in buffer limit configuration.' };
const BAD_VALUE = { error: 'Error in hard, soft or soft_seconds setting in buffer limit configuration.' };

describe('parseOutputBufferLimits', () => {
  const set = (text: string) => {
    const r = parseOutputBufferLimits(text, defaultOutputBufferLimits());
    return 'error' in r ? r : formatOutputBufferLimits(r.limits);
  };

  it("defaults to redis-server's: normal unlimited, replica 256mb/64mb/60, pubsub 32mb/8mb/60", () => {
    expect(formatOutputBufferLimits(defaultOutputBufferLimits())).toBe(DEFAULT_OUTPUT_BUFFER_LIMITS);
    expect(defaultOutputBufferLimits().normal).toEqual({ hard: 0n, soft: 0n, softSeconds: 0 });
  });

  it('changes the classes named only, with memtoull units (k = 1000, kb = 1024), case-insensitive', () => {
    expect(set('replica 1k 2K 3')).toBe('normal 0 0 0 slave 1000 2000 3 pubsub 33554432 8388608 60');
    expect(set('NORMAL 1gb 0 0 slave 5 5 5')).toBe('normal 1073741824 0 0 slave 5 5 5 pubsub 33554432 8388608 60');
    expect(set('normal 5B 0 +5 normal 7 0 0')).toBe('normal 7 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60');
    expect(set('pubsub 1m 1mb 0')).toBe('normal 0 0 0 slave 268435456 67108864 60 pubsub 1000000 1048576 0');
    expect(set('')).toBe(DEFAULT_OUTPUT_BUFFER_LIMITS);
  });

  it('saturates and wraps like strtoull times the unit', () => {
    expect(set('normal 18446744073709551616 0 0')).toMatch(/^normal 18446744073709551615 0 0 /);
    expect(set('normal 20000000000000000000kb 0 0')).toMatch(/^normal 18446744073709550592 0 0 /);
  });

  it("refuses bad input with Redis' errors", () => {
    expect(set('normal 0 0')).toEqual(WRONG_COUNT);
    expect(set('  normal   3 4 5  ')).toEqual(WRONG_COUNT);
    expect(set('foo 0 0 0')).toEqual(BAD_CLASS);
    expect(set('master 0 0 0')).toEqual(BAD_CLASS);
    for (const bad of ['normal x 0 0', 'normal 1 2 -3', 'normal -1 0 0', 'normal 1.5 0 0', 'normal 0 0 3mb', 'normal +5 0 0']) {
      expect(set(bad)).toEqual(BAD_VALUE);
    }
  });
});

describe('outputLimitReached', () => {
  const limit = { hard: 100n, soft: 50n, softSeconds: 2 };

  it('closes at the hard limit at once, never with 0 (no limit)', () => {
    expect(outputLimitReached(limit, 100, { softSince: 0 }, 1000)).toBe(true);
    expect(outputLimitReached(limit, 99, { softSince: 0 }, 1000)).toBe(false);
    expect(outputLimitReached({ hard: 0n, soft: 0n, softSeconds: 0 }, 2 ** 40, { softSince: 0 }, 1000)).toBe(false);
  });

  it('closes past the soft limit only once it has lasted longer than soft-seconds; a dip below starts over', () => {
    const state = { softSince: 0 };
    expect(outputLimitReached(limit, 60, state, 1000)).toBe(false);
    expect(outputLimitReached(limit, 60, state, 3000)).toBe(false); // 2 s: not more than 2
    expect(outputLimitReached(limit, 10, state, 3500)).toBe(false);
    expect(state.softSince).toBe(0);
    expect(outputLimitReached(limit, 60, state, 4000)).toBe(false);
    expect(outputLimitReached(limit, 60, state, 6001)).toBe(true);
  });
});
