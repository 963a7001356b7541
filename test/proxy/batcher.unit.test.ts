// The batcher (src/proxy/batcher.ts) in-process, in front of a fake upstream that records every call
// and answers when the test says: which commands share a call, the per-connection barrier, the batch
// and in-flight limits, holding small work while a call is in flight, tokens that never share a call,
// transactions alone, blocking commands, waking blocked clients, and an upstream that breaks its
// promise. test/proxy/batcher.test.ts drives the same batcher through the real client and platform.
import { describe, expect, it } from 'vitest';
import { Batcher, LARGE_WORK_BYTES, type BatchSource, type PipelineUpstream } from '../../src/proxy/batcher.js';
import { ClientCost, requestBytes, UNNAMED } from '../../src/proxy/client-cost.js';
import type { BlockingItem, CommandItem, ForwardItem, TransactionItem } from '../../src/proxy/forward-item.js';
import type { Credential, TransactionOutcome } from '../../src/upstream/kv-client.js';
import type { WatchedKeys } from '../../src/upstream/script-transaction.js';
import { until } from '../helpers/wait.js';

interface UpstreamCall {
  kind: 'pipeline' | 'transaction';
  commands: string[][];
  token: string | undefined;
  watch: WatchedKeys | undefined;
  /** Sends the answer (each command's reply is `+` and its words). */
  answer(): void;
}

/**
 * The reply the fake gives a command: its words as a simple string, so a test sees whose reply it is;
 * `BIGGET k` gets a bulk of LARGE_WORK_BYTES (a large value read).
 */
const replyOf = (command: Buffer[]): Buffer =>
  String(command[0]) === 'BIGGET'
    ? Buffer.concat([Buffer.from(`$${LARGE_WORK_BYTES}\r\n`), Buffer.alloc(LARGE_WORK_BYTES, 'v'), Buffer.from('\r\n')])
    : Buffer.from(`+${command.map(String).join(' ')}\r\n`);

/** An upstream that records each call and answers at once, or, with `hold`, when the test calls answer(). */
class FakeUpstream implements PipelineUpstream {
  readonly calls: UpstreamCall[] = [];
  hold = false;

  pipeline(commands: Buffer[][], credential?: Credential): Promise<Buffer[]> {
    return this.record('pipeline', commands, credential, undefined, () => commands.map(replyOf));
  }

  transaction(commands: Buffer[][], watch?: WatchedKeys, credential?: Credential): Promise<TransactionOutcome> {
    return this.record('transaction', commands, credential, watch, () => ({ kind: 'executed-script', replies: commands.map(replyOf) }));
  }

  /** Answers every call still waiting. */
  answerAll(): void {
    for (const call of this.calls) call.answer();
  }

  /** The commands of each call, as words. */
  get sent(): string[][][] {
    return this.calls.map((c) => c.commands);
  }

  private record<T>(
    kind: UpstreamCall['kind'],
    commands: Buffer[][],
    credential: Credential | undefined,
    watch: WatchedKeys | undefined,
    make: () => T,
  ): Promise<T> {
    return new Promise<T>((resolve) => {
      let answered = false;
      const call: UpstreamCall = {
        kind,
        commands: commands.map((c) => c.map(String)),
        token: credential?.token,
        watch,
        answer: () => {
          if (!answered) resolve(make());
          answered = true;
        },
      };
      this.calls.push(call);
      if (!this.hold) call.answer();
    });
  }
}

/** One connection as the batcher sees it: records what it receives, in order. */
class Source implements BatchSource {
  readonly pending: ForwardItem[] = [];
  inFlight = false;
  queued = false;
  readonly replies: string[] = [];
  readonly transactions: TransactionOutcome[] = [];
  batches = 0;
  onBlocking: ((item: BlockingItem, release: () => void) => void) | undefined;
  private slot = 0;

  /** `measured`: items carry their RESP size, as dispatch makes them (CommandItem.bytes). */
  constructor(
    readonly credential?: Credential,
    private readonly measured = false,
  ) {}

  command(...args: string[]): this {
    const buffers = args.map((a) => Buffer.from(a));
    this.pending.push({
      kind: 'command',
      args: buffers,
      slot: this.slot++,
      shape: undefined,
      transform: undefined,
      bytes: this.measured ? requestBytes(buffers) : undefined,
    });
    return this;
  }
  transaction(commands: string[][], watch?: WatchedKeys): this {
    this.pending.push({
      kind: 'transaction',
      commands: commands.map((c) => c.map((a) => Buffer.from(a))),
      parts: [],
      slot: this.slot++,
      watch,
    });
    return this;
  }
  blocking(): this {
    const plan = { poll: [Buffer.from('LPOP'), Buffer.from('q')], timeoutMs: 0, timeoutReply: Buffer.from('*-1\r\n') };
    this.pending.push({ kind: 'blocking', plan, slot: this.slot++, shape: undefined });
    return this;
  }
  deliver(_item: CommandItem, reply: Buffer): void {
    this.replies.push(reply.toString('latin1'));
  }
  deliverTransaction(_item: TransactionItem, outcome: TransactionOutcome): void {
    this.transactions.push(outcome);
  }
  afterBatch(): void {
    this.batches++;
  }
  runBlocking(item: BlockingItem, release: () => void): void {
    this.onBlocking?.(item, release);
  }
}

/** Lets the batcher's setImmediate flush and the answers' promise callbacks run. */
const turn = () => new Promise((r) => setImmediate(r));

describe('Batcher with a fake upstream', () => {
  it('commands ready in the same turn, from every connection, go in one call; each connection gets its replies in order', async () => {
    const upstream = new FakeUpstream();
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4 });
    const a = new Source().command('SET', 'k', '1').command('INCR', 'k');
    const b = new Source().command('ECHO', 'x');
    batcher.enqueue(a);
    batcher.enqueue(b);
    batcher.enqueue(a); // already queued: still one place in line
    expect(upstream.calls).toHaveLength(0); // not before the end of the turn
    await until(() => a.batches === 1 && b.batches === 1, 'both answered');
    expect(upstream.sent).toEqual([
      [
        ['SET', 'k', '1'],
        ['INCR', 'k'],
        ['ECHO', 'x'],
      ],
    ]);
    expect(a.replies).toEqual(['+SET k 1\r\n', '+INCR k\r\n']);
    expect(b.replies).toEqual(['+ECHO x\r\n']);
    expect(batcher.stats).toEqual({ calls: 1, commands: 3 });
    expect(a.inFlight || a.queued || b.inFlight || b.queued).toBe(false);
  });

  it('a connection never has commands in two calls at once: later ones wait for its call in flight, others go on', async () => {
    const upstream = new FakeUpstream();
    upstream.hold = true;
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4, minBatchWhileBusy: 1 });
    const a = new Source().command('SET', 'k', 'first');
    batcher.enqueue(a);
    await turn();
    expect(a.inFlight).toBe(true);
    a.command('GET', 'k');
    batcher.enqueue(a);
    const other = new Source().command('PING');
    batcher.enqueue(other);
    await turn();
    expect(upstream.sent).toEqual([[['SET', 'k', 'first']], [['PING']]]);
    upstream.calls[1].answer();
    await until(() => other.batches === 1, 'the other connection answered');
    expect(a.replies).toEqual([]);
    upstream.calls[0].answer(); // a's call ends: its GET goes next
    await until(() => upstream.calls.length === 3, 'the third call');
    expect(upstream.sent[2]).toEqual([['GET', 'k']]);
    upstream.answerAll();
    await until(() => a.replies.length === 2, 'both replies');
    expect(a.replies).toEqual(['+SET k first\r\n', '+GET k\r\n']);
  });

  it('splits at maxBatch commands (a connection may span calls in order) and keeps at most maxInFlight calls', async () => {
    const upstream = new FakeUpstream();
    upstream.hold = true;
    const batcher = new Batcher(upstream, { maxBatch: 3, maxInFlight: 2, minBatchWhileBusy: 1 });
    const sources = Array.from({ length: 4 }, (_, i) => new Source().command('ECHO', `${i}a`).command('ECHO', `${i}b`));
    for (const s of sources) batcher.enqueue(s);
    await turn();
    expect(upstream.sent).toEqual([
      [
        ['ECHO', '0a'],
        ['ECHO', '0b'],
        ['ECHO', '1a'],
      ],
      [
        ['ECHO', '2a'],
        ['ECHO', '2b'],
        ['ECHO', '3a'],
      ],
    ]);
    // Connections 1 and 3 have a command left, but are in flight: it waits for their call.
    upstream.calls[0].answer();
    await until(() => upstream.calls.length === 3, 'connection 1 goes on');
    expect(upstream.sent[2]).toEqual([['ECHO', '1b']]);
    upstream.answerAll();
    await until(() => upstream.calls.length === 4, 'connection 3 goes on');
    upstream.answerAll();
    await until(() => sources.every((s) => s.replies.length === 2), 'every reply');
    sources.forEach((s, i) => expect(s.replies).toEqual([`+ECHO ${i}a\r\n`, `+ECHO ${i}b\r\n`]));
    expect(batcher.stats).toEqual({ calls: 4, commands: 8 });
  });

  it('while a call is in flight, small work of later turns waits for it and goes out as one call', async () => {
    const upstream = new FakeUpstream();
    upstream.hold = true;
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4, minBatchWhileBusy: 16, holdMs: 60_000 });
    batcher.enqueue(new Source().command('SET', 'k', '1'));
    await turn();
    const b = new Source().command('ECHO', 'b');
    batcher.enqueue(b);
    await turn();
    const c = new Source().command('ECHO', 'c');
    batcher.enqueue(c);
    await turn();
    expect(upstream.calls).toHaveLength(1); // held: the call in flight carries them on when it ends
    upstream.hold = false;
    upstream.calls[0].answer();
    await until(() => b.replies.length === 1 && c.replies.length === 1, 'held commands answered');
    expect(upstream.sent).toEqual([
      [['SET', 'k', '1']],
      [
        ['ECHO', 'b'],
        ['ECHO', 'c'],
      ],
    ]);
  });

  it('held work goes after holdMs when the call in flight is slow; minBatchWhileBusy ready commands go at once', async () => {
    const upstream = new FakeUpstream();
    upstream.hold = true;
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4, minBatchWhileBusy: 3, holdMs: 5 });
    batcher.enqueue(new Source().command('PING'));
    await turn();
    const small = new Source().command('ECHO', 'small');
    batcher.enqueue(small);
    await turn();
    expect(upstream.calls).toHaveLength(1);
    await until(() => upstream.calls.length === 2, 'the held command sent after holdMs');
    const big = new Source().command('ECHO', '1').command('ECHO', '2').command('ECHO', '3');
    batcher.enqueue(big);
    await turn();
    expect(upstream.calls).toHaveLength(3); // three ready commands do not wait
    upstream.answerAll();
    await until(() => small.replies.length === 1 && big.replies.length === 3, 'answered');
  });

  it('a connection writing a large value gets a call of its own, beside the others and never held; its order is kept', async () => {
    const upstream = new FakeUpstream();
    upstream.hold = true;
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 8, minBatchWhileBusy: 100, holdMs: 60_000 });
    const value = 'x'.repeat(LARGE_WORK_BYTES);
    const small = new Source().command('ECHO', 'a');
    const big1 = new Source().command('SET', 'k1', value).command('GET', 'k1');
    const big2 = new Source().command('SET', 'k2', value);
    const small2 = new Source().command('ECHO', 'b');
    for (const s of [small, big1, big2, small2]) batcher.enqueue(s);
    await turn();
    const shape = () => upstream.sent.map((call) => call.map((c) => c.map((a) => (a.length > 16 ? `<${a.length}>` : a))));
    // The small commands share one call; each large writer has its own, all in flight at once.
    expect(shape()).toEqual([
      [
        ['ECHO', 'a'],
        ['ECHO', 'b'],
      ],
      [
        ['SET', 'k1', `<${LARGE_WORK_BYTES}>`],
        ['GET', 'k1'],
      ],
      [['SET', 'k2', `<${LARGE_WORK_BYTES}>`]],
    ]);
    // While those are in flight, another large write is not held back with the small work.
    const big3 = new Source().command('SET', 'k3', value);
    batcher.enqueue(big3);
    await turn();
    expect(upstream.calls).toHaveLength(4);
    upstream.answerAll();
    await until(() => big1.replies.length === 2 && big3.replies.length === 1, 'answered');
    expect(big1.replies[1]).toBe('+GET k1\r\n');
    expect(batcher.stats).toEqual({ calls: 4, commands: 6 });
  });

  it('items that carry their measured size (as dispatch makes them) batch alike, and their size is what the cost counts', async () => {
    const upstream = new FakeUpstream();
    const cost = new ClientCost();
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 8, cost });
    const value = 'x'.repeat(LARGE_WORK_BYTES);
    // Just under the threshold in argument bytes, though its RESP size is above it: not large.
    const under = 'y'.repeat(LARGE_WORK_BYTES - 'SETk0'.length - 1);
    const small = new Source(undefined, true).command('ECHO', 'a');
    const big = new Source(undefined, true).command('SET', 'k1', value).command('GET', 'k1');
    const almost = new Source(undefined, true).command('SET', 'k0', under);
    for (const s of [small, big, almost]) batcher.enqueue(s);
    await until(() => small.batches === 1 && big.batches === 1 && almost.batches === 1, 'answered');
    const shape = upstream.sent.map((call) => call.map((c) => c.map((a) => (a.length > 16 ? `<${a.length}>` : a))));
    expect(shape).toEqual([
      [
        ['ECHO', 'a'],
        ['SET', 'k0', `<${under.length}>`],
      ],
      [
        ['SET', 'k1', `<${LARGE_WORK_BYTES}>`],
        ['GET', 'k1'],
      ],
    ]);
    const sent = upstream.sent.flat().reduce((n, c) => n + requestBytes(c.map((a) => Buffer.from(a))), 0);
    expect(cost.clientSeries().get(UNNAMED)).toMatchObject({ commands: 4, bytesSent: sent });
  });

  it('a connection whose last reply was large reads alone next time; a small reply puts it back with the others', async () => {
    const upstream = new FakeUpstream();
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 8 });
    const reader = new Source().command('BIGGET', 'k');
    const other = new Source().command('ECHO', '1');
    batcher.enqueue(reader);
    batcher.enqueue(other);
    await until(() => reader.batches === 1 && other.batches === 1, 'first round');
    expect(upstream.sent).toEqual([
      [
        ['BIGGET', 'k'],
        ['ECHO', '1'],
      ],
    ]); // nothing known yet: one call
    reader.command('GET', 'small');
    other.command('ECHO', '2');
    batcher.enqueue(reader);
    batcher.enqueue(other);
    await until(() => reader.batches === 2 && other.batches === 2, 'second round');
    expect(upstream.sent.slice(1)).toEqual([[['ECHO', '2']], [['GET', 'small']]]);
    reader.command('GET', 'again');
    other.command('ECHO', '3');
    batcher.enqueue(reader);
    batcher.enqueue(other);
    await until(() => reader.batches === 3 && other.batches === 3, 'third round');
    expect(upstream.sent.slice(3)).toEqual([
      [
        ['GET', 'again'],
        ['ECHO', '3'],
      ],
    ]);
    expect(reader.replies.slice(1)).toEqual(['+GET small\r\n', '+GET again\r\n']);
  });

  it('a transaction or a blocking command first in line is never held', async () => {
    const upstream = new FakeUpstream();
    upstream.hold = true;
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4, minBatchWhileBusy: 100, holdMs: 60_000 });
    batcher.enqueue(new Source().command('PING'));
    await turn();
    const t = new Source().transaction([['INCR', 'n']]);
    batcher.enqueue(t);
    let blocked = false;
    const b = new Source().blocking();
    b.onBlocking = () => (blocked = true);
    batcher.enqueue(b);
    await turn();
    expect(upstream.calls.map((c) => c.kind)).toEqual(['pipeline', 'transaction']);
    expect(blocked).toBe(true);
    upstream.answerAll();
  });

  it('connections with different tokens never share a call; each keeps its order', async () => {
    const upstream = new FakeUpstream();
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4 });
    const alice = { token: 'alice' };
    const a1 = new Source(alice).command('GET', 'a1');
    const b = new Source({ token: 'bob' }).command('GET', 'b');
    const a2 = new Source(alice).command('GET', 'a2');
    const plain = new Source().command('GET', 'p');
    for (const s of [a1, b, a2, plain]) batcher.enqueue(s);
    await until(() => [a1, b, a2, plain].every((s) => s.replies.length === 1), 'all answered');
    expect(upstream.calls.map((c) => [c.token, c.commands])).toEqual([
      [
        'alice',
        [
          ['GET', 'a1'],
          ['GET', 'a2'],
        ],
      ],
      ['bob', [['GET', 'b']]],
      [undefined, [['GET', 'p']]],
    ]);
  });

  it("a transaction goes alone, after the connection's earlier commands and before its later ones, with its watched keys and token", async () => {
    const upstream = new FakeUpstream();
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4 });
    const watch: WatchedKeys = { keys: [Buffer.from('t')], fingerprints: [Buffer.from('f')], broken: false };
    const a = new Source({ token: 'tok' })
      .command('SET', 't', '1')
      .transaction(
        [
          ['INCR', 't'],
          ['INCR', 't'],
        ],
        watch,
      )
      .command('GET', 't');
    const other = new Source({ token: 'tok' }).command('PING');
    batcher.enqueue(a);
    batcher.enqueue(other);
    await until(() => a.replies.length === 2 && a.transactions.length === 1, 'all answered');
    expect(upstream.calls.map((c) => [c.kind, c.commands])).toEqual([
      ['pipeline', [['SET', 't', '1'], ['PING']]],
      [
        'transaction',
        [
          ['INCR', 't'],
          ['INCR', 't'],
        ],
      ],
      ['pipeline', [['GET', 't']]],
    ]);
    expect(upstream.calls[1].watch).toBe(watch);
    expect(upstream.calls[1].token).toBe('tok');
    expect(a.transactions).toEqual([
      {
        kind: 'executed-script',
        replies: [replyOf([Buffer.from('INCR'), Buffer.from('t')]), replyOf([Buffer.from('INCR'), Buffer.from('t')])],
      },
    ]);
    expect(batcher.stats).toEqual({ calls: 3, commands: 5 });
  });

  it('transactions that find no free call wait at the front of the line, in order', async () => {
    const upstream = new FakeUpstream();
    upstream.hold = true;
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 1 });
    const first = new Source().transaction([['INCR', 'a']]);
    const second = new Source().transaction([['INCR', 'b']]);
    const third = new Source().transaction([['INCR', 'c']]);
    for (const s of [first, second, third]) batcher.enqueue(s);
    await turn();
    expect(upstream.sent).toEqual([[['INCR', 'a']]]);
    for (let n = 2; n <= 3; n++) {
      upstream.answerAll();
      await until(() => upstream.calls.length === n, `transaction ${n} sent`);
    }
    upstream.answerAll();
    await until(() => third.transactions.length === 1, 'the last one answered');
    expect(upstream.sent).toEqual([[['INCR', 'a']], [['INCR', 'b']], [['INCR', 'c']]]);
  });

  it('a blocking command holds its connection until released; others go on; its polls are counted calls', async () => {
    const upstream = new FakeUpstream();
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4 });
    const a = new Source().blocking().command('ECHO', 'after');
    let release: (() => void) | undefined;
    a.onBlocking = (item, r) => {
      expect(item.plan.poll.map(String)).toEqual(['LPOP', 'q']);
      release = r;
    };
    batcher.enqueue(a);
    await until(() => release !== undefined, 'the blocking command started');
    expect(a.inFlight).toBe(true);
    const other = new Source().command('ECHO', 'meanwhile');
    batcher.enqueue(other);
    await until(() => other.replies.length === 1, 'the other connection answered');
    expect(a.replies).toEqual([]);
    expect(await batcher.poll([[Buffer.from('LPOP'), Buffer.from('q')]], { token: 'tok' })).toEqual([Buffer.from('+LPOP q\r\n')]);
    expect(upstream.calls.at(-1)!.token).toBe('tok');
    release!();
    await until(() => a.replies.length === 1, 'the later command answered');
    expect(a.replies).toEqual(['+ECHO after\r\n']);
    expect(batcher.stats).toEqual({ calls: 3, commands: 3 });
  });

  it('an answered write, alone or in a transaction, wakes the clients blocked on its keys; a read does not', async () => {
    const upstream = new FakeUpstream();
    const batcher = new Batcher(upstream, { maxBatch: 1000, maxInFlight: 4 });
    upstream.pipeline = (commands) => Promise.resolve(commands.map((c) => (String(c[0]) === 'LPOP' ? Buffer.from('$-1\r\n') : replyOf(c))));
    const run = batcher.blocking.wait(
      { poll: [Buffer.from('LPOP'), Buffer.from('q')], timeoutMs: 0, timeoutReply: Buffer.from('*-1\r\n'), keys: [Buffer.from('q')] },
      60_000,
      () => {},
    );
    expect(batcher.blocking.watching).toBe(true);
    const reader = new Source().command('LLEN', 'q').command('RPUSH', 'other', 'x');
    batcher.enqueue(reader);
    await until(() => reader.replies.length === 2, 'the read answered');
    expect(batcher.blocking.stats.wakeups).toBe(0);
    const writer = new Source().command('RPUSH', 'q', 'x');
    batcher.enqueue(writer);
    await until(() => writer.replies.length === 1, 'the write answered');
    expect(batcher.blocking.stats.wakeups).toBe(1);
    const transaction = new Source().transaction([['RPUSH', 'q', 'y']]);
    batcher.enqueue(transaction);
    await until(() => transaction.transactions.length === 1, 'the transaction answered');
    expect(batcher.blocking.stats.wakeups).toBe(2);
    run.cancel();
  });

  it('observe sees every call: its commands, its replies and a duration', async () => {
    const upstream = new FakeUpstream();
    const seen: { commands: string[][]; replies: string[]; ms: number }[] = [];
    const batcher = new Batcher(upstream, {
      maxBatch: 1000,
      maxInFlight: 4,
      observe: (commands, replies, ms) =>
        seen.push({ commands: commands.map((c) => c.map(String)), replies: (replies ?? []).map(String), ms }),
    });
    const a = new Source().command('GET', 'k');
    batcher.enqueue(a);
    await until(() => a.replies.length === 1, 'answered');
    await batcher.poll([[Buffer.from('PING')]]);
    expect(seen.map(({ commands, replies }) => ({ commands, replies }))).toEqual([
      { commands: [['GET', 'k']], replies: ['+GET k\r\n'] },
      { commands: [['PING']], replies: ['+PING\r\n'] },
    ]);
    for (const s of seen) expect(s.ms).toBeGreaterThanOrEqual(0);
  });

  it('if the upstream ever rejects (its contract says it never does), every command and transaction still gets an error', async () => {
    const broken: PipelineUpstream = {
      pipeline: () => Promise.reject(new Error('boom\r\nline')),
      transaction: () => Promise.reject(new Error('bang')),
    };
    const batcher = new Batcher(broken, { maxBatch: 1000, maxInFlight: 4 });
    const a = new Source()
      .command('GET', 'x')
      .command('GET', 'y')
      .transaction([['INCR', 'y']]);
    batcher.enqueue(a);
    await until(() => a.replies.length === 2 && a.transactions.length === 1, 'answered');
    expect(a.replies).toEqual(['-ERR respgate internal error: boom line\r\n', '-ERR respgate internal error: boom line\r\n']);
    expect(a.transactions).toEqual([{ kind: 'failed', error: 'ERR respgate internal error: bang' }]);
    expect(a.inFlight).toBe(false);
  });
});
