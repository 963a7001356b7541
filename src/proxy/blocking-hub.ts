// Shared pollers of blocking commands. Clients blocked with the same poll command (BRPOP on the
// same keys, in the same order) wait in ONE group that polls the upstream for all of them: 100 idle
// workers on one queue cost what one costs. Each element a poll takes goes to the group's oldest
// waiter still there (Redis serves the client blocked first); if every waiter has gone meanwhile, it
// is put back where it was taken from. A write forwarded by this proxy that names a watched key
// wakes the groups on that key at once (pickup without waiting for the next poll); otherwise polls
// back off from 10 ms, doubling, up to the group's cap (--block-poll-interval).
import { PROXY_DEFAULTS } from '../config.js';
import { errorReply } from '../resp/protocol.js';
import type { BlockingPlan, BlockingRun } from './blocking.js';

export type PollFunction = (commands: Buffer[][]) => Promise<Buffer[]>;

interface Waiter {
  plan: BlockingPlan;
  done: (reply: Buffer) => void;
  finished: boolean;
  deadline: NodeJS.Timeout | undefined;
  /** CLIENT UNBLOCK or the timeout while this waiter's poll is in flight: answered when it comes back empty. */
  endWith: Buffer | undefined;
  /** The group's poll that is this waiter's first (a WRONGTYPE from it is answered; later ones are not). */
  firstPoll: number;
  /**
   * A write through this proxy to its keys was answered before its first poll was: that write came
   * after the blocking command (XREADGROUP then DEL from another connection), so the first poll's
   * error is one Redis gives a client already blocked.
   */
  writtenBeforeFirstPoll: boolean;
}

interface Group {
  id: string;
  /** Creation order: groups woken together poll in this order (Redis serves the client blocked first). */
  created: number;
  /** The plan of the first waiter (every waiter of a shared group has the same poll). */
  plan: BlockingPlan;
  command: Buffer[];
  keys: string[];
  /** Pops share the group; XREAD/XREADGROUP have a group of their own. */
  shared: boolean;
  waiters: Waiter[];
  timer: NodeJS.Timeout | undefined;
  inFlight: boolean;
  /** A write touched a key while a poll was in flight: poll again as soon as it is back. */
  woken: boolean;
  interval: number;
  maxIntervalMs: number;
  /** Polls started so far. */
  polls: number;
}

const NULL_ARRAY = Buffer.from('*-1\r\n');
/** blocked.c: what a client blocked in XREADGROUP gets when its stream goes or its group is destroyed. */
const STREAM_GONE = errorReply('UNBLOCKED the stream key no longer exists');
const GROUP_GONE = errorReply('NOGROUP the consumer group this client was blocked on no longer exists');
/** Commands that empty the database: every group polls at once (they name no key). */
const FLUSHES = new Set(['flushall', 'flushdb']);

function isNull(reply: Buffer): boolean {
  return reply.length <= 5 && (reply.equals(NULL_ARRAY) || reply.toString('latin1') === '$-1\r\n' || reply.toString('latin1') === '_\r\n');
}

export class BlockingHub {
  private readonly groups = new Map<string, Group>();
  /** Watched key (latin1) → groups polling it. */
  private readonly byKey = new Map<string, Set<Group>>();
  /** Key → waiters whose commands run before their first poll (XREAD `$`), not in a group yet. */
  private readonly preparing = new Map<string, Set<Waiter>>();
  private privateIds = 0;
  private created = 0;
  /** Groups woken by a write, polled together in one call at the next turn, oldest first. */
  private readonly wokenGroups = new Set<Group>();
  private wakeTimer: NodeJS.Timeout | undefined;
  /** Groups waiting for another group's poll on a shared key to come back (pollGroups). */
  private readonly keyWait = new Set<Group>();
  /** Counters for tests, INFO and the benchmark. */
  readonly stats = { polls: 0, wakeups: 0, restored: 0 };

  constructor(private readonly poll: PollFunction) {}

  /** Clients blocked now. */
  get blockedClients(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.waiters.length;
    return n;
  }

  /** Groups (= upstream pollers) alive now. */
  get pollers(): number {
    return this.groups.size;
  }

  /** True when some group watches keys (the batcher skips `written` otherwise). */
  get watching(): boolean {
    return this.byKey.size > 0 || this.preparing.size > 0;
  }

  /** Blocks a client; `done` is called once, asynchronously, unless cancelled. */
  wait(plan: BlockingPlan, maxIntervalMs: number, done: (reply: Buffer) => void): BlockingRun {
    const waiter: Waiter = {
      plan,
      done,
      finished: false,
      deadline: undefined,
      endWith: undefined,
      firstPoll: 0,
      writtenBeforeFirstPoll: false,
    };
    let group: Group | undefined;
    const join = (command: Buffer[]) => {
      if (waiter.finished) return;
      const shared = plan.shareable === true;
      const id = shared ? 'S' + command.map((a) => a.length + ':' + a.toString('latin1')).join('') : 'P' + ++this.privateIds;
      group = this.groups.get(id);
      if (!group) {
        group = {
          id,
          created: ++this.created,
          plan,
          command,
          keys: [...new Set((plan.keys ?? []).map((k) => k.toString('latin1')))],
          shared,
          waiters: [],
          timer: undefined,
          inFlight: false,
          woken: false,
          interval: 0,
          maxIntervalMs,
          polls: 0,
        };
        this.groups.set(id, group);
        for (const k of group.keys) {
          let set = this.byKey.get(k);
          if (!set) this.byKey.set(k, (set = new Set()));
          set.add(group);
        }
        waiter.firstPoll = 1;
        group.waiters.push(waiter);
        this.restart(group);
      } else {
        // A newcomer joins the group's rhythm: the list was empty at the last poll, and a write
        // through this proxy since then has woken the group. Restarting here would cost one poll
        // per BRPOP of every worker that re-blocks after its timeout.
        waiter.firstPoll = group.inFlight ? group.polls : group.polls + 1;
        group.waiters.push(waiter);
      }
    };
    if (plan.timeoutMs > 0) {
      waiter.deadline = setTimeout(() => {
        waiter.deadline = undefined;
        this.end(group, waiter, plan.timeoutReply);
      }, plan.timeoutMs);
    }
    if (plan.prepare) {
      const prepare = plan.prepare;
      const keys = [...new Set((plan.keys ?? []).map((k) => k.toString('latin1')))];
      for (const k of keys) {
        let set = this.preparing.get(k);
        if (!set) this.preparing.set(k, (set = new Set()));
        set.add(waiter);
      }
      void this.poll(prepare.commands).then((replies) => {
        for (const k of keys) {
          const set = this.preparing.get(k);
          set?.delete(waiter);
          if (set?.size === 0) this.preparing.delete(k);
        }
        join(prepare.apply(replies));
      });
    } else {
      join(plan.poll);
    }
    return {
      cancel: () => {
        if (waiter.finished) return;
        waiter.finished = true;
        this.leave(group, waiter);
      },
      unblock: (reply) => this.end(group, waiter, reply ?? plan.timeoutReply),
    };
  }

  /**
   * A write forwarded by this proxy was answered: groups watching any of its arguments poll now.
   * Every argument is looked up (scripts, LMPOP… carry keys anywhere): a false match costs one poll.
   */
  written(args: Buffer[]): void {
    if (args.length > 0 && args[0].length <= 8 && FLUSHES.has(args[0].toString('latin1').toLowerCase())) {
      for (const g of this.groups.values()) this.wakeGroup(g);
      for (const set of this.preparing.values()) for (const w of set) w.writtenBeforeFirstPoll = true;
      return;
    }
    for (let i = 1; i < args.length; i++) {
      const key = args[i].toString('latin1');
      for (const w of this.preparing.get(key) ?? []) w.writtenBeforeFirstPoll = true;
      const groups = this.byKey.get(key);
      if (!groups) continue;
      for (const g of groups) this.wakeGroup(g);
    }
  }

  /** `byWrite` false: a group woken while its poll was in flight, polling again now. */
  private wakeGroup(g: Group, byWrite = true): void {
    if (byWrite) {
      this.stats.wakeups++;
      // A waiter whose first poll has not come back yet (polls counts polls started).
      for (const w of g.waiters) if (w.firstPoll > g.polls || (w.firstPoll === g.polls && g.inFlight)) w.writtenBeforeFirstPoll = true;
    }
    if (g.inFlight) {
      g.woken = true;
      return;
    }
    if (g.timer) clearTimeout(g.timer);
    g.timer = undefined;
    g.interval = Math.min(PROXY_DEFAULTS.firstPollIntervalMs, g.maxIntervalMs);
    this.wokenGroups.add(g);
    this.wakeTimer ??= setTimeout(() => this.pollWoken(), 0);
  }

  /**
   * The groups a write woke poll in ONE upstream call, in the order they were created: clients blocked
   * first are served first even across groups (BRPOPLPUSH to different destinations from one list),
   * and a destination's WRONGTYPE comes before the next client's pop, as in Redis.
   */
  private pollWoken(): void {
    this.wakeTimer = undefined;
    const groups = [...this.wokenGroups].sort((a, b) => a.created - b.created);
    this.wokenGroups.clear();
    this.pollGroups(groups);
  }

  /** Ends a waiter with `reply` now, or when the poll in flight for it comes back empty. */
  private end(group: Group | undefined, waiter: Waiter, reply: Buffer): void {
    if (waiter.finished) return;
    if (group && group.inFlight && group.waiters[0] === waiter) {
      waiter.endWith = reply; // data taken by that poll wins (never dropped)
      return;
    }
    this.finish(waiter, reply);
    this.leave(group, waiter);
  }

  private finish(waiter: Waiter, reply: Buffer): void {
    if (waiter.finished) return;
    waiter.finished = true;
    if (waiter.deadline) clearTimeout(waiter.deadline);
    waiter.deadline = undefined;
    waiter.done(reply);
  }

  private leave(group: Group | undefined, waiter: Waiter): void {
    if (waiter.deadline) clearTimeout(waiter.deadline);
    waiter.deadline = undefined;
    if (!group) return;
    const i = group.waiters.indexOf(waiter);
    if (i >= 0) group.waiters.splice(i, 1);
    if (group.waiters.length === 0 && !group.inFlight) this.drop(group);
  }

  private drop(group: Group): void {
    if (group.timer) clearTimeout(group.timer);
    group.timer = undefined;
    this.wokenGroups.delete(group);
    this.keyWait.delete(group);
    // A group dropped earlier may share its id with a newer one: only this group's entry goes.
    if (this.groups.get(group.id) === group) this.groups.delete(group.id);
    for (const k of group.keys) {
      const set = this.byKey.get(k);
      set?.delete(group);
      if (set?.size === 0) this.byKey.delete(k);
    }
  }

  /** Polls at once (asynchronously), the backoff starting over. */
  private restart(group: Group): void {
    if (group.timer) clearTimeout(group.timer);
    group.interval = Math.min(PROXY_DEFAULTS.firstPollIntervalMs, group.maxIntervalMs);
    group.timer = setTimeout(() => this.step(group), 0);
  }

  private step(group: Group): void {
    group.timer = undefined;
    this.pollGroups([group]);
  }

  /**
   * Polls `groups` in one upstream call, in that order. A group that shares a key with a group whose
   * poll is in flight waits for it: polls of one key never overlap, so clients are served in the
   * order they blocked even across groups (Redis serves the client blocked first).
   */
  private pollGroups(groups: Group[]): void {
    const live: Group[] = [];
    for (const g of groups) {
      if (g.inFlight) g.woken = true;
      else if (g.waiters.length === 0) this.drop(g);
      else if (this.keyBusy(g)) this.keyWait.add(g);
      else live.push(g);
    }
    if (live.length === 0) return;
    const seqs = live.map((g) => {
      g.inFlight = true;
      g.woken = false;
      this.stats.polls++;
      return ++g.polls;
    });
    void this.poll(live.map((g) => g.command)).then((replies) => {
      live.forEach((g, i) => {
        g.inFlight = false;
        this.answered(g, replies[i] ?? errorReply('ERR upstream sent no reply for this command'), seqs[i]);
      });
      this.releaseKeyWaiters();
    });
  }

  /** Another group on one of this group's keys has a poll in flight. */
  private keyBusy(group: Group): boolean {
    for (const k of group.keys) for (const other of this.byKey.get(k) ?? []) if (other !== group && other.inFlight) return true;
    return false;
  }

  /** A poll came back: the groups that waited for it poll now (together, oldest first). */
  private releaseKeyWaiters(): void {
    if (this.keyWait.size === 0) return;
    for (const g of this.keyWait) this.wokenGroups.add(g);
    this.keyWait.clear();
    this.wakeTimer ??= setTimeout(() => this.pollWoken(), 0);
  }

  private answered(group: Group, reply: Buffer, seq: number, checked = false): void {
    if (group.plan.endsWhenStreamLost && this.streamLost(group, reply, seq)) return;
    const wrongType = reply.subarray(0, 10).toString('latin1') === '-WRONGTYPE';
    const destination = group.plan.destination;
    if (wrongType && destination && !checked && group.waiters.some((w) => w.firstPoll < seq)) {
      // BLMOVE/BRPOPLPUSH already blocked: the destination's WRONGTYPE is answered (the element stays
      // in the source, as in Redis), the source's is not (below). TYPE of the destination tells which
      // (the source may have been emptied by another client meanwhile; the destination stays).
      group.inFlight = true;
      void this.poll([[Buffer.from('TYPE'), destination]]).then(([type]) => {
        group.inFlight = false;
        if (/list|none/.test(type?.toString('latin1') ?? 'none')) this.answered(group, reply, seq, true);
        else {
          for (const w of group.waiters.splice(0)) this.finish(w, reply);
          this.drop(group);
        }
        this.releaseKeyWaiters();
      });
      return;
    }
    if (wrongType) {
      // Redis checks the type when the command is called; a client already blocked is not answered
      // when the key later holds another type (it waits for the key to become a list/zset/stream again).
      // A waiter whose first poll a write through this proxy overtook (the write came after its command) is blocked already.
      const fresh = group.waiters.filter((w) => w.firstPoll >= seq && !w.writtenBeforeFirstPoll);
      for (const w of fresh) this.finish(w, reply);
      group.waiters = group.waiters.filter((w) => !w.finished);
      reply = NULL_ARRAY;
    }
    const head = group.waiters[0] as Waiter | undefined;
    if (reply[0] === 0x2d /* '-' */) {
      // WRONGTYPE, a bad argument, the upstream failing: every waiter of this command gets it, as
      // each would from its own call.
      for (const w of group.waiters.splice(0)) this.finish(w, reply);
      return this.drop(group);
    }
    if (!isNull(reply)) {
      if (head) {
        group.waiters.shift();
        this.finish(head, reply);
        for (const k of head.plan.wakes ?? []) this.written([Buffer.alloc(0), k]);
      } else {
        this.giveBack(group, reply);
      }
      if (group.waiters.length === 0) return this.drop(group);
      return this.restart(group); // more elements may be there for the next waiter
    }
    if (head?.endWith) {
      group.waiters.shift();
      this.finish(head, head.endWith);
    }
    if (group.waiters.length === 0) return this.drop(group);
    if (group.woken) return this.wakeGroup(group, false); // in order with the other groups woken
    group.timer = setTimeout(() => this.step(group), group.interval);
    group.interval = Math.min(group.interval * 2, group.maxIntervalMs);
  }

  /**
   * XREADGROUP already blocked (a private group: one waiter): the poll's WRONGTYPE means the stream
   * key now holds another type, its NOGROUP that the key or the group is gone; one TYPE per stream
   * tells which (a stream still there lost its group). True when the waiter is being answered so.
   */
  private streamLost(group: Group, reply: Buffer, seq: number): boolean {
    const head = group.waiters[0] as Waiter | undefined;
    if (!head || (head.firstPoll >= seq && !head.writtenBeforeFirstPoll)) return false;
    const prefix = reply.subarray(0, 10).toString('latin1');
    const finishAll = (error: Buffer) => {
      for (const w of group.waiters.splice(0)) this.finish(w, error);
      this.drop(group);
    };
    if (prefix === '-WRONGTYPE') {
      finishAll(STREAM_GONE);
      return true;
    }
    if (!prefix.startsWith('-NOGROUP ')) return false;
    group.inFlight = true;
    void this.poll((group.plan.keys ?? []).map((k) => [Buffer.from('TYPE'), k])).then((types) => {
      group.inFlight = false;
      finishAll(types.every((t) => t.toString('latin1').includes('stream')) ? GROUP_GONE : STREAM_GONE);
      this.releaseKeyWaiters();
    });
    return true;
  }

  /** Every waiter left while the poll that took this data was in flight: put it back. */
  private giveBack(group: Group, reply: Buffer): void {
    const commands = group.plan.restore?.(reply);
    if (!commands || commands.length === 0) return;
    this.stats.restored++;
    void this.poll(commands);
  }
}

/**
 * One client's blocking command polled on its own (a private hub). The proxy uses one BlockingHub
 * for all its connections (batcher.ts), which shares pollers; this is the same loop for one client.
 */
export function runBlocking(
  plan: BlockingPlan,
  poll: (commands: Buffer[][]) => Promise<Buffer[]>,
  maxIntervalMs: number,
  done: (reply: Buffer) => void,
): BlockingRun {
  return new BlockingHub(poll).wait(plan, maxIntervalMs, done);
}
