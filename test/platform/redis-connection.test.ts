// The platform's pipelined connection to redis-server (src/platform/redis/connection.ts): the
// commands of several callers in one event-loop turn go out in one write (issue 14), and every
// caller still gets its own replies, in order.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnection } from '../../src/platform/redis/connection.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';

let redis: EmbeddedRedis;

beforeAll(async () => {
  redis = await startEmbeddedRedis({ password: null, databases: 1 });
});

afterAll(async () => {
  await redis?.stop();
});

describe('RedisConnection', () => {
  it('callers of one turn share one write to redis-server and get their own replies in order', async () => {
    // A recording relay in front of the real redis-server: counts the writes that reach it.
    const chunks: Buffer[] = [];
    const relay = net.createServer((client) => {
      const upstream = net.connect(redis.endpoint.port, redis.endpoint.host);
      client.on('data', (d: Buffer) => {
        chunks.push(d);
        upstream.write(d);
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const conn = await RedisConnection.open({ host: '127.0.0.1', port: (relay.address() as net.AddressInfo).port });
    try {
      const a = conn.send([
        ['SET', 'rc:k', 'a'],
        ['GET', 'rc:k'],
      ]);
      const b = conn.send([['APPEND', 'rc:k', 'b']]);
      const c = conn.send([
        ['GET', 'rc:k'],
        ['DEL', 'rc:k'],
      ]);
      const [ra, rb, rc] = await Promise.all([a, b, c]);
      expect(ra.map(String)).toEqual(['+OK\r\n', '$1\r\na\r\n']);
      expect(rb.map(String)).toEqual([':2\r\n']);
      expect(rc.map(String)).toEqual(['$2\r\nab\r\n', ':1\r\n']);
      expect(chunks).toHaveLength(1);
      // A later turn is a later write; order across turns holds too.
      const d = await conn.send([['INCR', 'rc:n']]);
      expect(d.map(String)).toEqual([':1\r\n']);
      expect(chunks).toHaveLength(2);
    } finally {
      conn.close();
      await new Promise((r) => relay.close(r));
    }
  });

  it('a large value is written as it is (not copied into the request), beside small commands of the same turn', async () => {
    const conn = await RedisConnection.open(redis.endpoint);
    try {
      const value = Buffer.alloc(1024 * 1024 + 5);
      for (let i = 0; i < value.length; i++) value[i] = (i * 31) & 255;
      const before = conn.send([['SET', 'rc:small', 'x']]);
      const big = conn.send([
        ['SET', 'rc:big', value],
        ['STRLEN', 'rc:big'],
      ]);
      const after = conn.send([['GET', 'rc:small']]);
      expect((await before).map(String)).toEqual(['+OK\r\n']);
      expect((await big).map(String)).toEqual(['+OK\r\n', `:${value.length}\r\n`]);
      expect((await after).map(String)).toEqual(['$1\r\nx\r\n']);
      const [got] = await conn.send([['GET', 'rc:big']]);
      expect(got.subarray(got.indexOf('\r\n') + 2, got.length - 2).equals(value)).toBe(true);
    } finally {
      conn.close();
    }
  });
});
