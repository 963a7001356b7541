// The batcher on its own (src/proxy/batcher.ts), in front of the real upstream client and platform,
// with a recording HTTP server between them: which commands share a call, the per-connection barrier,
// the batch and in-flight limits, transactions alone under the same barrier, blocking commands
// holding their connection. The connections are small BatchSource implementations of the test.
// batcher.unit.test.ts covers the same logic in-process with a fake upstream (and what no real
// upstream does, such as a rejected promise).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Batcher } from '../../src/proxy/batcher.js';
import type { BatchSource } from '../../src/proxy/batcher.js';
import type { BlockingItem, CommandItem, ForwardItem, TransactionItem } from '../../src/proxy/forward-item.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { KvClient, type TransactionOutcome } from '../../src/upstream/kv-client.js';
import { startTestPlatform } from '../helpers/platform.js';
import { deferred, until } from '../helpers/wait.js';
import { startFaultServer, type FaultServer } from './faults-server.js';

let platform: RunningPlatform;
let fault: FaultServer;
let client: KvClient;

beforeAll(async () => {
  platform = await startTestPlatform();
  fault = await startFaultServer(platform.url);
  client = new KvClient({ url: fault.url, token: platform.token, timeoutMs: 5000, connections: 4, maxRequestBytes: 1_000_000 });
});

afterAll(async () => {
  await client?.close();
  await fault?.stop();
  await platform?.stop();
});

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

  command(...args: string[]): this {
    this.pending.push({
      kind: 'command',
      args: args.map((a) => Buffer.from(a)),
      slot: this.slot++,
      shape: undefined,
      transform: undefined,
    });
    return this;
  }
  transaction(...commands: string[][]): this {
    this.pending.push({ kind: 'transaction', commands: commands.map((c) => c.map((a) => Buffer.from(a))), parts: [], slot: this.slot++ });
    return this;
  }
  blocking(): this {
    this.pending.push({
      kind: 'blocking',
      plan: { poll: [Buffer.from('PING')], timeoutMs: 0, timeoutReply: Buffer.from('*-1\r\n') },
      slot: this.slot++,
      shape: undefined,
    });
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

/** The commands of each upstream call since `from`, as text (`/pipeline`: an array of commands). */
function calls(from: number): { path: string; commands: string[][] }[] {
  return fault.seen.slice(from).map((r) => ({
    path: r.path,
    commands: (JSON.parse(r.body.toString()) as string[][]).map((c) => c.map(String)),
  }));
}

const forward = () => (fault.decide = () => ({ kind: 'forward' }));

describe('Batcher', () => {
  it('commands ready in the same turn, from every connection, go in one call; each gets its replies in order', async () => {
    forward();
    const batcher = new Batcher(client, { maxBatch: 1000, maxInFlight: 4 });
    const from = fault.seen.length;
    const a = new Source().command('SET', 'b:a', '1').command('INCR', 'b:a');
    const b = new Source().command('ECHO', 'x').command('GET', 'b:a');
    batcher.enqueue(a);
    batcher.enqueue(b);
    await until(() => a.batches === 1 && b.batches === 1, 'both answered');
    expect(calls(from)).toHaveLength(1);
    expect(a.replies).toEqual(['+OK\r\n', ':2\r\n']);
    expect(b.replies).toEqual(['$1\r\nx\r\n', '$1\r\n2\r\n']);
    expect(batcher.stats).toEqual({ calls: 1, commands: 4 });
  });

  it('a connection never has commands in two calls at once: later ones wait for the call in flight', async () => {
    const gate = deferred();
    fault.decide = () => ({ kind: 'forward', after: gate.promise });
    const batcher = new Batcher(client, { maxBatch: 1000, maxInFlight: 4 });
    const from = fault.seen.length;
    const a = new Source().command('SET', 'b:w', 'first');
    batcher.enqueue(a);
    await until(() => fault.seen.length === from + 1, 'first call at the upstream');
    forward();
    a.command('GET', 'b:w');
    batcher.enqueue(a); // in flight: it waits
    const other = new Source().command('PING');
    batcher.enqueue(other); // another connection goes on
    await until(() => other.batches === 1, 'the other connection answered');
    expect(a.replies).toEqual([]);
    gate.resolve();
    await until(() => a.replies.length === 2, 'both replies');
    expect(a.replies).toEqual(['+OK\r\n', '$5\r\nfirst\r\n']);
    expect(calls(from).map((c) => c.commands)).toEqual([[['SET', 'b:w', 'first']], [['PING']], [['GET', 'b:w']]]);
  });

  it('splits at maxBatch commands, and keeps maxInFlight calls at most', async () => {
    const gate = deferred();
    fault.decide = () => ({ kind: 'forward', after: gate.promise });
    const batcher = new Batcher(client, { maxBatch: 3, maxInFlight: 2 });
    const from = fault.seen.length;
    const sources = Array.from({ length: 4 }, (_, i) => new Source().command('ECHO', `${i}a`).command('ECHO', `${i}b`));
    for (const s of sources) batcher.enqueue(s);
    await until(() => fault.seen.length === from + 2, 'two calls in flight');
    await new Promise((r) => setImmediate(r));
    expect(fault.seen.length).toBe(from + 2); // the rest waits for a free call
    gate.resolve();
    await until(() => sources.every((s) => s.replies.length === 2), 'every reply');
    const sizes = calls(from).map((c) => c.commands.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(3);
    expect(sizes.reduce((x, y) => x + y)).toBe(8);
    sources.forEach((s, i) => expect(s.replies).toEqual([`$2\r\n${i}a\r\n`, `$2\r\n${i}b\r\n`]));
  });

  it('while a call is in flight, small work of later turns waits for it and goes as one call (issue 14)', async () => {
    const gate = deferred();
    fault.decide = () => ({ kind: 'forward', after: gate.promise });
    const batcher = new Batcher(client, { maxBatch: 1000, maxInFlight: 4, minBatchWhileBusy: 16, holdMs: 60_000 });
    const from = fault.seen.length;
    const a = new Source().command('SET', 'b:h', '1');
    batcher.enqueue(a);
    await until(() => fault.seen.length === from + 1, 'first call at the upstream');
    forward();
    const b = new Source().command('ECHO', 'b');
    batcher.enqueue(b);
    await new Promise((r) => setImmediate(r));
    const c = new Source().command('ECHO', 'c');
    batcher.enqueue(c);
    await new Promise((r) => setImmediate(r));
    expect(fault.seen.length).toBe(from + 1); // held: the call in flight will carry them on
    gate.resolve();
    await until(() => b.replies.length === 1 && c.replies.length === 1, 'held commands answered');
    expect(calls(from).map((x) => x.commands)).toEqual([
      [['SET', 'b:h', '1']],
      [
        ['ECHO', 'b'],
        ['ECHO', 'c'],
      ],
    ]);
  });

  it('held work goes after holdMs when the call in flight is slow; enough ready commands go at once', async () => {
    const gate = deferred();
    fault.decide = () => ({ kind: 'forward', after: gate.promise });
    const batcher = new Batcher(client, { maxBatch: 1000, maxInFlight: 4, minBatchWhileBusy: 3, holdMs: 5 });
    const from = fault.seen.length;
    batcher.enqueue(new Source().command('PING'));
    await until(() => fault.seen.length === from + 1, 'first call at the upstream');
    forward();
    const small = new Source().command('ECHO', 'small');
    batcher.enqueue(small);
    await until(() => small.replies.length === 1, 'the held command answered while the first call still waits');
    const big = new Source().command('ECHO', '1').command('ECHO', '2').command('ECHO', '3');
    batcher.enqueue(big);
    await until(() => big.replies.length === 3, 'three ready commands go without waiting');
    expect(fault.seen.length).toBe(from + 3);
    gate.resolve();
  });

  it("a transaction goes alone, as /multi-exec, after the connection's earlier commands and before its later ones", async () => {
    forward();
    const batcher = new Batcher(client, { maxBatch: 1000, maxInFlight: 4 });
    const from = fault.seen.length;
    const a = new Source().command('SET', 'b:t', '1').transaction(['INCR', 'b:t'], ['INCR', 'b:t']).command('GET', 'b:t');
    batcher.enqueue(a);
    await until(() => a.replies.length === 2 && a.transactions.length === 1, 'all answered');
    expect(a.replies).toEqual(['+OK\r\n', '$1\r\n3\r\n']);
    expect(a.transactions[0].kind).toBe('executed');
    expect(calls(from).map((c) => c.path)).toEqual(['/pipeline', '/multi-exec', '/pipeline']);
  });

  it('a blocking command holds its connection until released; others go on', async () => {
    forward();
    const batcher = new Batcher(client, { maxBatch: 1000, maxInFlight: 4 });
    const a = new Source().blocking().command('ECHO', 'after');
    let release: (() => void) | undefined;
    a.onBlocking = (_item, r) => (release = r);
    batcher.enqueue(a);
    await until(() => release !== undefined, 'the blocking command started');
    expect(a.inFlight).toBe(true);
    const other = new Source().command('ECHO', 'meanwhile');
    batcher.enqueue(other);
    await until(() => other.replies.length === 1, 'the other connection answered');
    expect(a.replies).toEqual([]);
    expect(await batcher.poll([[Buffer.from('PING')]])).toEqual([Buffer.from('+PONG\r\n')]);
    release!();
    await until(() => a.replies.length === 1, 'the later command answered');
    expect(a.replies).toEqual(['$5\r\nafter\r\n']);
  });
});
