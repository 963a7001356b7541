// Coalesces the commands that are ready at the same moment, from every connection, into one
// upstream pipeline call. Order per connection is kept by a barrier: a connection never has
// commands in two calls at once, so its next commands wait for the previous call to finish.
// A transaction (MULTI … EXEC) is one item that travels alone, as one /multi-exec call, under the
// same barrier: after the connection's earlier commands, before its later ones. So does the work of a
// connection that moves large values (isLarge): its call then runs beside the others' instead of
// making them wait for its megabytes.
import { performance } from 'node:perf_hooks';
import { resolveCommand } from '../commands/table.js';
import { errorReply } from '../resp/protocol.js';
import { emptyKeepingRoom } from '../server/reply-queue.js';
import type { Credential, TransactionOutcome } from '../upstream/kv-client.js';
import type { WatchedKeys } from '../upstream/script-transaction.js';
import { BlockingHub } from './blocking-hub.js';
import type { ClientCost, CostedCommand, CostOwner } from './client-cost.js';
import { joinReply, replyHead, ReplyPieces, type Reply } from '../resp/reply-pieces.js';
import { isSplitAnswer, rangeLength, type SplitAnswer } from '../resp/resp2-splitter.js';
import { largeBuffers, POOLED_MIN_BYTES } from '../resp/large-buffers.js';
import { largeValuesSeen } from '../large-value-heap.js';
import type { BlockingItem, CommandItem, ForwardItem, TransactionItem } from './forward-item.js';

/**
 * What the batcher needs from the upstream (KvClient in the proxy; a fake in
 * test/proxy/batcher.unit.test.ts). Neither call rejects: every command gets a reply, errors included.
 */
export interface PipelineUpstream {
  /** One /pipeline call: one RESP2 reply per command, in order. */
  pipeline(commands: Buffer[][], credential?: Credential): Promise<Buffer[]>;
  /** The same, a large bulk reply possibly in the pieces it arrived in (written to the client as they are). */
  pipelineReplies?(commands: Buffer[][], credential?: Credential): Promise<Reply[]>;
  /** The same, the common answer as its bytes and reply ends (SplitAnswer): no view per reply. */
  pipelineRanges?(commands: Buffer[][], credential?: Credential): Promise<Reply[] | SplitAnswer>;
  /** One MULTI … EXEC, as /multi-exec or, with watched keys, as one script. */
  transaction(commands: Buffer[][], watch?: WatchedKeys, credential?: Credential): Promise<TransactionOutcome>;
}

/** What the batcher needs from a connection (its names: what client-cost.ts charges its commands to). */
export interface BatchSource extends CostOwner {
  /** Items waiting to be sent, oldest first. */
  readonly pending: ForwardItem[];
  /** True while some of its commands are in an upstream call. */
  inFlight: boolean;
  /** True while it waits in the batcher's ready list. */
  queued: boolean;
  /** The client's own upstream token; connections with different tokens never share a call. */
  readonly credential?: Credential;
  /**
   * Receives the raw RESP2 reply of one of its commands (possibly an error reply made by the client);
   * `answeredAt` is performance.now() when the call's answer came (one clock reading per call).
   */
  deliver(item: CommandItem, reply: Reply, answeredAt: number): void;
  /** The same for a reply that is bytes [start, end) of `answer`, never an error (without it: a view to deliver). */
  deliverRange?(item: CommandItem, answer: Buffer, start: number, end: number, answeredAt: number): void;
  /** Receives the outcome of one of its transactions. */
  deliverTransaction(item: TransactionItem, outcome: TransactionOutcome): void;
  /** Called after a call with its commands completed (to write replies, resume reading). */
  afterBatch(): void;
  /** Runs a blocking command (polls through `Batcher.poll`); calls `release` once answered. */
  runBlocking(item: BlockingItem, release: () => void): void;
}

export interface BatcherOptions {
  /** Most commands in one upstream call. */
  maxBatch: number;
  /** Most upstream calls in flight at once; further work waits and grows the next batch. */
  maxInFlight: number;
  /**
   * Sees every upstream call's commands, replies and duration (metrics, upstream error log). `replies`
   * undefined: one reply per command and none an error (an answer handed on as ranges, SplitAnswer).
   */
  observe?: (commands: Buffer[][], replies: Buffer[] | undefined, ms: number) => void;
  /**
   * While a call is in flight, fewer ready commands than this wait for it to finish (or for
   * `holdMs`) instead of going out as another small call: every HTTP call costs system calls on
   * both sides, so fewer, larger calls cut CPU per command (bench/cpu-per-command.ts). 1 = off.
   */
  minBatchWhileBusy?: number;
  /** Longest wait of held commands when the call in flight is slow. */
  holdMs?: number;
  /** Charges every upstream command to its client and command name (client-cost.ts). */
  cost?: ClientCost;
}

/** Defaults measured with bench/cpu-per-command.ts (bench/README.md, issue 14). */
export const HOLD_DEFAULTS = { minBatchWhileBusy: 256, holdMs: 1 };

/**
 * From this size on, a command's arguments or a connection's last reply make its work large: it goes
 * in a call of its own, never held. A /pipeline call answers when all its commands have run and its
 * whole body has arrived, so four clients' 1 MiB GETs in one call were served one 4 MiB answer at a
 * time, no faster than one client; in calls of their own, on separate HTTP connections, the proxy,
 * the platform and redis-server work on different ones at once (bench/README.md, large values).
 */
export const LARGE_WORK_BYTES = 128 * 1024;

export class Batcher {
  private readonly ready: BatchSource[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** The fallback timer of held commands, if armed. */
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly minBatchWhileBusy: number;
  private readonly holdMs: number;
  /** Counters for INFO and /metrics. */
  readonly stats = { calls: 0, commands: 0 };
  /** Blocked clients and their shared pollers; forwarded writes wake them (blocking-hub.ts). */
  readonly blocking = new BlockingHub((commands) => this.poll(commands));
  /** Connections whose last reply was large (LARGE_WORK_BYTES): their next commands likely read large values too. */
  private readonly largeReplies = new WeakSet<BatchSource>();
  /** Whether any reply was ever large (until then, no reply needs to clear a mark). */
  private sawLargeReply = false;

  constructor(
    private readonly client: PipelineUpstream,
    private readonly options: BatcherOptions,
  ) {
    this.minBatchWhileBusy = options.minBatchWhileBusy ?? HOLD_DEFAULTS.minBatchWhileBusy;
    this.holdMs = options.holdMs ?? HOLD_DEFAULTS.holdMs;
  }

  /** Marks a connection as having commands to send; they go out at the end of this I/O turn. */
  enqueue(source: BatchSource): void {
    if (!source.inFlight && !source.queued && source.pending.length > 0) {
      source.queued = true;
      this.ready.push(source);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      // setImmediate runs after every socket that had data in this event-loop turn was read,
      // so the commands of all connections land in one call.
      setImmediate(() => this.flush());
    }
  }

  /** True when the ready work is small and a call in flight will flush it when it finishes. */
  private shouldHold(): boolean {
    if (this.inFlight === 0 || this.minBatchWhileBusy <= 1) return false;
    let commands = 0;
    for (const source of this.ready) {
      const first = source.pending[0];
      if (first !== undefined && first.kind !== 'command') return false; // blocking and transactions go at once
      if (first !== undefined && this.isLarge(source, first)) return false; // in a call of its own: nothing to wait for
      commands += source.pending.length;
      if (commands >= this.minBatchWhileBusy) return false;
    }
    return true;
  }

  private flush(): void {
    this.scheduled = false;
    if (this.shouldHold()) {
      // Waits for the call in flight (finished() flushes), at most holdMs from the first held command.
      this.holdTimer ??= setTimeout(() => {
        this.holdTimer = undefined;
        this.flushNow();
      }, this.holdMs);
      return;
    }
    this.flushNow();
  }

  private flushNow(): void {
    if (this.holdTimer) {
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
    }
    while (this.inFlight < this.options.maxInFlight && this.ready.length > 0) {
      const sources: BatchSource[] = [];
      const items: CommandItem[] = [];
      const owners: BatchSource[] = [];
      /** Connections whose next item is a transaction, or whose work is large: it goes alone. */
      const alone: BatchSource[] = [];
      /** Connections with another token than this call's: they wait for the next call, in order. */
      const otherToken: BatchSource[] = [];
      const token = this.ready[0].credential?.token;
      while (this.ready.length > 0 && items.length < this.options.maxBatch) {
        const source = this.ready.shift()!;
        if (source.credential?.token !== token && source.pending[0]?.kind === 'command') {
          otherToken.push(source);
          continue;
        }
        source.queued = false;
        const pending = source.pending;
        if (pending.length === 0) continue;
        const first = pending[0];
        if (first.kind === 'blocking') {
          pending.shift();
          this.startBlocking(source, first);
          continue;
        }
        if (first.kind === 'transaction' || (alone.length < this.options.maxInFlight && this.isLarge(source, first))) {
          alone.push(source);
          continue;
        }
        this.take(source, this.options.maxBatch - items.length, items, owners);
        sources.push(source);
      }
      this.ready.unshift(...otherToken);
      if (items.length > 0) this.send(items, owners, sources, sources[0].credential);
      for (let i = 0; i < alone.length; i++) {
        if (this.inFlight >= this.options.maxInFlight) {
          // No room: back to the front of the line, in order.
          for (const source of alone.slice(i).reverse()) {
            source.queued = true;
            this.ready.unshift(source);
          }
          break;
        }
        const source = alone[i];
        if (source.pending[0].kind === 'transaction') {
          this.sendTransaction(source);
        } else {
          const own: CommandItem[] = [];
          const owner: BatchSource[] = [];
          this.take(source, this.options.maxBatch, own, owner);
          this.send(own, owner, [source], source.credential);
        }
      }
    }
  }

  /**
   * Moves a connection's commands, up to its next transaction or blocking command (it waits for them,
   * like later commands) and at most `room`, into a call; the connection is then in flight.
   */
  private take(source: BatchSource, room: number, items: CommandItem[], owners: BatchSource[]): void {
    const pending = source.pending;
    const limit = Math.min(pending.length, room);
    let take = 0;
    for (let item = pending[0]; take < limit && item.kind === 'command'; item = pending[++take]) {
      items.push(item);
      owners.push(source);
    }
    // All of them (the usual case): emptied keeping the array's room for the next commands; splice made
    // an array of the removed items and V8 dropped the room (~200 bytes per command at -P 1).
    if (take === pending.length) emptyKeepingRoom(pending);
    else pending.splice(0, take);
    source.inFlight = true;
  }

  /**
   * Whether a connection's next command moves a large value: its arguments are LARGE_WORK_BYTES or
   * more (SET of a big value), or its last reply was (a client reading big values reads more of them).
   */
  private isLarge(source: BatchSource, first: ForwardItem): boolean {
    if (first.kind !== 'command') return false;
    if (this.sawLargeReply && this.largeReplies.has(source)) return true;
    // Its RESP size (measured when it was read) bounds its arguments' bytes from above: smaller, not large.
    if (first.bytes !== undefined && first.bytes < LARGE_WORK_BYTES) return false;
    const args = first.args;
    let bytes = 0;
    for (let i = 0; i < args.length; i++) bytes += args[i].length;
    return bytes >= LARGE_WORK_BYTES;
  }

  /** Remembers which connections just got a large reply (isLarge). */
  private noteReplySizes(owners: readonly BatchSource[], replies: readonly Reply[] | SplitAnswer): void {
    const ends = isSplitAnswer(replies) ? replies.ends : undefined;
    for (let i = 0; i < owners.length; i++) {
      const length = ends === undefined ? (replies as readonly Reply[])[i].length : rangeLength(ends, i);
      if (length >= LARGE_WORK_BYTES) {
        if (!this.sawLargeReply) largeValuesSeen();
        this.largeReplies.add(owners[i]);
        this.sawLargeReply = true;
      } else if (this.sawLargeReply) {
        this.largeReplies.delete(owners[i]);
      }
    }
  }

  /**
   * A blocking command: the connection stays "in flight" (its later commands wait) until the command
   * is answered; its polls do not wait for other work, and other connections go on.
   */
  private startBlocking(source: BatchSource, item: BlockingItem): void {
    source.inFlight = true;
    source.runBlocking(item, () => this.finished([source]));
  }

  /** One poll of a blocking command: one upstream /pipeline call (counted like any other). */
  poll(commands: Buffer[][], credential?: Credential): Promise<Buffer[]> {
    this.stats.calls++;
    this.stats.commands += commands.length;
    return this.call(commands, credential, NO_OWNERS).then((replies) => (replies as Reply[]).map(joinReply));
  }

  /**
   * One /pipeline call, observed; never rejects. `owners[i]` sent `commands[i]` (none: the shared
   * pollers); `items`, when given, are the batcher's items of those commands (their names and sizes).
   */
  private call(
    commands: Buffer[][],
    credential: Credential | undefined,
    owners: readonly (BatchSource | undefined)[],
    items?: readonly CommandItem[],
  ): Promise<Reply[] | SplitAnswer> {
    const started = performance.now();
    const client = this.client;
    const upstream: Promise<Reply[] | SplitAnswer> =
      owners.length === 0
        ? client.pipeline(commands, credential)
        : client.pipelineRanges
          ? client.pipelineRanges(commands, credential)
          : client.pipelineReplies
            ? client.pipelineReplies(commands, credential)
            : client.pipeline(commands, credential);
    const answered = upstream.catch((err: unknown) => commands.map(() => errorReply(internalError(err))));
    const { observe, cost } = this.options;
    if (!observe && !cost) return answered;
    return answered.then((replies) => {
      if (observe) {
        const ms = performance.now() - started;
        if (isSplitAnswer(replies)) observe(commands, undefined, ms);
        else observeReplies(observe, commands, replies, ms);
      }
      cost?.call(owners, items ?? commands.map(asItem), replies, commandName);
      return replies;
    });
  }

  private sendTransaction(source: BatchSource): void {
    const item = source.pending.shift() as TransactionItem; // flush() saw it first in line
    const commands = item.commands;
    source.inFlight = true;
    this.inFlight++;
    this.stats.calls++;
    this.stats.commands += commands.length;
    const answered = this.client
      .transaction(commands, item.watch, source.credential)
      .catch((err: unknown): TransactionOutcome => ({ kind: 'failed', error: internalError(err) }));
    void answered.then((outcome) => {
      this.inFlight--;
      // One /multi-exec request, shared by its commands; replies are per command only when run as a script.
      const replies = outcome.kind === 'executed-script' ? outcome.replies : [];
      this.options.cost?.call(
        commands.map(() => source),
        commands.map(asItem),
        commands.map((_, i) => replies[i]),
        commandName,
      );
      source.deliverTransaction(item, outcome);
      this.wake(commands);
      this.finished([source]);
    });
  }

  /** Answered commands that may have written: blocked clients watching their keys poll now. */
  private wake(commands: Buffer[][]): void {
    if (!this.blocking.watching) return;
    for (const args of commands) {
      const spec = resolveCommand(args);
      if (spec && !spec.flags.has('readonly')) this.blocking.written(args);
    }
  }

  /** After a call: the connections may send again, and waiting work may start. */
  private finished(sources: BatchSource[]): void {
    for (const source of sources) {
      source.inFlight = false;
      source.afterBatch();
      if (source.pending.length > 0) this.enqueue(source);
    }
    if (this.ready.length > 0 && !this.scheduled) this.flushNow();
  }

  private send(items: CommandItem[], owners: BatchSource[], sources: BatchSource[], credential: Credential | undefined): void {
    this.inFlight++;
    this.stats.calls++;
    this.stats.commands += items.length;
    const n = items.length;
    const commands = new Array<Buffer[]>(n);
    for (let i = 0; i < n; i++) commands[i] = items[i].args;
    // The cost accounting reads the items' names and sizes (no arrays of them per call).
    const answered = this.call(commands, credential, owners, items);
    void answered.then((replies) => {
      this.inFlight--;
      const answeredAt = performance.now();
      this.noteReplySizes(owners, replies);
      if (isSplitAnswer(replies)) deliverRanges(owners, items, replies, answeredAt);
      else for (let i = 0; i < items.length; i++) owners[i].deliver(items[i], replies[i], answeredAt);
      this.wake(commands);
      giveBackValues(items, isSplitAnswer(replies) ? undefined : replies);
      this.finished(sources);
    });
  }
}

const NO_OWNERS: readonly undefined[] = [];

const MINUS = 0x2d;

/**
 * After a call, the large values its commands were read into go back to the pool (resp/large-buffers.ts):
 * nothing reads them any more (SLOWLOG and MONITOR keep copies). Only after an answer that is not an
 * error: then the upstream has read the whole request, so no write of it can still be in progress.
 */
function giveBackValues(items: readonly CommandItem[], replies: readonly Reply[] | undefined): void {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item.bytes !== undefined && item.bytes < POOLED_MIN_BYTES) continue;
    if (replies === undefined || replyHead(replies[i])[0] !== MINUS) largeBuffers.giveAll(item.args);
  }
}
/** Each command's reply as its range of the answer; a source without deliverRange gets a view. */
function deliverRanges(owners: readonly BatchSource[], items: readonly CommandItem[], split: SplitAnswer, answeredAt: number): void {
  const { body, ends } = split;
  let start = 0;
  for (let i = 0; i < items.length; i++) {
    const end = ends[i];
    const owner = owners[i];
    if (owner.deliverRange !== undefined) owner.deliverRange(items[i], body, start, end, answeredAt);
    else owner.deliver(items[i], body.subarray(start, end), answeredAt);
    start = end;
  }
}

const asItem = (args: Buffer[]): CostedCommand => ({ args });

/** A command's table name (`get`, `client|list`); `unknown` outside the table (keeps the label set bounded). */
function commandName(args: readonly Buffer[]): string {
  return resolveCommand(args)?.name ?? 'unknown';
}

/**
 * The upstream promises never to reject; if it does anyway, no connection is left waiting: every
 * command of the call gets this error.
 */
function internalError(err: unknown): string {
  return `ERR respgate internal error: ${String((err as Error)?.message ?? err)}`;
}

/**
 * Observers look for error replies and may rewrite one in place (proxy/limits-hint.ts). A reply in
 * pieces (a large bulk string, never an error) is shown by its first piece and kept as it is.
 */
function observeReplies(observe: NonNullable<BatcherOptions['observe']>, commands: Buffer[][], replies: Reply[], ms: number): void {
  if (!replies.some((reply) => reply instanceof ReplyPieces)) {
    observe(commands, replies as Buffer[], ms);
    return;
  }
  const heads = replies.map(replyHead);
  observe(commands, heads, ms);
  for (let i = 0; i < heads.length; i++) if (heads[i] !== replyHead(replies[i])) replies[i] = heads[i];
}
