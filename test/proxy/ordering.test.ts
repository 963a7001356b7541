// Ordering under concurrency: many connections whose commands share upstream batches each get their
// own replies, in their own order, and every increment counts exactly once; a client that does not
// read its replies holds up nobody else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommands } from '../../src/resp/request-writer.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { RawClient, startStack, startTestProxy, type Stack } from '../helpers/stack.js';
import { deferred, until } from '../helpers/wait.js';
import { startFaultServer, type FaultServer } from './faults-server.js';

let stack: Stack;
let port: number;

beforeAll(async () => {
  // The slow-reader test below leaves ~128 MB of replies unread on purpose: normal clients have no
  // output-buffer limit, as in Redis (docs/security.md).
  stack = await startStack();
  port = stack.proxy.port;
});

afterAll(async () => {
  await stack?.stop();
});

const text = (r: Buffer) => r.toString('latin1');
const int = (r: Buffer): number => {
  const s = text(r);
  if (!/^:-?\d+\r\n$/.test(s)) throw new Error(`not an integer reply: ${JSON.stringify(s)}`);
  return Number(s.slice(1, -2));
};
const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;

async function connectMany(n: number): Promise<RawClient[]> {
  const out: RawClient[] = [];
  // In groups, so the accept queue is not flooded on a busy machine.
  for (let i = 0; i < n; i += 50) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => RawClient.connect(port)))));
  }
  return out;
}

describe('200 concurrent connections', () => {
  it('each sees its own replies in order, and the totals are exact', async () => {
    const CONNECTIONS = 200;
    const PIPELINES = 5;
    const ROUNDS = 10; // per pipeline
    const clients = await connectMany(CONNECTIONS);
    try {
      const setup = await clients[0].call(['DEL', 'ord:shared']);
      expect(text(setup[0])).toMatch(/^:\d\r\n$/);

      const sharedSeen: number[] = [];
      const run = async (c: RawClient, id: number) => {
        const own = `ord:own:${id}`;
        const tag = `ord:tag:${id}`;
        await c.call(['DEL', own, tag]);
        let expectedOwn = 0;
        let lastShared = 0;
        for (let p = 0; p < PIPELINES; p++) {
          // Interleaved: own counter, shared counter, reads, a local command, a value naming the connection.
          const commands: string[][] = [];
          for (let r = 0; r < ROUNDS; r++) {
            commands.push(
              ['INCR', own],
              ['INCR', 'ord:shared'],
              ['GET', own],
              ['ECHO', `${id}:${p}:${r}`],
              ['SET', tag, `conn-${id}-${p}-${r}`],
              ['GET', tag],
              ['INCRBY', own, '2'],
              ['PING'],
            );
          }
          // Half the connections write their pipeline in two pieces, so pieces of different
          // connections interleave in the proxy's batches.
          const bytes = encodeCommands(commands);
          if (id % 2 === 0) {
            c.write(bytes);
          } else {
            const cut = Math.floor(bytes.length / 2) + (id % 7);
            c.write(bytes.subarray(0, cut));
            await new Promise((r) => setImmediate(r));
            c.write(bytes.subarray(cut));
          }
          const replies = await c.replies(commands.length, 60_000);
          for (let r = 0; r < ROUNDS; r++) {
            const [incr, shared, get, echo, set, getTag, incrby, ping] = replies.slice(r * 8, r * 8 + 8);
            expectedOwn += 1;
            expect(int(incr)).toBe(expectedOwn);
            const s = int(shared);
            expect(s).toBeGreaterThan(lastShared); // this connection's increments happen in its order
            lastShared = s;
            sharedSeen.push(s);
            expect(text(get)).toBe(bulk(String(expectedOwn)));
            expect(text(echo)).toBe(bulk(`${id}:${p}:${r}`));
            expect(text(set)).toBe('+OK\r\n');
            expect(text(getTag)).toBe(bulk(`conn-${id}-${p}-${r}`));
            expectedOwn += 2;
            expect(int(incrby)).toBe(expectedOwn);
            expect(text(ping)).toBe('+PONG\r\n');
          }
        }
        return expectedOwn;
      };
      const finals = await Promise.all(clients.map((c, i) => run(c, i)));

      const total = CONNECTIONS * PIPELINES * ROUNDS;
      // Every shared increment happened exactly once: the values seen are exactly 1..total.
      expect(sharedSeen.length).toBe(total);
      const sorted = [...sharedSeen].sort((a, b) => a - b);
      expect(sorted[0]).toBe(1);
      expect(sorted.at(-1)).toBe(total);
      expect(new Set(sorted).size).toBe(total);

      const check = await clients[0].call(['GET', 'ord:shared'], ...finals.map((_, i) => ['GET', `ord:own:${i}`]));
      expect(text(check[0])).toBe(bulk(String(total)));
      check.slice(1).forEach((r, i) => expect(text(r)).toBe(bulk(String(finals[i]))));
      expect(finals.every((f) => f === PIPELINES * ROUNDS * 3)).toBe(true);
    } finally {
      for (const c of clients) c.close();
    }
  });

  it('connections that close mid-pipeline do not disturb the others, and their sessions are released', async () => {
    // The earlier test's connections are closed: their sessions are gone first.
    await until(() => stack.proxy.connections() === 0, 'no session left from the earlier test');
    const open = 0;
    const clients = await connectMany(40);
    try {
      await clients[0].call(['DEL', 'ord:drop']);
      const survivors = clients.filter((_, i) => i % 2 === 0);
      const quitters = clients.filter((_, i) => i % 2 === 1);
      const commands = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? ['INCR', 'ord:drop'] : ['ECHO', String(i)]));
      const bytes = encodeCommands(commands);
      for (const c of quitters) {
        c.write(bytes);
        c.close(); // gone before (most of) its replies exist
      }
      const results = await Promise.all(
        survivors.map(async (c) => {
          c.write(bytes);
          const replies = await c.replies(commands.length, 60_000);
          let last = 0;
          replies.forEach((r, i) => {
            if (i % 2 === 0) {
              const v = int(r);
              expect(v).toBeGreaterThan(last);
              last = v;
            } else {
              expect(text(r)).toBe(bulk(String(i)));
            }
          });
          return last;
        }),
      );
      expect(results.length).toBe(20);
      // The survivors' increments all happened (the quitters' commands may or may not have run).
      const [total] = await survivors[0].call(['GET', 'ord:drop']);
      expect(Number(text(total).split('\r\n')[1])).toBeGreaterThanOrEqual(20 * 100);
      // The quitters' sessions are released; the survivors' remain until they close.
      await until(() => stack.proxy.connections() === open + 20, 'the 20 quitters released');
      for (const c of survivors) c.close();
      await until(() => stack.proxy.connections() === open, 'every session released');
    } finally {
      for (const c of clients) c.close();
    }
  });
});

describe('a client that does not read its replies', () => {
  it('does not block the others, and later gets them all in order', async () => {
    const value = 'v'.repeat(64 * 1024);
    const setter = await RawClient.connect(port);
    await setter.call(['SET', 'ord:fat', value]);
    setter.close();

    // The slow client asks for ~128 MB of replies and does not read them.
    const slow = await RawClient.connect(port);
    slow.socket.pause();
    const SLOW_GETS = 2000;
    const slowCommands: string[][] = [];
    for (let i = 0; i < SLOW_GETS; i++) slowCommands.push(i % 100 === 99 ? ['INCR', 'ord:slow'] : ['GET', 'ord:fat']);
    const info = await RawClient.connect(port);
    const forwarded = async () => Number(/total_commands_processed:(\d+)/.exec((await info.call(['INFO', 'stats']))[0].toString())![1]);
    const base = await forwarded();
    slow.write(encodeCommands([['DEL', 'ord:slow'], ...slowCommands]));

    try {
      // Once the proxy has sent its commands upstream, 20 other clients do their work meanwhile.
      await until(async () => (await forwarded()) >= base + SLOW_GETS + 1, "the slow client's commands forwarded");
      const others = await connectMany(20);
      await Promise.all(
        others.map(async (c, i) => {
          for (let round = 0; round < 20; round++) {
            const [set, get] = await c.call(['SET', `ord:other:${i}`, String(round)], ['GET', `ord:other:${i}`]);
            expect(text(set)).toBe('+OK\r\n');
            expect(text(get)).toBe(bulk(String(round)));
          }
          c.close();
        }),
      );

      // Now the slow client reads: every reply is there, in order.
      slow.socket.resume();
      const first = await slow.replies(1, 30_000); // the DEL
      expect(text(first[0])).toMatch(/^:\d\r\n$/);
      const replies = await slow.replies(SLOW_GETS, 60_000);
      let incr = 0;
      replies.forEach((r, i) => {
        if (i % 100 === 99) expect(int(r)).toBe(++incr);
        else expect(r.length).toBe(value.length + 10); // $65536\r\n…\r\n
      });
    } finally {
      slow.close();
      info.close();
    }
  });

  it('a pipeline of 50 000 commands read late gets every reply, in order; others are served meanwhile', async () => {
    const N = 50_000;
    const c = await RawClient.connect(port);
    const other = await RawClient.connect(port);
    try {
      c.socket.pause();
      const commands: string[][] = [['DEL', 'ord:many']];
      for (let i = 0; i < N; i++) commands.push(i % 10 === 9 ? ['ECHO', String(i)] : ['INCR', 'ord:many']);
      c.write(encodeCommands(commands));
      // Others are served meanwhile.
      expect((await other.call(['PING']))[0].toString()).toBe('+PONG\r\n');
      c.socket.resume();
      const replies = await c.replies(commands.length, 60_000);
      let n = 0;
      replies.slice(1).forEach((r, i) => {
        if (i % 10 === 9) expect(text(r)).toBe(bulk(String(i)));
        else if (int(r) !== ++n) expect({ i, reply: text(r) }).toEqual({ i, reply: `:${n}\r\n` });
      });
      expect(text((await other.call(['GET', 'ord:many']))[0])).toBe(bulk(String(N - N / 10)));
    } finally {
      c.close();
      other.close();
    }
  }, 90_000);
});

describe('backpressure: the proxy stops reading a connection with too many unanswered commands', () => {
  let fault: FaultServer;
  let proxy: RunningProxy;
  const MAX_PENDING = 100;

  beforeAll(async () => {
    // The upstream answers when the test lets it (a gate in front of the real platform).
    fault = await startFaultServer(stack.platform.url);
    proxy = await startTestProxy({ url: fault.url, token: stack.platform.token }, { maxPendingReplies: MAX_PENDING, maxBatch: 1000 });
  });

  afterAll(async () => {
    await proxy?.stop();
    await fault?.stop();
  });

  /** Commands per upstream call the fault server saw, from request `from` on (bodies are JSON arrays of commands). */
  const callSizes = (from: number) => fault.seen.slice(from).map((r) => (JSON.parse(r.body.toString()) as unknown[]).length);

  it('while the upstream holds a call, it reads at most about maxPendingReplies commands; then it resumes and answers all in order', async () => {
    const c = await RawClient.connect(proxy.port);
    try {
      await c.call(['DEL', 'bp:n']);
      // The next call waits at the upstream until the gate opens.
      const gate = deferred();
      let held = false;
      fault.decide = () => {
        if (held) return { kind: 'forward' };
        held = true;
        return { kind: 'forward', after: gate.promise };
      };
      const from = fault.seen.length;
      // 3 000 commands of 10 KB: 30 MB, more than the kernel buffers between client and proxy hold.
      const N = 3000;
      const value = 'x'.repeat(10 * 1024);
      const commands: string[][] = [];
      for (let i = 0; i < N; i++) commands.push(i % 3 === 2 ? ['INCR', 'bp:n'] : ['SET', `bp:${i % 7}`, value]);
      const written = new Promise<void>((resolve) => c.socket.write(encodeCommands(commands), () => resolve()));
      await until(() => fault.seen.length > from, 'a call held at the upstream');
      // A proxy that kept reading would take all 30 MB while the call is held. No event says "the
      // proxy stopped reading", so give it a second to show it does not.
      const finishedWriting = await Promise.race([written.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]);
      expect(finishedWriting).toBe(false);
      gate.resolve();
      const replies = (await c.replies(N, 60_000)).map(text);
      let n = 0;
      replies.forEach((r, i) => expect(r).toBe(i % 3 === 2 ? `:${++n}\r\n` : '+OK\r\n'));
      // Read meanwhile, and sent as the next call: the unanswered commands the proxy allows (and
      // what one read brought in), never a full batch of 1000.
      const sizes = callSizes(from + 1);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_PENDING + 64);
      await written;
    } finally {
      c.close();
      fault.decide = () => ({ kind: 'forward' });
    }
  });
});
