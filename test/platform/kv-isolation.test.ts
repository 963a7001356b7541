// The platform's own bookkeeping never shows in the Area B keyspace and survives FLUSHALL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ dailyRequestLimit: 1_000_000 });
});
afterAll(async () => {
  await p?.stop();
});

describe('keyspace isolation', () => {
  it('shows only user keys in KEYS, SCAN, DBSIZE, RANDOMKEY and INFO keyspace', async () => {
    await command(p, ['FLUSHALL']);
    await command(p, ['ACL', 'SETUSER', 'iso', 'on', '>pw', '~*', '+@all']);
    await command(p, ['ACL', 'RESTTOKEN', 'iso', 'pw']); // stores a token in the platform's store
    expect((await command(p, ['KEYS', '*'])).json).toEqual({ result: [] });
    expect((await command(p, ['DBSIZE'])).json).toEqual({ result: 0 });
    expect((await command(p, ['RANDOMKEY'])).json).toEqual({ result: null });
    expect((await command(p, ['SCAN', '0'])).json).toEqual({ result: ['0', []] });
    await command(p, ['SET', 'only-user-key', '1']);
    expect((await command(p, ['KEYS', '*'])).json).toEqual({ result: ['only-user-key'] });
    const info = (await command(p, ['INFO', 'keyspace'])).json.result as string;
    expect(info.trim().split('\r\n')).toEqual(['# Keyspace', 'db0:keys=1,expires=0,avg_ttl=0']);
  });

  it('keeps REST tokens working after FLUSHALL and FUNCTION FLUSH', async () => {
    await command(p, ['ACL', 'SETUSER', 'keeper', 'on', '>pw', '~*', '+@all']);
    const token = (await command(p, ['ACL', 'RESTTOKEN', 'keeper', 'pw'])).json.result;
    expect((await command(p, ['FLUSHALL'])).json).toEqual({ result: 'OK' });
    expect((await command(p, ['FUNCTION', 'FLUSH'])).json).toEqual({ result: 'OK' });
    expect((await kv(p, '/ping', { token })).json).toEqual({ result: 'PONG' });
  });

  it('offers exactly one database, as the real service does', async () => {
    for (const cmd of [
      ['COPY', 'a', 'b', 'DB', '1'],
      ['MOVE', 'a', '1'],
      ['SWAPDB', '0', '1'],
      ['SELECT', '1'],
    ]) {
      const r = await command(p, cmd);
      expect(r.status, cmd.join(' ')).toBe(400);
      expect(r.json.error, cmd.join(' ')).toMatch(new RegExp(`^ERR .*'${cmd[0].toLowerCase()}'`));
    }
    // Lua scripts cannot reach another database either: the data store has only one.
    const lua = await command(p, ['EVAL', "redis.call('SELECT', 1) return 1", '0']);
    expect(lua.json.error).toMatch(/DB index is out of range/);
  });
});

describe('secrets of the data store', () => {
  it('CONFIG GET reveals no password', async () => {
    // Only notify-keyspace-events is shown, as on the real service (kv-keyspace-events.test.ts).
    const r = await command(p, ['CONFIG', 'GET', 'requirepass']);
    expect(r.json).toEqual({ result: [] });
    const all = (await command(p, ['CONFIG', 'GET', '*'])).json.result as string[];
    expect(all.join('\n')).not.toContain(p.token);
  });
});
