// Blocking commands emulated by polling (the REST upstream answers every command at once).
// Each poll is ONE non-blocking, atomic upstream command whose reply is exactly what the blocking
// command answers when data is there; a null reply means "nothing yet": wait, then poll again, with
// an interval growing from 10 ms ×2 up to a cap (--block-poll-interval), until the timeout.
import type { CommandSpec } from '../commands/table.js';
import { PROXY_DEFAULTS } from '../config.js';
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
      const [pop, type] = name === 'blpop' ? ['LPOP', 'list'] : name === 'brpop' ? ['RPOP', 'list'] : name === 'bzpopmin' ? ['ZPOPMIN', 'zset'] : ['ZPOPMAX', 'zset'];
      return { poll: [b('EVAL'), b(POP_SCRIPT), b(String(keys.length)), ...keys, b(pop), b(type)], timeoutMs: timeout, timeoutReply: NULL_ARRAY };
    }
    case 'blmove': {
      for (const where of [args[3], args[4]]) if (!['left', 'right'].includes(lower(where))) return SYNTAX_ERROR;
      const timeout = parseSecondsTimeout(args[5]);
      if (Buffer.isBuffer(timeout)) return timeout;
      return { poll: [b('LMOVE'), ...args.slice(1, 5)], timeoutMs: timeout, timeoutReply: NULL_ARRAY };
    }
    case 'brpoplpush': {
      const timeout = parseSecondsTimeout(args[3]);
      if (Buffer.isBuffer(timeout)) return timeout;
      return { poll: [b('RPOPLPUSH'), args[1], args[2]], timeoutMs: timeout, timeoutReply: NULL_ARRAY };
    }
    case 'blmpop':
    case 'bzmpop': {
      const timeout = parseSecondsTimeout(args[1]);
      if (Buffer.isBuffer(timeout)) return timeout;
      return { poll: [b(name === 'blmpop' ? 'LMPOP' : 'ZMPOP'), ...args.slice(2)], timeoutMs: timeout, timeoutReply: NULL_ARRAY };
    }
    case 'xread':
    case 'xreadgroup':
      return planXread(name === 'xreadgroup', args);
    default:
      // WAIT: replication is not observable through REST.
      return errorReply(`ERR blocking command '${name}' is not supported by respgate: replication is not observable through the REST upstream`);
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
    deferred = true; // syntax error: the upstream says so
    poll.push(...args.slice(i));
    i = args.length;
    break;
  }
  if (i < args.length) poll.push(...args.slice(i));
  const plan: BlockingPlan = { poll, timeoutMs: timeout ?? 0, timeoutReply: NULL_ARRAY };
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
        if (r.startsWith('*0\r\n')) out[firstId + k] = b('0-0');
        else {
          const m = /^\*1\r\n\*2\r\n\$\d+\r\n([^\r]+)\r\n/.exec(r);
          if (m) out[firstId + k] = b(m[1]); // else (WRONGTYPE…): `$` stays, the poll answers the error
        }
      });
      return out;
    },
  };
  return plan;
}

function isNull(reply: Buffer): boolean {
  return reply.length <= 5 && (reply.equals(NULL_ARRAY) || reply.toString('latin1') === '$-1\r\n' || reply.toString('latin1') === '_\r\n');
}

/**
 * Polls until the command has data, an error, or its timeout. `poll` sends commands upstream as one
 * call (never rejects). `done` is always called asynchronously, once, unless cancelled.
 */
export function runBlocking(
  plan: BlockingPlan,
  poll: (commands: Buffer[][]) => Promise<Buffer[]>,
  maxIntervalMs: number,
  done: (reply: Buffer) => void,
): BlockingRun {
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  let unblockedWith: Buffer | undefined;
  const deadline = plan.timeoutMs > 0 ? Date.now() + plan.timeoutMs : Infinity;
  let interval = Math.min(PROXY_DEFAULTS.firstPollIntervalMs, maxIntervalMs);
  let command = plan.poll;
  const finish = (reply: Buffer) => {
    if (!cancelled) {
      cancelled = true;
      done(reply);
    }
  };
  const step = () => {
    timer = undefined;
    if (cancelled) return;
    void poll([command]).then(([reply]) => {
      if (cancelled) return;
      if (reply === undefined) return finish(errorReply('ERR upstream sent no reply for this command'));
      if (!isNull(reply)) return finish(reply);
      if (unblockedWith) return finish(unblockedWith);
      const left = deadline - Date.now();
      if (left <= 0) return finish(plan.timeoutReply);
      timer = setTimeout(step, Math.min(interval, left));
      interval = Math.min(interval * 2, maxIntervalMs);
    });
  };
  if (plan.prepare) {
    const prepare = plan.prepare;
    void poll(prepare.commands).then((replies) => {
      if (cancelled) return;
      command = prepare.apply(replies);
      step();
    });
  } else {
    // Asynchronous even for the first poll: the caller finishes its turn first.
    step();
  }
  return {
    cancel: () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    unblock: (given) => {
      if (cancelled) return;
      const reply = given ?? plan.timeoutReply;
      if (timer) {
        // Between two polls: nothing is in flight, answer now.
        clearTimeout(timer);
        timer = undefined;
        finish(reply);
      } else {
        unblockedWith = reply; // answered when the poll in flight returns empty
      }
    },
  };
}
