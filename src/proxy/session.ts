// One client connection of the proxy port: the shared connection core (server/connection.ts: reading,
// limits, backpressure, reply order, the end of the connection) plus what the proxy adds: the batcher's
// way back, transactions, pub/sub and blocking commands. The steps of a request live in their own
// modules; one GET goes:
//
//   socket read (server/socket-input.ts) → RespConnection.receive → RequestReader.read (resp/request-reader.ts)
//     → dispatch (dispatch.ts: check, gates, route) → a position in ReplyQueue + a CommandItem on `pending`
//     → Batcher.enqueue … setImmediate … Batcher.flush → KvClient.pipeline (upstream/)
//     → Session.deliverRange (the common answer: a reply is a range of it, no view; RESP3 and transforms
//       go through Session.deliver) → Session.afterBatch → ReplyQueue.write → socket.write
//
// Replies are written strictly in request order, in the connection's protocol (RESP2, or RESP3 after
// HELLO 3: upstream replies are converted by reply type).
import { joinReply, replyHead, type Reply } from '../resp/reply-pieces.js';
import { performance } from 'node:perf_hooks';
import { toResp3 } from '../resp/resp3-converter.js';
import type { TransactionOutcome } from '../upstream/kv-client.js';
import type { CommandSpec } from '../commands/table.js';
import type { BatchSource } from './batcher.js';
import type { BlockingRun } from './blocking.js';
import { runBlocking } from './blocking-hub.js';
import type { Connection, PushState } from '../server/context.js';
import type { OutputClass } from '../server/output-limits.js';
import type { ProxyContext } from './context.js';
import { dispatch, type DispatchTarget } from './dispatch.js';
import type { BlockingItem, CommandItem, ForwardItem, TransactionItem } from './forward-item.js';
import type { ProxyLocalContext } from './local/index.js';
import { createPushState } from './pubsub.js';
import { RespConnection } from '../server/connection.js';
import { errorReply, NULL3, NULL_ARRAY, NULL_BULK, OK } from '../server/replies.js';
import { Transaction, transactionReply } from './transaction.js';

const UNBLOCKED = errorReply('UNBLOCKED client unblocked via CLIENT UNBLOCK');

export class Session extends RespConnection implements Connection, BatchSource, DispatchTarget, ProxyLocalContext {
  // BatchSource
  readonly pending: ForwardItem[] = [];
  inFlight = false;
  queued = false;

  // DispatchTarget: the last command name resolved and its spec.
  nameSeen: Buffer | undefined = undefined;
  specSeen: CommandSpec | undefined = undefined;

  readonly transaction = new Transaction();
  /** Pub/sub subscriptions and MONITOR of this connection (upstream event streams). */
  readonly pushes: PushState;
  /** The blocking command polling now, if any. */
  private blocking: BlockingRun | undefined;

  constructor(
    socket: RespConnection['socket'],
    id: number,
    private readonly ctx: ProxyContext,
    onClosed: (session: Session) => void,
  ) {
    super(socket, id, ctx.host, onClosed as (c: RespConnection) => void);
    this.pushes = createPushState(this, ctx.pushUpstream);
  }

  // ProxyLocalContext: the session is its own (no object and closure of their own per connection).
  get local(): ProxyLocalContext {
    return this;
  }
  get conn(): Session {
    return this;
  }
  get server(): ProxyLocalContext['server'] {
    return this.ctx.server;
  }

  protected handle(args: Buffer[], readAt: number): void {
    dispatch(this, args, readAt);
  }

  protected afterRead(): void {
    if (this.pending.length > 0 && !this.inFlight) this.ctx.databases.get(this.batchDb).batcher.enqueue(this);
  }

  // ---- the database of its upstream items (databases.ts) ----

  /** The database whose batcher the pending and in-flight items go to; it changes only when there are none. */
  private batchDb = 0;
  /** Commands waiting for the items of another database to be answered first (made when one waits). */
  private drainWaiters: Array<() => void> | undefined;

  /**
   * A command for database `db` is next: undefined when it may be queued now; otherwise the items
   * of the database in use are answered first (the promise resolves then), so per-connection order
   * holds across databases without the batcher knowing of them.
   */
  useDatabase(db: number): Promise<void> | undefined {
    if (db === this.batchDb) return undefined;
    if (!this.busy) {
      this.batchDb = db;
      return undefined;
    }
    return new Promise((resolve) =>
      (this.drainWaiters ??= []).push(() => {
        this.batchDb = db;
        resolve();
      }),
    );
  }

  /** Resolves once nothing of this connection waits for or is in an upstream call (INFO keyspace of every database). */
  drained(): Promise<void> {
    return this.busy ? new Promise((resolve) => (this.drainWaiters ??= []).push(resolve)) : Promise.resolve();
  }

  /**
   * The client ended its side. A blocking command waits for data the client can no longer ask for:
   * Redis frees a client whose connection reads EOF, so the polling stops and the connection closes.
   */
  protected peerEnd(): void {
    if (this.blocking) return void this.destroy();
    super.peerEnd();
  }

  // ---- Connection (what command handlers see) ----

  get isBlocked(): boolean {
    return this.blocking !== undefined;
  }

  get queuedCommands(): number {
    return this.transaction.queuedCount;
  }

  discardTransaction(): void {
    this.transaction.discard();
  }

  /**
   * CLIENT UNBLOCK of this connection: a blocking command in progress ends with its timeout reply
   * (TIMEOUT) or Redis' UNBLOCKED error (ERROR). False when nothing is blocked.
   */
  unblock(reason: 'timeout' | 'error'): boolean {
    if (!this.blocking) return false;
    this.blocking.unblock(reason === 'error' ? UNBLOCKED : undefined);
    return true;
  }

  /**
   * Closes the connection now. A blocking command stops first, at once: 'close' comes only a turn
   * later, and what a poll takes meanwhile must be put back, not written to a closed socket.
   */
  destroy(): void {
    this.blocking?.cancel();
    this.blocking = undefined;
    super.destroy();
  }

  // ---- BatchSource (the way back from the upstream) ----

  deliver(item: CommandItem, reply: Reply, answeredAt: number): void {
    // A reply in pieces (a large bulk) is written as it is; a converted one is joined first.
    let out = item.shape === undefined ? reply : toResp3(joinReply(reply), item.shape);
    if (item.transform) out = item.transform(joinReply(out));
    this.replies.fill(item.slot, out);
    this.answered(item, answeredAt, replyHead(out));
  }

  /**
   * A reply that is bytes [start, end) of the upstream answer, never an error (batcher.ts SplitAnswer):
   * queued as that range, no view made. A RESP3 connection or a transform gets a view and deliver.
   */
  deliverRange(item: CommandItem, answer: Buffer, start: number, end: number, answeredAt: number): void {
    if (item.shape !== undefined || item.transform) return this.deliver(item, answer.subarray(start, end), answeredAt);
    this.replies.fillRange(item.slot, answer, start, end);
    // Not an error: the stats count it as one that succeeded (any reply not `-`/`!` says so). Commands read
    // at the same moment and answered by the same call took the same time: counted together (countRun).
    const run = this.runItem;
    if (run !== undefined && run.readAt === item.readAt && run.name === item.name && this.runAnsweredAt === answeredAt) {
      this.runCount++;
      return;
    }
    if (run !== undefined) this.countRun();
    if (item.readAt === undefined) return;
    // A command slow enough for SLOWLOG goes there with its own arguments.
    if (this.ctx.ops.slow(answeredAt - item.readAt)) return this.answered(item, answeredAt, OK);
    this.runItem = item;
    this.runCount = 1;
    this.runAnsweredAt = answeredAt;
  }

  /**
   * Range replies not yet counted (deliverRange): a run of one command name, read at the same moment (one
   * socket read) and answered by one call, so with one latency. Counted once per run, not once per command:
   * at -P 16 a connection's 16 commands are one run, and the metrics and INFO counters per command were a
   * few percent of the proxy's CPU (bench/README.md, issue 25, p16 branch).
   */
  private runItem: CommandItem | undefined = undefined;
  private runCount = 0;
  private runAnsweredAt = 0;

  /** Counts the run of range replies (deliverRange): what answered() does for each of its commands. */
  private countRun(): void {
    const item = this.runItem!;
    const count = this.runCount;
    this.runItem = undefined;
    this.runCount = 0;
    const ms = this.runAnsweredAt - item.readAt!;
    this.ctx.ops.commandsDone(count, ms);
    if (item.name) this.ctx.server.commandStats.ranMany(item.name, ms * 1000, count);
  }

  /** A forwarded command's reply is queued: its latency and command stats (`head`: its reply's first bytes). */
  private answered(item: CommandItem, answeredAt: number, head: Buffer): void {
    if (item.readAt === undefined) return;
    const ms = answeredAt - item.readAt;
    this.ctx.ops.commandDone(this, item.args, ms);
    if (item.name) this.ctx.server.commandStats.ran(item.name, ms * 1000, head);
  }

  deliverTransaction(item: TransactionItem, outcome: TransactionOutcome): void {
    const stats = this.ctx.server.commandStats;
    const reply = transactionReply(item.parts, outcome, item.protocol ?? 2, (name, r) => stats.ran(name, 0, r));
    if (item.readAt !== undefined) stats.ran('exec', (performance.now() - item.readAt) * 1000, reply);
    this.replies.fill(item.slot, reply);
  }

  afterBatch(): void {
    if (this.runItem !== undefined) this.countRun();
    this.writeAndResume();
    const waiters = this.drainWaiters;
    if (waiters !== undefined && waiters.length > 0 && !this.busy) for (const resolve of waiters.splice(0)) resolve();
  }

  runBlocking(item: BlockingItem, release: () => void): void {
    if (this.replies.ended) return void setImmediate(release);
    if (this.peerEnded) {
      // The client is gone or half-closed before its blocking command started: like Redis at EOF.
      this.destroy();
      return void setImmediate(release);
    }
    // The shared pollers use the proxy's own token; a client with a token of its own (pass-through, ACL
    // users) polls on its own, so a token never polls for another.
    const credential = this.credential;
    const batcher = this.ctx.databases.get(this.batchDb).batcher;
    const blocking = credential
      ? {
          wait: (plan: typeof item.plan, ms: number, done: (reply: Buffer) => void) =>
            runBlocking(plan, (commands) => batcher.poll(commands, credential), ms, done),
        }
      : batcher.blocking;
    this.blocking = blocking.wait(item.plan, this.ctx.config.blockPollIntervalMs, (reply) => {
      this.blocking = undefined;
      // A RESP3 connection times out with RESP3's null.
      const isNull = item.shape !== undefined && (reply.equals(NULL_ARRAY) || reply.equals(NULL_BULK));
      if (item.name && item.readAt !== undefined)
        this.ctx.server.commandStats.ran(item.name, (performance.now() - item.readAt) * 1000, reply);
      this.replies.fill(item.slot, isNull ? NULL3 : item.shape === undefined ? reply : toResp3(reply, item.shape));
      release();
    });
  }

  // ---- the end of the connection ----

  /** Redis `timeout` applies: no subscription, MONITOR, blocking command or reply owed. */
  get idle(): boolean {
    return super.idle && !this.blocking && this.pushes.subscriptionCount === 0 && !this.pushes.monitoring;
  }

  /** Redis' classes (getClientType): a subscribed connection is pubsub; MONITOR stays normal, as Redis exposes it. */
  protected get outputClass(): OutputClass {
    return this.pushes.subscriptionCount > 0 ? 'pubsub' : 'normal';
  }

  protected get busy(): boolean {
    return this.inFlight || this.pending.length > 0;
  }

  protected closed(): void {
    this.pending.length = 0; // not yet sent: never sent
    this.drainWaiters = undefined;
    this.blocking?.cancel(); // a blocking command stops polling
    this.blocking = undefined;
    this.transaction.discard();
    this.pushes.reset(); // no upstream event stream outlives its client
  }
}
