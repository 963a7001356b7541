// Large values through the proxy (issue 25): several clients writing and reading 1 MiB values at the
// same time, with small commands between them, get what redis-server gives them. Their large work
// travels in upstream calls of its own, side by side (batcher.ts), as raw path-form bodies
// (kv-client.ts) that the platform writes to its data store without copying them (encodePieces).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A 1 MiB value of client `c`, version `v`, with every byte value and CR LF pairs in it. */
function value(c: number, v: number): Buffer {
  const out = Buffer.alloc(1024 * 1024 + c);
  for (let i = 0; i < out.length; i++) out[i] = (i * (7 + 2 * c) + v) & 255;
  return out;
}

/** What client `c` runs: large writes and reads of its own keys, small commands between them. */
function script(c: number): Buffer[][] {
  const b = (...args: (string | Buffer)[]) => args.map((a) => (typeof a === 'string' ? Buffer.from(a) : a));
  const key = `big:${c}`;
  return [
    b('SET', key, value(c, 1)),
    b('INCR', `n:${c}`),
    b('GET', key),
    b('APPEND', key, value(c, 2)),
    b('STRLEN', key),
    b('SET', key, value(c, 3), 'GET'),
    b('GETRANGE', key, '1048570', '1048580'),
    b('INCR', `n:${c}`),
    b('GET', key),
    b('DEL', key),
  ];
}

describe('1 MiB values from several clients at once', () => {
  it('every client gets the same replies as from redis-server, byte for byte', async () => {
    const clients = 4;
    const run = async (port: number) => {
      const conns = await Promise.all(Array.from({ length: clients }, () => RawClient.connect(port)));
      try {
        // Each client pipelines its script, twice, all clients at once.
        return await Promise.all(conns.map(async (conn, c) => [...(await conn.call(...script(c))), ...(await conn.call(...script(c)))]));
      } finally {
        for (const conn of conns) conn.close();
      }
    };
    const viaProxy = await run(stack.proxy.port);
    const direct = await run(stack.oracle.endpoint.port);
    for (let c = 0; c < clients; c++) {
      expect(viaProxy[c].length).toBe(direct[c].length);
      viaProxy[c].forEach((reply, i) =>
        expect(reply.equals(direct[c][i]), `client ${c}, reply ${i}: ${reply.subarray(0, 40).toString('latin1')}`).toBe(true),
      );
    }
    expect(direct[0][2].length).toBeGreaterThan(1024 * 1024);
  });
});

describe('large replies written from the pieces they arrived in (resp/reply-pieces.ts)', () => {
  it('a RESP2 and a RESP3 client, reading the same large value, get what redis-server gives', async () => {
    const b = (...args: (string | Buffer)[]) => args.map((a) => (typeof a === 'string' ? Buffer.from(a) : a));
    const run = async (port: number) => {
      const [two, three] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
      try {
        await three.call(b('HELLO', '3')); // its reply names the server: not compared
        await two.call(b('SET', 'pieces:k', value(5, 5)));
        const read = [b('GET', 'pieces:k'), b('GETRANGE', 'pieces:k', '0', '-1'), b('GET', 'pieces:none'), b('GETDEL', 'pieces:k')];
        const threeReplies = await three.call(...read.slice(0, 3));
        return [...threeReplies, ...(await two.call(...read))];
      } finally {
        two.close();
        three.close();
      }
    };
    const viaProxy = await run(stack.proxy.port);
    const direct = await run(stack.oracle.endpoint.port);
    expect(viaProxy.length).toBe(direct.length);
    viaProxy.forEach((reply, i) => expect(reply.equals(direct[i]), `reply ${i}: ${reply.subarray(0, 40).toString('latin1')}`).toBe(true));
    expect(direct[0].length).toBeGreaterThan(1024 * 1024);
  });
});

describe('value buffers used again once answered (resp/large-buffers.ts)', () => {
  it('a value queued in MULTI, one refused with an error and those sent meanwhile all stay intact', async () => {
    const b = (...args: (string | Buffer)[]) => args.map((a) => (typeof a === 'string' ? Buffer.from(a) : a));
    const run = async (port: number) => {
      const [a, c] = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
      try {
        const out: Buffer[] = [];
        out.push(...(await a.call(b('MULTI'), b('SET', 'reuse:queued', value(1, 20)))));
        out.push(...(await c.call(b('SET', 'reuse:str', 'x'))));
        // Errors: the upstream answered without storing; their buffers are not handed back.
        out.push(...(await c.call(b('SET', 'reuse:e', value(2, 21), 'EX', 'abc'), b('LPUSH', 'reuse:str', value(2, 22)))));
        // Sequential and pipelined large SETs, each taking a buffer another one gave back.
        for (let v = 0; v < 6; v++) out.push(...(await c.call(b('SET', `reuse:${v % 3}`, value(3 + v, 30 + v)))));
        out.push(...(await c.call(...[0, 1, 2, 3].map((v) => b('SET', `reuse:p${v}`, value(v, 40 + v))))));
        out.push(...(await a.call(b('EXEC'))));
        const keys = ['queued', 'e', '0', '1', '2', 'p0', 'p1', 'p2', 'p3'];
        out.push(...(await c.call(...keys.map((k) => b('GET', `reuse:${k}`)))));
        return out;
      } finally {
        a.close();
        c.close();
      }
    };
    const viaProxy = await run(stack.proxy.port);
    const direct = await run(stack.oracle.endpoint.port);
    expect(viaProxy.length).toBe(direct.length);
    viaProxy.forEach((reply, i) => expect(reply.equals(direct[i]), `reply ${i}: ${reply.subarray(0, 40).toString('latin1')}`).toBe(true));
    expect(direct.at(-9)!.length).toBeGreaterThan(1024 * 1024); // the queued value, read back
  });
});

describe('a burst of large values from one pipelining client (issue 22)', () => {
  let short: Stack;
  beforeAll(async () => {
    // A short upstream deadline: the burst of 60 MiB of GET replies travels in one call.
    short = await startStack({ upstreamTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it('60 pipelined 1 MiB SETs, then 60 GETs, all succeed: the deadline grows with the bytes that arrive', async () => {
    const client = await RawClient.connect(short.proxy.port);
    try {
      const v = value(0, 9);
      const keys = Array.from({ length: 60 }, (_, i) => Buffer.from(`burst:${i}`));
      const sets = await client.call(...keys.map((k) => [Buffer.from('SET'), k, v]));
      expect(sets.map(String)).toEqual(Array(60).fill('+OK\r\n'));
      const gets = await client.call(...keys.map((k) => [Buffer.from('GET'), k]));
      const header = Buffer.from(`$${v.length}\r\n`);
      for (const reply of gets) {
        expect(reply.length, reply.subarray(0, 80).toString()).toBe(header.length + v.length + 2);
        expect(reply.subarray(header.length, header.length + v.length).equals(v)).toBe(true);
      }
    } finally {
      client.close();
    }
  });
});
