// Blocking commands emulated by polling (the REST upstream answers every command at once).
// Each poll is ONE non-blocking, atomic upstream command whose reply is exactly what the blocking
// command answers when data is there; a null reply means "nothing yet": wait, then poll again, with
// an interval growing from 10 ms ×2 up to a cap (--block-poll-interval), until the timeout.
import type { CommandSpec } from '../commands/table.js';
import { lower } from '../resp/args.js';
import { errorReply } from '../resp/protocol.js';

export interface BlockingPlan {
  /** The command polled (non-blocking form). */
  poll: Buffer[];
  /** XREAD `$`: commands run once before the first poll; `apply` turns their replies into the poll command. */
  prepare?: { commands: Buffer[][]; apply(replies: Buffer[]): Buffer[] };
  /** 0 = wait forever. */
  timeoutMs: number;
  /** RESP2 reply on timeout (Redis 7.0: a null array for every blocking command). */
  timeoutReply: Buffer;
  /** Keys whose writes (through this proxy) wake the poller at once. */
  keys?: Buffer[];
  /** Pops: clients with the same poll share one poller (blocking-hub.ts); each element goes to one of them. */
  shareable?: boolean;
  /** Keys this command writes when it gets data (BLMOVE's destination): their pollers are woken. */
  wakes?: Buffer[];
  /** The commands that put back what a poll took when no client is left to take it. */
  restore?: (reply: Buffer) => Buffer[][] | undefined;
  /**
   * XREADGROUP: once blocked, a stream that is deleted or changes type ends the wait with Redis'
   * UNBLOCKED error, a destroyed group with its NOGROUP one (blocked.c), not with the poll's error.
   */
  endsWhenStreamLost?: boolean;
  /**
   * BLMOVE/BRPOPLPUSH: a poll's WRONGTYPE is the source's or the destination's. Redis answers a blocked
   * client the destination's (when an element arrives) but not the source's (it waits): when this key
   * (the destination) holds another type than a list, the WRONGTYPE is taken as the destination's.
   */
  destination?: Buffer;
}

export interface BlockingRun {
  /** Stops polling without a reply (the connection is gone). */
  cancel(): void;
  /**
   * CLIENT UNBLOCK: ends the wait with `reply` (default: the timeout reply). A poll already in flight
   * finishes first, and if it took data the client gets that data (an element popped upstream is never dropped).
   */
  unblock(reply?: Buffer): void;
}

const NULL_ARRAY = Buffer.from('*-1\r\n');
const SYNTAX_ERROR = errorReply('ERR syntax error');

/** Pops from the first non-empty key of KEYS; WRONGTYPE for the first key of another type (like Redis). */
const POP_SCRIPT = `for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k)['ok']
  if t == ARGV[2] then
    local r = redis.call(ARGV[1], k)
    if t == 'list' then return {k, r} end
    return {k, r[1], r[2]}
  end
  if t ~= 'none' then return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
end
return false`;

const b = (s: string) => Buffer.from(s);

/** getTimeoutFromObjectOrReply of Redis 7.0, unit seconds (a long double): ms, or an error reply. */
export function parseSecondsTimeout(arg: Buffer): number | Buffer {
  const s = arg.toString('latin1');
  let value: number;
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) value = Number(s);
  else if (/^[+-]?inf(inity)?$/i.test(s)) value = s.startsWith('-') ? -Infinity : Infinity;
  else return errorReply('ERR timeout is not a float or out of range');
  const ms = value * 1000;
  // (long long) of an out-of-range long double is LLONG_MIN on x86: "negative".
  if (!Number.isFinite(ms) || ms >= 2 ** 63 || ms < 0) {
    if (ms > -1 && ms < 0) return 0; // truncates to 0
    return errorReply('ERR timeout is negative');
  }
  return Math.trunc(ms);
}

/** Unit milliseconds (XREAD BLOCK): a long long. */
function parseMillisTimeout(arg: Buffer): number | Buffer {
  const s = arg.toString('latin1');
  if (!/^(0|-?[1-9]\d*)$/.test(s) || BigInt(s) > 2n ** 63n - 1n || BigInt(s) < -(2n ** 63n)) {
    return errorReply('ERR timeout is not an integer or out of range');
  }
  const n = Number(s);
  if (n < 0) return errorReply('ERR timeout is negative');
  return n;
}

/** The polling plan of a blocking command, or the error reply Redis answers before blocking. */
export function planBlocking(spec: CommandSpec, args: Buffer[]): BlockingPlan | Buffer {
  const name = spec.name;
  switch (name) {
    case 'blpop':
    case 'brpop':
    case 'bzpopmin':
    case 'bzpopmax': {
      const timeout = parseSecondsTimeout(args[args.length - 1]);
      if (Buffer.isBuffer(timeout)) return timeout;
      const keys = args.slice(1, -1);
      const [pop, type] =
        name === 'blpop'
          ? ['LPOP', 'list']
          : name === 'brpop'
            ? ['RPOP', 'list']
            : name === 'bzpopmin'
              ? ['ZPOPMIN', 'zset']
              : ['ZPOPMAX', 'zset'];
      const restore = (reply: Buffer) => {
        const r = parseReply(reply);
        if (!Array.isArray(r) || !Buffer.isBuffer(r[0]) || !Buffer.isBuffer(r[1])) return undefined;
        if (type === 'list') return [[b(pop === 'LPOP' ? 'LPUSH' : 'RPUSH'), r[0], r[1]]];
        return Buffer.isBuffer(r[2]) ? [[b('ZADD'), r[0], r[2], r[1]]] : undefined;
      };
      return {
        poll: [b('EVAL'), b(POP_SCRIPT), b(String(keys.length)), ...keys, b(pop), b(type)],
        timeoutMs: timeout,
        timeoutReply: NULL_ARRAY,
        keys,
        shareable: true,
        restore,
      };
    }
    case 'blmove': {
      for (const where of [args[3], args[4]]) if (!['left', 'right'].includes(lower(where))) return SYNTAX_ERROR;
      const timeout = parseSecondsTimeout(args[5]);
      if (Buffer.isBuffer(timeout)) return timeout;
      const [src, dst, from, to] = args.slice(1, 5);
      return {
        poll: [b('LMOVE'), src, dst, from, to],
        timeoutMs: timeout,
        timeoutReply: NULL_ARRAY,
        keys: [src],
        wakes: [dst],
        shareable: true,
        restore: () => [[b('LMOVE'), dst, src, to, from]],
        destination: dst,
      };
    }
    case 'brpoplpush': {
      const timeout = parseSecondsTimeout(args[3]);
      if (Buffer.isBuffer(timeout)) return timeout;
      const [src, dst] = [args[1], args[2]];
      return {
        poll: [b('RPOPLPUSH'), src, dst],
        timeoutMs: timeout,
        timeoutReply: NULL_ARRAY,
        keys: [src],
        wakes: [dst],
        shareable: true,
        restore: () => [[b('LMOVE'), dst, src, b('LEFT'), b('RIGHT')]],
        destination: dst,
      };
    }
    case 'blmpop':
    case 'bzmpop': {
      const timeout = parseSecondsTimeout(args[1]);
      if (Buffer.isBuffer(timeout)) return timeout;
      const poll = [b(name === 'blmpop' ? 'LMPOP' : 'ZMPOP'), ...args.slice(2)];
      const numkeys = Number(args[2].toString('latin1'));
      const keys = Number.isInteger(numkeys) && numkeys > 0 ? args.slice(3, 3 + numkeys) : [];
      const where = lower(args[3 + numkeys] ?? Buffer.alloc(0));
      const restore = (reply: Buffer) => {
        const r = parseReply(reply);
        if (!Array.isArray(r) || !Buffer.isBuffer(r[0]) || !Array.isArray(r[1])) return undefined;
        const [key, items] = [r[0], r[1]];
        if (name === 'blmpop') {
          // Popped in order from one end: pushed back in reverse order to the same end.
          return [[b(where === 'left' ? 'LPUSH' : 'RPUSH'), key, ...(items as Buffer[]).slice().reverse()]];
        }
        const zadd: Buffer[] = [b('ZADD'), key];
        for (const pair of items as Parsed[][]) zadd.push(pair[1] as Buffer, pair[0] as Buffer);
        return [zadd];
      };
      return { poll, timeoutMs: timeout, timeoutReply: NULL_ARRAY, keys, shareable: true, restore };
    }
    case 'xread':
    case 'xreadgroup':
      return planXread(name === 'xreadgroup', args);
    default:
      // WAIT: replication is not observable through REST.
      return errorReply(
        `ERR blocking command '${name}' is not supported by respgate: replication is not observable through the REST upstream`,
      );
  }
}

/**
 * XREAD/XREADGROUP … BLOCK ms … STREAMS: the options are walked like Redis' xreadCommand so that the
 * BLOCK error comes in Redis' order; the poll is the command without BLOCK (other errors come from it).
 */
function planXread(group: boolean, args: Buffer[]): BlockingPlan | Buffer {
  const poll: Buffer[] = [args[0]];
  let timeout: number | undefined;
  let deferred = false; // an earlier option is wrong: the upstream answers its error
  let streams = -1;
  let i = 1;
  for (; i < args.length; i++) {
    const opt = lower(args[i]);
    const more = args.length - i - 1;
    if (opt === 'block' && more > 0) {
      if (!deferred) {
        const t = parseMillisTimeout(args[i + 1]);
        if (Buffer.isBuffer(t)) return t;
        timeout = t;
      }
      i++;
      continue;
    }
    if (opt === 'streams' && more > 0) {
      streams = poll.length;
      break;
    }
    if (opt === 'count' && more > 0) {
      if (!/^(0|-?[1-9]\d*)$/.test(args[i + 1].toString('latin1'))) deferred = true;
      poll.push(args[i], args[i + 1]);
      i++;
      continue;
    }
    if (group && opt === 'group' && more >= 2) {
      poll.push(args[i], args[i + 1], args[i + 2]);
      i += 2;
      continue;
    }
    if (group && opt === 'noack') {
      poll.push(args[i]);
      continue;
    }
    if (group && opt === 'claim' && more > 0) {
      // Redis 8.4's CLAIM min-idle-time: the poll keeps it; a bad value is the upstream's error, in order.
      if (!/^(0|[1-9]\d*)$/.test(args[i + 1].toString('latin1'))) deferred = true;
      poll.push(args[i], args[i + 1]);
      i++;
      continue;
    }
    deferred = true; // syntax error: the upstream says so
    poll.push(...args.slice(i));
    i = args.length;
    break;
  }
  if (i < args.length) poll.push(...args.slice(i));
  // XREAD is not a pop (every reader gets the entries) and XREADGROUP names its consumer: each has a
  // poller of its own, woken by writes to its streams.
  const keys: Buffer[] = [];
  if (streams >= 0) {
    const names = poll.slice(streams + 1);
    keys.push(...names.slice(0, Math.floor(names.length / 2)));
  }
  const plan: BlockingPlan = { poll, timeoutMs: timeout ?? 0, timeoutReply: NULL_ARRAY, keys };
  if (group) plan.endsWhenStreamLost = true;
  if (group || deferred || streams < 0) return plan;
  // XREAD `$`: the stream's last id, resolved once now, so that only entries added later are read.
  const rest = poll.length - streams - 1;
  if (rest <= 0 || rest % 2 !== 0) return plan;
  const n = rest / 2;
  const firstKey = streams + 1;
  const firstId = firstKey + n;
  const dollars: number[] = [];
  for (let k = 0; k < n; k++) if (poll[firstId + k].toString('latin1') === '$') dollars.push(k);
  if (dollars.length === 0) return plan;
  plan.prepare = {
    commands: dollars.map((k) => [b('XREVRANGE'), poll[firstKey + k], b('+'), b('-'), b('COUNT'), b('1')]),
    apply: (replies) => {
      const out = poll.slice();
      dollars.forEach((k, j) => {
        const r = replies[j].toString('latin1');
        // No stream (none yet, or another type now: the poll answers that type's WRONGTYPE if it is
        // still there; a stream made later has only new entries): from the start.
        if (r.startsWith('*0\r\n') || r.startsWith('-')) out[firstId + k] = b('0-0');
        else {
          const m = /^\*1\r\n\*2\r\n\$\d+\r\n([^\r]+)\r\n/.exec(r);
          if (m) out[firstId + k] = b(m[1]);
        }
      });
      return out;
    },
  };
  return plan;
}

type Parsed = Buffer | null | bigint | Parsed[];

/** A RESP2 reply as nested arrays of bulk strings (enough for the pop replies put back by `restore`). */
export function parseReply(reply: Buffer): Parsed | undefined {
  let at = 0;
  const line = () => {
    const end = reply.indexOf('\r\n', at, 'latin1');
    if (end < 0) throw new RangeError('truncated reply');
    const text = reply.toString('latin1', at + 1, end);
    const type = reply[at];
    at = end + 2;
    return { type, text };
  };
  const value = (): Parsed => {
    const { type, text } = line();
    if (type === 0x24 /* $ */) {
      const n = Number(text);
      if (n < 0) return null;
      const out = reply.subarray(at, at + n);
      at += n + 2;
      return out;
    }
    if (type === 0x2a /* * */) {
      const n = Number(text);
      if (n < 0) return null;
      const out: Parsed[] = [];
      for (let i = 0; i < n; i++) out.push(value());
      return out;
    }
    if (type === 0x3a /* : */) return BigInt(text);
    return Buffer.from(text, 'latin1');
  };
  try {
    return value();
  } catch {
    return undefined;
  }
}
