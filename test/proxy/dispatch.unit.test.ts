// The proxy's dispatch (src/proxy/dispatch.ts) in-process: one fake connection whose replies go through
// the real ReplyQueue into a fake output (the ReplyOutput seam of server/reply-queue.ts), and the real
// Batcher in front of a fake upstream that answers when the test says. What is answered locally, what
// is forwarded and in which upstream call, the order replies are written in, Redis' error texts,
// MULTI/EXEC, refusals and RESP3 after HELLO 3. test/proxy/{differential,protocol,ordering,
// transactions}.test.ts check the same through sockets against a real redis-server.
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { CommandSpec } from '../../src/commands/table.js';
import { Batcher, type BatchSource, type PipelineUpstream } from '../../src/proxy/batcher.js';
import { ClientCost } from '../../src/proxy/client-cost.js';
import type { ProxyLocalContext, ProxyServerState, PushPort } from '../../src/proxy/context.js';
import { dispatch, type DispatchTarget } from '../../src/proxy/dispatch.js';
import type { BlockingItem, CommandItem, ForwardItem, TransactionItem } from '../../src/proxy/forward-item.js';
import { MonitorHub } from '../../src/proxy/monitor.js';
import { createPushState } from '../../src/proxy/pubsub.js';
import { Transaction, transactionReply } from '../../src/proxy/transaction.js';
import type { Protocol } from '../../src/resp/protocol.js';
import { toResp3 } from '../../src/resp/resp3-converter.js';
import { ClientAuth } from '../../src/server/auth.js';
import { CommandStats } from '../../src/server/command-stats.js';
import type { Connection, PushState, ReplyMode } from '../../src/server/context.js';
import { PauseControl } from '../../src/server/pause.js';
import { ReplyQueue, type ReplyOutput } from '../../src/server/reply-queue.js';
import { Slowlog } from '../../src/server/slowlog.js';
import type { Credential, TransactionOutcome } from '../../src/upstream/kv-client.js';
import type { WatchedKeys } from '../../src/upstream/script-transaction.js';
import { defaultOutputBufferLimits } from '../../src/server/output-limits.js';
import { Databases } from '../../src/proxy/databases.js';
import { until } from '../helpers/wait.js';

/** The client's side of the socket: every write, in order. */
class FakeOutput implements ReplyOutput {
  private readonly chunks: Buffer[] = [];
  ended = false;
  write(data: Buffer): boolean {
    this.chunks.push(data);
    return true;
  }
  end(done: () => void): void {
    this.ended = true;
    done();
  }
  resume(): void {}
  destroy(): void {}
  get text(): string {
    return Buffer.concat(this.chunks).toString();
  }
}

interface Call {
  kind: 'pipeline' | 'transaction';
  commands: string[][];
  answer(): void;
}

/**
 * An upstream that records each call and answers at once, or, with `hold`, when the test says. A
 * command's reply is `+` and its words, except HGETALL's (a flat RESP2 array, for RESP3 conversion).
 */
class FakeUpstream implements PipelineUpstream {
  readonly calls: Call[] = [];
  hold = false;

  pipeline(commands: Buffer[][]): Promise<Buffer[]> {
    return this.record('pipeline', commands, () => commands.map(replyOf));
  }
  transaction(commands: Buffer[][], _watch?: WatchedKeys, _credential?: Credential): Promise<TransactionOutcome> {
    return this.record('transaction', commands, () => ({ kind: 'executed-script', replies: commands.map(replyOf) }));
  }
  get sent(): string[][][] {
    return this.calls.map((c) => c.commands);
  }
  private record<T>(kind: Call['kind'], commands: Buffer[][], make: () => T): Promise<T> {
    return new Promise<T>((resolve) => {
      const call: Call = { kind, commands: commands.map((c) => c.map(String)), answer: () => resolve(make()) };
      this.calls.push(call);
      if (!this.hold) call.answer();
    });
  }
}

function replyOf(command: Buffer[]): Buffer {
  if (String(command[0]).toLowerCase() === 'hgetall') return Buffer.from('*2\r\n$1\r\nf\r\n$1\r\nv\r\n');
  return Buffer.from(`+${command.map(String).join(' ')}\r\n`);
}

/** One client connection as dispatch, the local handlers and the batcher see it (what Session does, minus the socket). */
class FakeConnection implements DispatchTarget, Connection, BatchSource, PushPort {
  readonly out = new FakeOutput();
  readonly replies = new ReplyQueue(this.out, 0);
  readonly pending: ForwardItem[] = [];
  readonly transaction = new Transaction();
  readonly pushes: PushState;
  readonly local: ProxyLocalContext;
  protocol: Protocol = 2;
  db = 0;
  nameSeen: Buffer | undefined = undefined;
  specSeen: CommandSpec | undefined = undefined;
  authenticated = true;
  lastCommand = '';
  replyMode: ReplyMode = 'on';
  readonly id = 1;
  readonly createdAt = Date.now();
  readonly lastInteractionAt = Date.now();
  readonly address = '127.0.0.1:50000';
  readonly localAddress = '127.0.0.1:6379';
  readonly localPort = 6379;
  readonly fd = -1;
  name = '';
  libName = '';
  libVersion = '';
  credential: Credential | undefined = undefined;
  readonly isBlocked = false;
  inFlight = false;
  queued = false;

  constructor(server: ProxyServerState) {
    this.pushes = createPushState(this, undefined);
    this.local = { conn: this, server, drained: () => Promise.resolve() };
  }

  useDatabase(): undefined {
    return undefined; // one database here
  }

  setAuthenticated(value: boolean): void {
    this.authenticated = value;
  }
  get queuedCommands(): number {
    return this.transaction.queuedCount;
  }
  discardTransaction(): void {
    this.transaction.discard();
  }
  destroy(): void {
    this.replies.closedByPeer();
  }
  unblock(): boolean {
    return false;
  }
  closeAfterReplies(): void {
    this.replies.closeAfterReplies();
  }
  defer(reply: Promise<Buffer>, then?: () => void): void {
    const fill = this.reserve();
    void reply.then((r) => (fill(r), then?.()));
  }
  // ReplyPort (pub/sub writes here)
  get open(): boolean {
    return !this.replies.closing;
  }
  answer(reply: Buffer): void {
    this.replies.answer(reply);
  }
  reserve(): (reply: Buffer) => void {
    const slot = this.replies.take();
    return (reply) => (this.replies.fill(slot, reply), this.replies.write());
  }
  push(reply: Buffer): void {
    this.replies.answer(reply);
    this.replies.write();
  }
  // BatchSource: as Session does, the RESP2 reply converted by the shape dispatch gave the item.
  deliver(item: CommandItem, reply: Buffer): void {
    let out = item.shape === undefined ? reply : toResp3(reply, item.shape);
    if (item.transform) out = item.transform(out);
    this.replies.fill(item.slot, out);
  }
  deliverTransaction(item: TransactionItem, outcome: TransactionOutcome): void {
    this.replies.fill(item.slot, transactionReply(item.parts, outcome, item.protocol ?? 2));
  }
  afterBatch(): void {
    this.replies.write();
  }
  runBlocking(_item: BlockingItem, release: () => void): void {
    release();
  }
}

function setup() {
  const upstream = new FakeUpstream();
  const batcher = new Batcher(upstream, { maxBatch: 100, maxInFlight: 4, minBatchWhileBusy: 1 });
  const conns: FakeConnection[] = [];
  const server: ProxyServerState = {
    connections: () => conns,
    acceptedConnections: 1,
    startedAt: Date.now(),
    stats: batcher.stats,
    databases: new Databases({ index: 0, batcher, keyspaceDb: 0, close: async () => undefined }, [], () => {
      throw new Error('one database');
    }),
    requirepass: undefined,
    auth: new ClientAuth(undefined, { requirepass: undefined, passThrough: false, aclUsers: false, cacheMs: 0 }),
    slowlog: new Slowlog(10_000, 128),
    settings: { idleTimeoutSec: 0, maxClients: 100, outputBufferLimits: defaultOutputBufferLimits() },
    monitors: new MonitorHub(),
    pause: new PauseControl(),
    commandStats: new CommandStats(),
    clientCost: new ClientCost(),
    traffic: () => ({ input: 0, output: 0 }),
  };
  const conn = new FakeConnection(server);
  conns.push(conn);
  /** One socket read of `commands`, handled as RespConnection.receive does: dispatch each, hand the forwarded ones to the batcher, write what is ready. */
  const read = (...commands: string[][]): void => {
    const readAt = performance.now();
    for (const words of commands) {
      dispatch(
        conn,
        words.map((w) => Buffer.from(w)),
        readAt,
      );
      if (conn.replies.closing) break;
    }
    if (conn.pending.length > 0 && !conn.inFlight) batcher.enqueue(conn);
    conn.replies.write();
  };
  return { upstream, conn, read, server, batcher };
}

const w = (line: string): string[] => line.split(' ');

describe('dispatch', () => {
  it('answers local commands itself, in order, without an upstream call', () => {
    const { upstream, conn, read } = setup();
    read(w('PING'), w('ECHO hello'), w('SELECT 0'), w('CLIENT SETNAME app'), w('CLIENT GETNAME'), w('PING hi'));
    expect(conn.out.text).toBe('+PONG\r\n$5\r\nhello\r\n+OK\r\n+OK\r\n$3\r\napp\r\n$2\r\nhi\r\n');
    expect(conn.name).toBe('app');
    expect(conn.pending).toEqual([]);
    expect(upstream.calls).toEqual([]);
  });

  it('SELECT of another database or a bad index answers an error, and the connection stays usable', () => {
    const { conn, read } = setup();
    read(w('SELECT 1'), w('SELECT x'), w('PING'));
    const lines = conn.out.text.split('\r\n');
    // Redis with `databases 1` answers the same (the upstream has one database).
    expect(lines[0]).toBe('-ERR DB index is out of range');
    expect(lines[1]).toBe('-ERR value is not an integer or out of range');
    expect(lines[2]).toBe('+PONG');
  });

  it('forwards the commands of one read in one upstream call and writes their replies in request order', async () => {
    const { upstream, conn, read } = setup();
    read(w('SET a 1'), w('PING'), w('GET a'), w('ECHO x'), w('INCR n'));
    // PING and ECHO are known at once, but wait behind SET.
    expect(conn.out.text).toBe('');
    await until(() => conn.out.text.length > 0);
    expect(upstream.sent).toEqual([[w('SET a 1'), w('GET a'), w('INCR n')]]);
    expect(conn.out.text).toBe('+SET a 1\r\n+PONG\r\n+GET a\r\n$1\r\nx\r\n+INCR n\r\n');
  });

  it('a late upstream answer holds back every later reply, local ones included', async () => {
    const { upstream, conn, read } = setup();
    upstream.hold = true;
    read(w('PING first'), w('GET slow'));
    await until(() => upstream.calls.length === 1);
    // A later read while the call is in flight: its forwarded command waits for that call (the
    // batcher's per-connection barrier), its local reply waits behind GET slow's.
    read(w('PING'), w('GET next'));
    expect(conn.out.text).toBe('$5\r\nfirst\r\n');
    await new Promise((r) => setTimeout(r, 20));
    expect(upstream.sent).toEqual([[w('GET slow')]]);
    expect(conn.out.text).toBe('$5\r\nfirst\r\n');
    upstream.calls[0].answer();
    await until(() => upstream.calls.length === 2);
    expect(conn.out.text).toBe('$5\r\nfirst\r\n+GET slow\r\n+PONG\r\n');
    upstream.calls[1].answer();
    await until(() => conn.out.text.endsWith('+GET next\r\n'));
    expect(conn.out.text).toBe('$5\r\nfirst\r\n+GET slow\r\n+PONG\r\n+GET next\r\n');
  });

  it('a name Buffer used again (as the request reader shares one per spelling) resolves by its command, a container by its subcommand', async () => {
    const { upstream, conn, batcher } = setup();
    const [get, client, ping] = ['GET', 'CLIENT', 'PING'].map((name) => Buffer.from(name));
    const readAt = performance.now();
    const run = (...args: Buffer[]) => dispatch(conn, args, readAt);
    run(get, Buffer.from('a'));
    run(get, Buffer.from('b'));
    run(client, Buffer.from('SETNAME'), Buffer.from('x'));
    run(client, Buffer.from('GETNAME'));
    run(ping);
    run(get);
    run(client, Buffer.from('NOSUCH'));
    batcher.enqueue(conn);
    conn.replies.write();
    await until(() => conn.out.text.includes('NOSUCH'));
    expect(upstream.sent).toEqual([[w('GET a'), w('GET b')]]);
    expect(conn.out.text.split('\r\n').slice(0, -1)).toEqual([
      '+GET a',
      '+GET b',
      '+OK',
      '$1',
      'x',
      '+PONG',
      "-ERR wrong number of arguments for 'get' command",
      "-ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.",
    ]);
  });

  it('answers unknown commands and wrong arity with Redis 7.0 texts, before anything is forwarded', () => {
    const { upstream, conn, read } = setup();
    read(w('NOPE a b'), w('GET'), w('SET k'), w('CLIENT NOSUCH'), w('ECHO'), w('PING a b'));
    expect(conn.out.text.split('\r\n').slice(0, -1)).toEqual([
      "-ERR unknown command 'NOPE', with args beginning with: 'a' 'b' ",
      "-ERR wrong number of arguments for 'get' command",
      "-ERR wrong number of arguments for 'set' command",
      "-ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.",
      "-ERR wrong number of arguments for 'echo' command",
      "-ERR wrong number of arguments for 'ping' command",
    ]);
    expect(conn.pending).toEqual([]);
    expect(upstream.calls).toEqual([]);
  });

  it('refuses a command the proxy does not run, with its reason, and forwards nothing', () => {
    const { upstream, conn, read } = setup();
    read(w('BGSAVE'), w('PING'));
    expect(conn.out.text).toBe(
      "-ERR command 'bgsave' is not supported by respgate: persistence is managed by the upstream service\r\n+PONG\r\n",
    );
    expect(upstream.calls).toEqual([]);
  });

  it('MULTI queues forwarded and local commands; EXEC sends one transaction and answers the array in queue order', async () => {
    const { upstream, conn, read } = setup();
    read(w('MULTI'), w('SET a 1'), w('PING'), w('INCR a'), w('EXEC'), w('PING after'));
    await until(() => conn.out.text.endsWith('$5\r\nafter\r\n'));
    expect(upstream.calls.map((c) => c.kind)).toEqual(['transaction']);
    expect(upstream.sent).toEqual([[w('SET a 1'), w('INCR a')]]);
    expect(conn.out.text).toBe('+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n' + '*3\r\n+SET a 1\r\n+PONG\r\n+INCR a\r\n' + '$5\r\nafter\r\n');
  });

  it('a command rejected inside MULTI makes EXEC answer EXECABORT without an upstream call', () => {
    const { upstream, conn, read } = setup();
    read(w('MULTI'), w('SET a 1'), w('GET'), w('EXEC'), w('EXEC'));
    expect(conn.out.text).toBe(
      '+OK\r\n+QUEUED\r\n' +
        "-ERR wrong number of arguments for 'get' command\r\n" +
        '-EXECABORT Transaction discarded because of previous errors.\r\n' +
        '-ERR EXEC without MULTI\r\n',
    );
    expect(upstream.calls).toEqual([]);
  });

  it('after HELLO 3 local replies and forwarded ones are RESP3 (a hash as a map)', async () => {
    const { conn, read } = setup();
    read(w('HELLO 3'));
    expect(conn.protocol).toBe(3);
    expect(conn.out.text.startsWith('%7\r\n')).toBe(true);
    const hello = conn.out.text.length;
    read(w('HGETALL h'), w('CLIENT GETNAME'), w('GET k'));
    await until(() => conn.out.text.endsWith('+GET k\r\n'));
    expect(conn.out.text.slice(hello)).toBe('%1\r\n$1\r\nf\r\n$1\r\nv\r\n_\r\n+GET k\r\n');
  });

  it('QUIT answers +OK, runs nothing after it and ends the output', () => {
    const { upstream, conn, read } = setup();
    read(w('PING'), w('QUIT'), w('GET a'));
    expect(conn.out.text).toBe('+PONG\r\n+OK\r\n');
    expect(conn.out.ended).toBe(true);
    expect(upstream.calls).toEqual([]);
  });
});
