// JSON.* through the proxy: a RESP client (ioredis in RESP2, raw RESP3 after HELLO 3) in front of the
// real platform; the command table tells the proxy about JSON.* so it forwards them.
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';

let platform: RunningPlatform;
let proxy: RunningProxy;
let client: IORedis;
beforeAll(async () => {
  platform = await startTestPlatform();
  proxy = await startTestProxy(platform);
  client = new IORedis({ host: '127.0.0.1', port: proxy.port, lazyConnect: true, maxRetriesPerRequest: 0 });
  await client.connect();
});
afterAll(async () => {
  client?.disconnect();
  await proxy?.stop();
  await platform?.stop();
});

describe('JSON.* through the proxy', () => {
  it('RESP2: commands, replies and errors as RedisJSON sends them', async () => {
    expect(await client.call('JSON.SET', 'px', '$', '{"a":2,"b":[1,2],"n":{"a":true}}')).toBe('OK');
    expect(await client.call('JSON.GET', 'px', '$..a')).toBe('[true,2]');
    expect(await client.call('JSON.GET', 'px', '.b')).toBe('[1,2]');
    expect(await client.call('JSON.ARRAPPEND', 'px', '$.b', '3')).toEqual([3]);
    expect(await client.call('JSON.TYPE', 'px', '$..a')).toEqual(['boolean', 'integer']);
    expect(await client.call('JSON.RESP', 'px', '.n')).toEqual(['{', 'a', 'true']);
    expect(await client.call('JSON.MGET', 'px', 'nosuch', '.a')).toEqual(['2', null]);
    expect(await client.type('px')).toBe('ReJSON-RL');
    await expect(client.call('JSON.GET', 'px', '.zz')).rejects.toThrow('ERR Path does not exist');
    await expect(client.call('JSON.SET', 'px')).rejects.toThrow("ERR wrong number of arguments for 'json.set' command");
    await expect(client.call('JSON.ARRTRIM', 'px', '$.b', '1')).rejects.toThrow("ERR wrong number of arguments for 'json.arrtrim' command");
  });

  it('RESP2: MULTI/EXEC and pipelines', async () => {
    const res = await client
      .multi()
      .call('JSON.SET', 'pt', '$', '{"n":1}')
      .call('JSON.NUMINCRBY', 'pt', '$.n', '5')
      .call('JSON.GET', 'pt')
      .exec();
    expect(res).toEqual([
      [null, 'OK'],
      [null, '[6]'],
      [null, '{"n":6}'],
    ]);
    const pipe = await client.pipeline().call('JSON.STRLEN', 'pt', '$.n').call('JSON.OBJKEYS', 'pt').exec();
    expect(pipe).toEqual([
      [null, [null]],
      [null, ['n']],
    ]);
  });

  it('RESP3 after HELLO 3: nulls and arrays in RESP3 form', async () => {
    const raw = await RawClient.connect(proxy.port);
    try {
      const [hello] = await raw.call(['HELLO', '3']);
      expect(hello[0]).toBe(0x25); // a map
      const replies = await raw.call(
        ['JSON.SET', 'p3', '$', '{"a":[1],"s":"x"}'],
        ['JSON.GET', 'p3', '$.s'],
        ['JSON.ARRLEN', 'p3', '$..*'],
        ['JSON.GET', 'nosuch3'],
        ['JSON.DEL', 'p3', '$.a'],
      );
      expect(replies.map((r) => r.toString('latin1'))).toEqual(['+OK\r\n', '$5\r\n["x"]\r\n', '*3\r\n_\r\n:1\r\n_\r\n', '_\r\n', ':1\r\n']);
    } finally {
      raw.close();
    }
  });

  it('COMMAND INFO knows JSON.*', async () => {
    const info = (await client.call('COMMAND', 'INFO', 'json.set', 'json.mget')) as unknown[][];
    expect(info[0].slice(0, 6)).toEqual(['json.set', -4, ['write', 'denyoom', 'module'], 1, 1, 1]);
    expect(info[1].slice(0, 6)).toEqual(['json.mget', -3, ['readonly', 'module'], 1, -2, 1]);
  });
});

describe('commands newer than Redis 7.0.15 through the proxy', () => {
  it('are forwarded to the platform, which emulates them or says what they need', async () => {
    await client.hset('pn:h', { a: 'x', b: 'y' });
    expect(await client.call('HGETDEL', 'pn:h', 'FIELDS', '1', 'a')).toEqual(['x']);
    expect(await client.call('XDELEX', 'pn:none', 'IDS', '1', '1-1')).toEqual([-1]);
    // Hash-field expiration is emulated by the platform (Redis 7.4's replies through the proxy).
    expect(await client.call('HEXPIRE', 'pn:h', '10', 'FIELDS', '2', 'b', 'zz')).toEqual([1, -2]);
    expect(await client.call('HTTL', 'pn:h', 'FIELDS', '1', 'b')).toEqual([10]);
    expect(await client.call('HPERSIST', 'pn:h', 'FIELDS', '1', 'b')).toEqual([1]);
    await expect(client.call('HEXPIRE', 'pn:h', 'x', 'FIELDS', '1', 'b')).rejects.toThrow('ERR value is not an integer or out of range');
    await expect(client.call('HGETDEL', 'pn:h')).rejects.toThrow("ERR wrong number of arguments for 'hgetdel' command");
  });
});
