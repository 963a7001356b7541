// The order of `message` and `pmessage` of one connection. Redis delivers a PUBLISH to the channel's
// subscribers first, then to the patterns' (pubsub.c pubsubPublishMessage), so a client subscribed
// to a channel and to a pattern that matches it reads `message` before `pmessage`. Through the proxy
// the two come from two upstream event streams, in whatever order they arrive. This step restores
// Redis' order: a pmessage whose channel the connection also subscribes to waits until the channel's
// stream has delivered the same message; each pattern's later events wait behind it (a stream's own
// order is kept). If that message never comes (it was published before the channel's stream was
// confirmed, or while it was re-established) the pmessage goes out after `holdMs`.
//
// Pure: frames in, frames out through `emit`; timers only for the hold.

interface Held {
  channel: string;
  payload: Buffer;
  frame: Buffer;
  /** Only the head of a pattern's queue waits for its message; the others wait behind it. */
  waitsForMessage: boolean;
}

/** A message the channel stream delivered that some pattern's pmessage may still follow. */
interface Delivered {
  payload: Buffer;
  at: number;
  /** Patterns whose pmessage of this publish came already. */
  seenBy: Set<string>;
}

/** How many delivered messages per channel are remembered for pmessages still on their way. */
const REMEMBERED = 256;

export class PubsubOrder {
  /** Per pattern: its pmessages not written yet, oldest first. */
  private readonly queues = new Map<string, Held[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Per channel: recent messages, for pmessages that arrive after their message. */
  private readonly delivered = new Map<string, Delivered[]>();

  constructor(
    private readonly emit: (frame: Buffer) => void,
    /** Whether the connection has a confirmed subscription to this channel (its message will come). */
    private readonly subscribedTo: (channel: string) => boolean,
    private readonly holdMs = 200,
    /** Whether the connection subscribes to any pattern: without one, a message is only written. */
    private readonly hasPatterns: () => boolean = () => true,
  ) {}

  /** A `message` of `channel`: written now; pmessages waiting for it follow. */
  message(channel: string, payload: Buffer, frame: Buffer): void {
    this.emit(frame);
    if (this.queues.size === 0 && !this.hasPatterns()) return;
    const entry: Delivered = { payload, at: Date.now(), seenBy: new Set() };
    for (const [pattern, queue] of this.queues) {
      const head = queue[0];
      if (head.waitsForMessage && head.channel === channel && head.payload.equals(payload)) {
        entry.seenBy.add(pattern);
        this.release(pattern);
      }
    }
    let list = this.delivered.get(channel);
    if (!list) this.delivered.set(channel, (list = []));
    list.push(entry);
    const horizon = Date.now() - 10 * this.holdMs;
    while (list.length > REMEMBERED || (list.length > 0 && list[0].at < horizon)) list.shift();
  }

  /** A `pmessage` of `pattern` for `channel`: written now, or held until its message is out. */
  pmessage(pattern: string, channel: string, payload: Buffer, frame: Buffer): void {
    const queue = this.queues.get(pattern);
    if (queue) {
      queue.push({ channel, payload, frame, waitsForMessage: false });
      return;
    }
    if (!this.mustWait(pattern, channel, payload)) return this.emit(frame);
    this.queues.set(pattern, [{ channel, payload, frame, waitsForMessage: true }]);
    this.startTimer(pattern);
  }

  /** The pattern is left (PUNSUBSCRIBE, RESET): what it holds goes out first, as Redis had sent it. */
  flushPattern(pattern: string): void {
    const queue = this.queues.get(pattern);
    if (!queue) return;
    this.stopTimer(pattern);
    this.queues.delete(pattern);
    for (const held of queue) this.emit(held.frame);
  }

  /** The channel is left: pmessages waiting for its messages wait no longer. */
  flushChannel(channel: string): void {
    this.delivered.delete(channel);
    for (const [pattern, queue] of [...this.queues]) if (queue[0].channel === channel) this.release(pattern);
  }

  /** Everything held goes out (RESET, disconnect). */
  flushAll(): void {
    for (const pattern of [...this.queues.keys()]) this.flushPattern(pattern);
    this.delivered.clear();
  }

  /** Whether a pmessage must wait for the message of the same publish (and is not already after it). */
  private mustWait(pattern: string, channel: string, payload: Buffer): boolean {
    if (!this.subscribedTo(channel)) return false;
    const list = this.delivered.get(channel);
    const index = list?.findIndex((d) => !d.seenBy.has(pattern) && d.payload.equals(payload)) ?? -1;
    if (index < 0) return true;
    // Its message is out; older ones this pattern never matched were missed by its stream.
    list![index].seenBy.add(pattern);
    return false;
  }

  /** The head of the pattern's queue goes out, then what follows it until one must wait again. */
  private release(pattern: string): void {
    const queue = this.queues.get(pattern);
    if (!queue) return;
    this.stopTimer(pattern);
    this.emit(queue.shift()!.frame);
    while (queue.length > 0) {
      const next = queue[0];
      if (this.mustWait(pattern, next.channel, next.payload)) {
        next.waitsForMessage = true;
        return this.startTimer(pattern);
      }
      this.emit(queue.shift()!.frame);
    }
    this.queues.delete(pattern);
  }

  private startTimer(pattern: string): void {
    const timer = setTimeout(() => {
      this.timers.delete(pattern);
      this.release(pattern);
    }, this.holdMs);
    timer.unref();
    this.timers.set(pattern, timer);
  }

  private stopTimer(pattern: string): void {
    clearTimeout(this.timers.get(pattern));
    this.timers.delete(pattern);
  }
}
