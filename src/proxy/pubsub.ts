// Pub/sub and MONITOR of one connection. Each channel, pattern and shard channel has its own upstream
// event stream (POST /subscribe/{channel}, /psubscribe/{pattern}, /ssubscribe/{shardchannel}); its
// events become the replies Redis 7.0 sends: `subscribe`/`psubscribe`/`ssubscribe` and their
// unsubscribe confirmations with the running count (channels + patterns; shard channels count apart),
// `message`, `pmessage` and `smessage` arrays (RESP3: `>` push frames). A message and the pmessage of
// the same PUBLISH come from two streams: pubsub-order.ts writes them in Redis' order. MONITOR is in
// monitor.ts.
//
// Sharded pub/sub: the service is one shard, so shard channels are Redis 7.0's standalone ones: a
// namespace of their own, reached by SPUBLISH only (forwarded), confirmed as `ssubscribe` and
// delivered as `smessage`. /ssubscribe is a respgate extension of the platform (docs/decisions.md):
// an upstream without it refuses the stream, and SSUBSCRIBE answers that error.
//
// Order: a SUBSCRIBE takes its reply position at once, and the position is filled when every new
// stream of the command has answered its first event (so a PUBLISH sent after the reply is read is
// never missed); the requests after it are read only then (as after an AUTH that asks the upstream),
// so they run in subscribe mode only if the subscription was made, as in Redis. Messages are appended after every
// reply already owed, and written as soon as nothing before them is missing.
//
// Differences from Redis (docs/proxy.md, "Pub/sub and MONITOR"): a stream that drops is opened again
// with backoff, and messages published in the gap are missed; UNSUBSCRIBE without arguments goes
// through subscriptions in the order they were made (Redis: hash-table order).
import type { CommandSpec } from '../commands/table.js';
import type { Protocol } from '../resp/protocol.js';
import { decodePubsubEvent, ResilientEventStream } from '../upstream/event-stream.js';
import type { PushState, ServerState } from '../server/context.js';
import type { PushPort, PushUpstream } from './context.js';
import { MonitorFeed } from './monitor.js';
import { PubsubOrder } from './pubsub-order.js';
import { errorReply, NO_EVENT_STREAMS } from '../server/replies.js';

/** The pub/sub and MONITOR state of one connection; `upstream` undefined = no event streams (their commands answer an error). */
export function createPushState(port: PushPort, upstream: PushUpstream | undefined): PushState {
  return new ConnectionPushes(port, upstream);
}

// ---- reply frames ----

const WORDS = {
  subscribe: Buffer.from('subscribe'),
  psubscribe: Buffer.from('psubscribe'),
  unsubscribe: Buffer.from('unsubscribe'),
  punsubscribe: Buffer.from('punsubscribe'),
  ssubscribe: Buffer.from('ssubscribe'),
  sunsubscribe: Buffer.from('sunsubscribe'),
  message: Buffer.from('message'),
  pmessage: Buffer.from('pmessage'),
  smessage: Buffer.from('smessage'),
};

const bulk = (b: Buffer): Buffer[] => [Buffer.from(`$${b.length}\r\n`), b, CRLF];
const CRLF = Buffer.from('\r\n');

/** `*3 <kind> <name|nil> :<count>` (RESP3: `>3`, nil as `_`). */
function confirmation(protocol: Protocol, kind: Buffer, name: Buffer | null, count: number): Buffer {
  return Buffer.concat([
    Buffer.from(protocol === 3 ? '>3\r\n' : '*3\r\n'),
    ...bulk(kind),
    ...(name === null ? [Buffer.from(protocol === 3 ? '_\r\n' : '$-1\r\n')] : bulk(name)),
    Buffer.from(`:${count}\r\n`),
  ]);
}

/** `*3 message|smessage <channel> <payload>` or `*4 pmessage <pattern> <channel> <payload>` (RESP3: `>`). */
function messageFrame(protocol: Protocol, word: Buffer, channel: Buffer, message: Buffer, pattern?: Buffer): Buffer {
  const head = Buffer.from(pattern ? (protocol === 3 ? '>4\r\n' : '*4\r\n') : protocol === 3 ? '>3\r\n' : '*3\r\n');
  return Buffer.concat(
    pattern
      ? [head, ...bulk(word), ...bulk(pattern), ...bulk(channel), ...bulk(message)]
      : [head, ...bulk(word), ...bulk(channel), ...bulk(message)],
  );
}

/** A channel or pattern name for logs: printable, short. */
function printableName(name: Buffer): string {
  const s = name
    .toString('latin1', 0, Math.min(name.length, 120))
    .replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return name.length > 120 ? s + '…' : s;
}

// ---- one connection ----

type Kind = 'channel' | 'pattern' | 'shard';

const STREAM_KIND = { channel: 'subscribe', pattern: 'psubscribe', shard: 'ssubscribe' } as const;

/** A SUBSCRIBE or PSUBSCRIBE whose reply waits for the confirmation of its new streams. */
class PendingCommand {
  done = false;
  constructor(
    private readonly fill: (reply: Buffer) => void,
    private readonly reply: Buffer,
    private readonly waiting: Set<Subscription>,
    /** Subscriptions this command made: undone if one of them is refused (Redis refuses the whole command). */
    readonly created: Subscription[],
  ) {}

  confirmed(sub: Subscription): void {
    this.waiting.delete(sub);
    if (this.waiting.size === 0 && !this.done) {
      this.done = true;
      this.fill(this.reply);
    }
  }

  failed(error: string): boolean {
    if (this.done) return false;
    this.done = true;
    this.fill(errorReply(error));
    return true;
  }
}

class Subscription {
  readonly waiters: PendingCommand[] = [];
  private stream: ResilientEventStream | undefined;
  closed = false;

  constructor(
    readonly kind: Kind,
    readonly name: Buffer,
    readonly key: string,
    private readonly owner: ConnectionPushes,
  ) {}

  get confirmed(): boolean {
    return this.stream?.confirmed ?? false;
  }

  open(upstream: PushUpstream): void {
    const kind = STREAM_KIND[this.kind];
    const target = kind === 'psubscribe' ? { kind, pattern: this.name } : { kind, channel: this.name };
    const log = upstream.log;
    const context = () => ({ conn: this.owner.port.id, client: this.owner.port.address, [this.kind]: printableName(this.name) });
    this.stream = new ResilientEventStream(
      upstream.client,
      target,
      {
        onConfirmed: (again) => {
          if (again) {
            log.warn(context(), 'upstream event stream re-established');
            return;
          }
          for (const w of this.waiters.splice(0)) w.confirmed(this);
        },
        onEvent: (data, encoded) => {
          const event = decodePubsubEvent(data, encoded, this.name);
          if (!event) return log.debug({ ...context(), event: data.slice(0, 100) }, 'unexpected event ignored');
          // A channel is ours, byte for byte.
          if (event.type === 'message') this.owner.deliverMessage(this.name, event.message);
          else if (event.type === 'smessage') this.owner.deliverShardMessage(this.name, event.message);
          else if (event.type === 'pmessage') this.owner.deliverPmessage(this.name, event.channel, event.message);
        },
        onFailed: (error) => this.owner.refused(this, error),
        onDropped: (reason, attempt, delayMs) =>
          log.warn(
            { ...context(), reason, attempt, retryInMs: delayMs },
            'upstream event stream dropped; re-subscribing (messages published until it is back are missed)',
          ),
        onRefused: (error) => {
          // Like Redis, which disconnects subscribers whose channel permissions were revoked, and
          // every client of a deleted user.
          log.error(
            { ...context(), error },
            'upstream refused the event stream (token revoked or permission removed): closing the client connection',
          );
          this.owner.port.destroy();
        },
      },
      // The stream carries the credential of the connection when it subscribes (each stream is its own).
      { confirmTimeoutMs: upstream.confirmTimeoutMs, credential: this.owner.port.credential },
    );
  }

  /** Unsubscribed (or connection reset): a command still waiting for it is answered as Redis did. */
  close(): void {
    this.closed = true;
    this.stream?.close();
    for (const w of this.waiters.splice(0)) w.confirmed(this);
  }
}

/**
 * The subscriptions of a connection that made one, and the order of their messages. Made at its first
 * SUBSCRIBE, PSUBSCRIBE or SSUBSCRIBE (or UNSUBSCRIBE): most connections never subscribe, and these
 * maps and the order step weigh ~1.5 KiB each (2 000 idle connections: bench/README.md, issue 25).
 */
class Subscriptions {
  readonly channels = new Map<string, Subscription>();
  readonly patterns = new Map<string, Subscription>();
  readonly shards = new Map<string, Subscription>();
  readonly order: PubsubOrder;

  constructor(port: PushPort) {
    this.order = new PubsubOrder(
      (frame) => port.push(frame),
      (channel) => this.channels.get(channel)?.confirmed ?? false,
      undefined,
      () => this.patterns.size > 0,
    );
  }
}

class ConnectionPushes implements PushState {
  private subs: Subscriptions | undefined;
  private monitor: MonitorFeed | undefined;

  constructor(
    readonly port: PushPort,
    private readonly upstreamOrNone: PushUpstream | undefined,
  ) {}

  /** The subscriptions, made on first use. */
  private get made(): Subscriptions {
    return (this.subs ??= new Subscriptions(this.port));
  }

  /** Every subscription: RESP2 subscribe mode (Redis 7.0: CLIENT_PUBSUB) while it is above 0. */
  get subscriptionCount(): number {
    const s = this.subs;
    return s === undefined ? 0 : s.channels.size + s.patterns.size + s.shards.size;
  }

  get shardCount(): number {
    return this.subs?.shards.size ?? 0;
  }

  get channelCount(): number {
    return this.subs?.channels.size ?? 0;
  }

  get patternCount(): number {
    return this.subs?.patterns.size ?? 0;
  }

  get monitoring(): boolean {
    return this.monitor !== undefined;
  }

  handle(spec: CommandSpec, args: Buffer[], server: ServerState): void {
    switch (spec.name) {
      case 'subscribe':
        return this.subscribe('channel', args);
      case 'psubscribe':
        return this.subscribe('pattern', args);
      case 'unsubscribe':
        return this.unsubscribe('channel', args);
      case 'punsubscribe':
        return this.unsubscribe('pattern', args);
      case 'ssubscribe':
        return this.subscribe('shard', args);
      case 'sunsubscribe':
        return this.unsubscribe('shard', args);
      case 'monitor':
        return this.startMonitor(server);
      default:
        return this.port.answer(errorReply(`ERR command '${spec.name}' is not a pub/sub command`));
    }
  }

  subscribedPing(args: Buffer[]): Buffer {
    const arg = args[1] ?? Buffer.alloc(0);
    return Buffer.concat([Buffer.from(`*2\r\n$4\r\npong\r\n$${arg.length}\r\n`), arg, CRLF]);
  }

  reset(): void {
    const s = this.subs;
    if (s !== undefined) {
      s.order.flushAll();
      for (const map of [s.channels, s.patterns, s.shards]) {
        for (const sub of map.values()) sub.close();
        map.clear();
      }
    }
    this.monitor?.stop();
    this.monitor = undefined;
  }

  deliverMessage(channel: Buffer, message: Buffer): void {
    this.made.order.message(channel.toString('latin1'), message, messageFrame(this.port.protocol, WORDS.message, channel, message));
  }

  deliverPmessage(pattern: Buffer, channel: Buffer, message: Buffer): void {
    const frame = messageFrame(this.port.protocol, WORDS.pmessage, channel, message, pattern);
    this.made.order.pmessage(pattern.toString('latin1'), channel.toString('latin1'), message, frame);
  }

  deliverShardMessage(channel: Buffer, message: Buffer): void {
    this.port.push(messageFrame(this.port.protocol, WORDS.smessage, channel, message));
  }

  /** A new stream failed before its confirmation: its commands answer the error and their subscriptions are undone. */
  refused(sub: Subscription, error: string): void {
    const commands = sub.waiters.splice(0);
    this.remove(sub);
    for (const command of commands) {
      if (!command.failed(error)) continue;
      for (const other of command.created) if (!other.closed) this.remove(other, error);
    }
  }

  private mapOf(kind: Kind): Map<string, Subscription> {
    const s = this.made;
    return kind === 'channel' ? s.channels : kind === 'pattern' ? s.patterns : s.shards;
  }

  /** The count a confirmation carries: channels + patterns, or shard channels (Redis 7.0 counts them apart). */
  private countFor(kind: Kind): number {
    return kind === 'shard' ? this.shardCount : this.channelCount + this.patternCount;
  }

  private remove(sub: Subscription, error?: string): void {
    const map = this.mapOf(sub.kind);
    if (map.get(sub.key) === sub) {
      map.delete(sub.key);
      // What a stream held back is written before the confirmation of leaving it, as Redis had sent it.
      if (sub.kind === 'pattern') this.made.order.flushPattern(sub.key);
      else if (sub.kind === 'channel') this.made.order.flushChannel(sub.key);
    }
    const waiting = error === undefined ? [] : sub.waiters.splice(0);
    sub.close();
    for (const command of waiting) command.failed(error!);
  }

  private upstream(): PushUpstream | undefined {
    if (!this.upstreamOrNone) this.port.answer(NO_EVENT_STREAMS);
    return this.upstreamOrNone;
  }

  private subscribe(kind: Kind, args: Buffer[]): void {
    const upstream = this.upstream();
    if (!upstream) return;
    const map = this.mapOf(kind);
    const word = kind === 'channel' ? WORDS.subscribe : kind === 'pattern' ? WORDS.psubscribe : WORDS.ssubscribe;
    const frames: Buffer[] = [];
    const waiting = new Set<Subscription>();
    const created: Subscription[] = [];
    for (let i = 1; i < args.length; i++) {
      const name = args[i];
      const key = name.toString('latin1');
      let sub = map.get(key);
      if (!sub) {
        sub = new Subscription(kind, name, key, this);
        map.set(key, sub);
        created.push(sub);
        sub.open(upstream);
      }
      if (!sub.confirmed) waiting.add(sub);
      frames.push(confirmation(this.port.protocol, word, name, this.countFor(kind)));
    }
    const reply = frames.length === 1 ? frames[0] : Buffer.concat(frames);
    if (waiting.size === 0) return this.port.answer(reply);
    // Later requests wait for the outcome, as in Redis, which answers SUBSCRIBE before it reads the
    // next command: whether they run in subscribe mode depends on it (a refused SUBSCRIBE leaves none).
    let fill!: (reply: Buffer) => void;
    this.port.defer(new Promise<Buffer>((resolve) => (fill = resolve)));
    const command = new PendingCommand(fill, reply, waiting, created);
    for (const sub of waiting) sub.waiters.push(command);
  }

  private unsubscribe(kind: Kind, args: Buffer[]): void {
    const map = this.mapOf(kind);
    const word = kind === 'channel' ? WORDS.unsubscribe : kind === 'pattern' ? WORDS.punsubscribe : WORDS.sunsubscribe;
    const protocol = this.port.protocol;
    const frames: Buffer[] = [];
    if (args.length === 1) {
      if (map.size === 0) return this.port.answer(confirmation(protocol, word, null, this.countFor(kind)));
      for (const sub of [...map.values()]) {
        this.remove(sub);
        frames.push(confirmation(protocol, word, sub.name, this.countFor(kind)));
      }
    } else {
      for (let i = 1; i < args.length; i++) {
        const sub = map.get(args[i].toString('latin1'));
        if (sub) this.remove(sub);
        frames.push(confirmation(protocol, word, args[i], this.countFor(kind)));
      }
    }
    this.port.answer(frames.length === 1 ? frames[0] : Buffer.concat(frames));
  }

  private startMonitor(server: ServerState): void {
    if (this.monitor) return; // Redis ignores MONITOR in monitor mode: no reply at all
    const monitor = new MonitorFeed(this.port, server, this.upstreamOrNone, () => {
      if (this.monitor === monitor) this.monitor = undefined;
    });
    this.monitor = monitor;
  }
}
