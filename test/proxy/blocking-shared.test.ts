// Shared pollers of blocking commands (src/proxy/blocking-hub.ts): one poll for every client blocked
// on the same keys, first blocked first served, elements of clients that left given to the next one
// or put back, and the wake-up by writes forwarded through the same proxy. The hub alone is driven
// with a poll function answered by the test (fake clock); then the real proxy and platform.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { lookupCommand } from '../../src/commands/table.js';
import { BlockingHub } from '../../src/proxy/blocking-hub.js';
import { planBlocking, type BlockingPlan } from '../../src/proxy/blocking.js';
import { connectDataStore, RawClient, startStack, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';

const b = (s: string) => Buffer.from(s);
const text = (x: unknown) => (Buffer.isBuffer(x) ? x.toString('latin1') : x);
const NULL = b('*-1\r\n');
const bulk = (...items: string[]) => b(`*${items.length}\r\n` + items.map((i) => `$${i.length}\r\n${i}\r\n`).join(''));

function plan(...a: string[]): BlockingPlan {
  const p = planBlocking(lookupCommand(a[0])!, a.map(b));
  if (Buffer.isBuffer(p)) throw new Error(p.toString());
  return p;
}

describe('BlockingHub', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());
  const settle = () => vi.advanceTimersByTimeAsync(0);

  function scripted() {
    const calls: { commands: Buffer[][]; answer: (replies: Buffer[]) => void }[] = [];
    const hub = new BlockingHub((commands) => new Promise<Buffer[]>((answer) => calls.push({ commands, answer })));
    return { calls, hub };
  }

  it('clients blocked on the same keys share one poller; other key sets have their own', async () => {
    const { calls, hub } = scripted();
    for (let i = 0; i < 100; i++) hub.wait(plan('BRPOP', 'q1', 'q2', 'q3', '0'), 100, () => undefined);
    hub.wait(plan('BRPOP', 'other', '0'), 100, () => undefined);
    await settle();
    expect(calls).toHaveLength(2);
    expect(hub.pollers).toBe(2);
    expect(hub.blockedClients).toBe(101);
    // Idle: the interval doubles from 10 ms to the cap, for the group as a whole.
    calls[0].answer([NULL]);
    await settle();
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(3);
  });

  it('first blocked, first served: each element goes to exactly one client, in order', async () => {
    const { calls, hub } = scripted();
    const got: string[] = [];
    for (const name of ['A', 'B', 'C']) hub.wait(plan('BLPOP', 'q', '0'), 100, (r) => got.push(`${name}:${text(r)}`));
    await settle();
    calls[0].answer([bulk('q', '1')]);
    await settle(); // the next waiter's poll goes out at once
    calls[1].answer([bulk('q', '2')]);
    await settle();
    calls[2].answer([bulk('q', '3')]);
    await settle();
    expect(got).toEqual(['A:*2\r\n$1\r\nq\r\n$1\r\n1\r\n', 'B:*2\r\n$1\r\nq\r\n$1\r\n2\r\n', 'C:*2\r\n$1\r\nq\r\n$1\r\n3\r\n']);
    expect(hub.pollers).toBe(0);
  });

  it('an element popped for a client that left goes to the next client', async () => {
    const { calls, hub } = scripted();
    const a = vi.fn();
    const bDone = vi.fn();
    const runA = hub.wait(plan('BLPOP', 'q', '0'), 100, a);
    hub.wait(plan('BLPOP', 'q', '0'), 100, bDone);
    await settle();
    runA.cancel(); // A's connection closes while the poll is in flight
    calls[0].answer([bulk('q', 'x')]);
    await settle();
    expect(a).not.toHaveBeenCalled();
    expect(text(bDone.mock.calls[0][0])).toBe('*2\r\n$1\r\nq\r\n$1\r\nx\r\n');
  });

  it('an element popped when every client has left is put back where it was (each pop kind)', async () => {
    const cases: [string[], string, string[]][] = [
      [['BLPOP', 'q', '0'], '*2\r\n$1\r\nq\r\n$1\r\nx\r\n', ['LPUSH', 'q', 'x']],
      [['BRPOP', 'q', '0'], '*2\r\n$1\r\nq\r\n$1\r\nx\r\n', ['RPUSH', 'q', 'x']],
      [['BZPOPMIN', 'z', '0'], '*3\r\n$1\r\nz\r\n$1\r\nm\r\n$3\r\n1.5\r\n', ['ZADD', 'z', '1.5', 'm']],
      [['BLMOVE', 's', 'd', 'LEFT', 'RIGHT', '0'], '$1\r\nx\r\n', ['LMOVE', 'd', 's', 'RIGHT', 'LEFT']],
      [['BRPOPLPUSH', 's', 'd', '0'], '$1\r\nx\r\n', ['LMOVE', 'd', 's', 'LEFT', 'RIGHT']],
      [['BLMPOP', '0', '1', 'l', 'LEFT', 'COUNT', '2'], '*2\r\n$1\r\nl\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n', ['LPUSH', 'l', 'b', 'a']],
      [
        ['BZMPOP', '0', '1', 'z', 'MIN', 'COUNT', '2'],
        '*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n',
        ['ZADD', 'z', '1', 'a', '2', 'b'],
      ],
    ];
    for (const [command, popped, restore] of cases) {
      const { calls, hub } = scripted();
      const done = vi.fn();
      hub.wait(plan(...command), 100, done).cancel();
      // Cancelled before its first poll: nothing is polled at all.
      await settle();
      expect(calls).toHaveLength(0);
      const run = hub.wait(plan(...command), 100, done);
      await settle();
      run.cancel();
      calls[0].answer([b(popped)]);
      await settle();
      expect(done).not.toHaveBeenCalled();
      expect(
        calls[1].commands.map((c) => c.map(text)),
        command.join(' '),
      ).toEqual([restore]);
      expect(hub.stats.restored).toBe(1);
    }
  });

  it('a forwarded write naming a watched key polls at once, the backoff starting over', async () => {
    const { calls, hub } = scripted();
    const done = vi.fn();
    hub.wait(plan('BRPOP', 'q', '0'), 60_000, done);
    await settle();
    for (let i = 0; i < 12; i++) {
      calls.at(-1)!.answer([NULL]);
      await settle();
      await vi.advanceTimersToNextTimerAsync();
    }
    const polls = calls.length;
    calls.at(-1)!.answer([NULL]);
    await settle(); // now idle for about 40 s
    hub.written([b('SET'), b('unrelated'), b('v')]);
    await settle();
    expect(calls).toHaveLength(polls);
    hub.written([b('LPUSH'), b('q'), b('job')]);
    await settle();
    expect(calls).toHaveLength(polls + 1);
    // A write while a poll is in flight: one more poll right after it.
    hub.written([b('LPUSH'), b('q'), b('job')]);
    calls.at(-1)!.answer([NULL]);
    await settle();
    expect(calls).toHaveLength(polls + 2);
  });

  it('a timeout or CLIENT UNBLOCK of a client that is not first answers it now; the others keep waiting', async () => {
    const { calls, hub } = scripted();
    const a = vi.fn();
    const second = vi.fn();
    hub.wait(plan('BLPOP', 'q', '0'), 100, a);
    const runB = hub.wait(plan('BLPOP', 'q', '0.05'), 100, second);
    await settle();
    runB.unblock(b('-UNBLOCKED x\r\n'));
    expect(text(second.mock.calls[0][0])).toBe('-UNBLOCKED x\r\n');
    calls[0].answer([bulk('q', 'v')]);
    await settle();
    expect(text(a.mock.calls[0][0])).toBe('*2\r\n$1\r\nq\r\n$1\r\nv\r\n');
  });

  it('an error reply (WRONGTYPE) goes to every client of the group', async () => {
    const { calls, hub } = scripted();
    const done = vi.fn();
    hub.wait(plan('BLPOP', 'k', '0'), 100, done);
    hub.wait(plan('BLPOP', 'k', '0'), 100, done);
    await settle();
    calls[0].answer([b('-WRONGTYPE x\r\n')]);
    await settle();
    expect(done.mock.calls.map((c) => text(c[0]))).toEqual(['-WRONGTYPE x\r\n', '-WRONGTYPE x\r\n']);
    expect(hub.pollers).toBe(0);
  });
});

describe('BlockingHub and key types', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());
  const settle = () => vi.advanceTimersByTimeAsync(0);

  it('a key that later holds another type does not answer clients already blocked (Redis checks the type at the call)', async () => {
    const calls: { answer: (replies: Buffer[]) => void }[] = [];
    const hub = new BlockingHub(() => new Promise<Buffer[]>((answer) => calls.push({ answer })));
    const old = vi.fn();
    hub.wait(plan('BLPOP', 'k', '0'), 100, old);
    await settle();
    calls[0].answer([NULL]);
    await settle();
    hub.written([b('SET'), b('k'), b('v')]); // answered before the late client's command is read
    const late = vi.fn();
    hub.wait(plan('BLPOP', 'k', '0'), 100, late); // its first poll is the next one
    await settle();
    calls[1].answer([b('-WRONGTYPE Operation against a key holding the wrong kind of value\r\n')]);
    await settle();
    expect(old).not.toHaveBeenCalled();
    expect(text(late.mock.calls[0][0])).toMatch(/^-WRONGTYPE/);
    hub.written([b('LPUSH'), b('k'), b('x')]);
    await settle();
    calls[2].answer([bulk('k', 'x')]);
    await settle();
    expect(text(old.mock.calls[0][0])).toBe('*2\r\n$1\r\nk\r\n$1\r\nx\r\n');
  });
});

describe('shared pollers through the proxy', () => {
  let stack: Stack;
  const clients: RawClient[] = [];
  beforeAll(async () => {
    // A minute between idle polls: any quick pickup below comes from the wake-up.
    stack = await startStack({ blockPollIntervalMs: 60_000 });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await stack?.stop();
  });
  async function client(): Promise<RawClient> {
    const c = await RawClient.connect(stack.proxy.port);
    clients.push(c);
    return c;
  }
  async function untilBlocked(id: string, name = 'blpop'): Promise<void> {
    const c = await client();
    await until(async () => (await c.call(['CLIENT', 'LIST', 'ID', id]))[0].toString().includes(` cmd=${name} `), `client ${id} blocked`);
  }

  it('five clients blocked on one list are served in the order they blocked, each element once', async () => {
    const producer = await client();
    const waiting: Promise<string>[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await client();
      const id = (await c.call(['CLIENT', 'ID']))[0].toString().slice(1, -2);
      waiting.push(c.call(['BLPOP', 'fifo', '0']).then(([r]) => r.toString().split('\r\n')[4]));
      await untilBlocked(id);
    }
    // INFO's blocked_clients, as Redis (its suite waits on it before pushing).
    expect((await producer.call(['INFO', 'clients']))[0].toString()).toContain('blocked_clients:5\r\n');
    await producer.call(['RPUSH', 'fifo', 'e0', 'e1', 'e2', 'e3', 'e4']);
    expect(await Promise.all(waiting)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']);
    expect((await producer.call(['INFO', 'clients']))[0].toString()).toContain('blocked_clients:0\r\n');
  });

  it('workers that come and go while jobs flow: every job delivered exactly once or left in the list', async () => {
    const producer = await client();
    const jobs = 300;
    const received: string[] = [];
    let stop = false;
    // Short timeouts and closed connections make polls finish for clients that are gone.
    const worker = async () => {
      while (!stop) {
        const c = await RawClient.connect(stack.proxy.port);
        const got = c.call(['BRPOP', 'churn', '0.02']).then(
          ([r]) => {
            const parts = r.toString().split('\r\n');
            if (parts[0] === '*2') received.push(parts[4]);
          },
          () => undefined,
        );
        // Every other worker walks away while blocked: it half-closes (Redis then frees a blocked client)
        // but still reads, so a reply already on its way is counted. A client that vanished without
        // reading would lose that element with Redis too, which is not what this test is about.
        if (Math.random() < 0.5) c.socket.end();
        await got;
        c.close();
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    for (let i = 0; i < jobs; i += 10) await producer.call(['LPUSH', 'churn', ...Array.from({ length: 10 }, (_, k) => `j${i + k}`)]);
    const store = await connectDataStore(stack);
    await until(
      async () => received.length + (await store.llen('churn')) === jobs || received.length > jobs,
      'all jobs accounted for',
      20_000,
    );
    stop = true;
    await Promise.all(workers);
    await until(async () => stack.proxy.connections() <= 1 + clients.length, 'workers gone');
    const left = await store.lrange('churn', 0, -1);
    store.disconnect();
    const all = [...received, ...left].sort();
    expect(all).toEqual(Array.from({ length: jobs }, (_, i) => `j${i}`).sort());
  });

  it('a push through the same proxy wakes an idle client at once', async () => {
    const worker = await client();
    const id = (await worker.call(['CLIENT', 'ID']))[0].toString().slice(1, -2);
    const got = worker.call(['BRPOP', 'wake', '0']);
    await untilBlocked(id, 'brpop');
    // Let the backoff grow past a second (10, 20, … ms doubling): without the wake-up the next poll
    // would be seconds away.
    const info = await client();
    const calls = async () => Number(/total_upstream_calls:(\d+)/.exec((await info.call(['INFO', 'stats']))[0].toString())![1]);
    const base = await calls();
    await until(async () => (await calls()) >= base + 7, 'backoff grown', 10_000);
    const producer = await client();
    const t0 = Date.now();
    await producer.call(['LPUSH', 'wake', 'job']);
    const [reply] = await got;
    expect(reply.toString()).toBe('*2\r\n$4\r\nwake\r\n$3\r\njob\r\n');
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
