// CommandStats in process: calls, time and failures per command across interleaved runs of names (the
// counters of the last name are kept at hand), errors by prefix, and CONFIG RESETSTAT.
import { describe, expect, it } from 'vitest';
import { CommandStats } from '../../src/server/command-stats.js';

const OK = Buffer.from('+OK\r\n');
const lines = (stats: CommandStats) => Object.fromEntries(stats.commandLines());

describe('CommandStats', () => {
  it('counts runs of one command and interleaved commands alike', () => {
    const stats = new CommandStats();
    for (const name of ['get', 'get', 'set', 'get', 'set', 'set', 'incr']) stats.ran(name, 10, OK);
    stats.ran('get', 10, Buffer.from('-WRONGTYPE Operation against a key\r\n'));
    expect(lines(stats)).toEqual({
      cmdstat_get: 'calls=4,usec=40,usec_per_call=10.00,rejected_calls=0,failed_calls=1',
      cmdstat_set: 'calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
      cmdstat_incr: 'calls=1,usec=10,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
    });
    expect(stats.totalCalls).toBe(8);
    expect(Object.fromEntries(stats.errorLines())).toEqual({ errorstat_WRONGTYPE: 'count=1' });
  });

  it('counts a run of commands with one latency (ranMany) exactly as that many ran() calls', () => {
    const one = new CommandStats();
    const many = new CommandStats();
    const runs: Array<[string, number, number]> = [
      ['get', 12.4, 16],
      ['set', 0.3, 1],
      ['get', 1234.56, 7],
      ['incr', 0, 3],
      ['get', 12.6, 2],
    ];
    for (const [name, usec, count] of runs) {
      for (let i = 0; i < count; i++) one.ran(name, usec, OK);
      many.ranMany(name, usec, count);
    }
    expect(many.commandLines()).toEqual(one.commandLines());
    expect(many.latencyLines()).toEqual(one.latencyLines());
    expect(many.totalCalls).toBe(one.totalCalls);
    expect(many.totalErrorReplies).toBe(0);
  });

  it('starts from zero after CONFIG RESETSTAT, for the command counted last too', () => {
    const stats = new CommandStats();
    stats.ran('get', 5, OK);
    stats.ran('get', 5, OK);
    stats.reset();
    stats.ran('get', 7, OK);
    expect(lines(stats)).toEqual({ cmdstat_get: 'calls=1,usec=7,usec_per_call=7.00,rejected_calls=0,failed_calls=0' });
    expect(stats.totalCalls).toBe(1);
  });
});
