// Flow control per key, kept in the internal Redis so every platform process on the store shares it
// and a restart keeps it: the key's processing configuration (set by the last publish unless
// pinned), its pause flag, the fixed rate window (start, count), the deliveries in flight (leases)
// and the wait list. The engine asks `acquire` before each delivery attempt and calls `release`
// after it; each step is one Lua script, so concurrent workers never overshoot a limit. A release
// hands the freed slots to the oldest waiting messages at once (a reservation: a lease taken for
// them), so a woken message never races a newcomer for its slot and never wakes for nothing.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { FlowControlSetting } from './flow-control-value.js';

const K = {
  keys: 'rq:fc:keys',
  config: (key: string) => `rq:fc:k:${key}`,
  active: (key: string) => `rq:fc:k:${key}:active`,
  wait: (key: string) => `rq:fc:k:${key}:wait`,
};

/** A lease outlives the attempt's own timeout by this much (then a crashed holder's slot is free again). */
const LEASE_MARGIN_MS = 60_000;
/** At most this many waiting messages are woken at once (resume, reset, a released slot). */
const WAKE_MAX = 1000;
/** A slot reserved for a woken message is kept this long for it to start (then it is free again). */
const RESERVATION_MS = 60_000;

/** Count of live leases (expired ones dropped), and whether `job` holds one. Shared by the scripts. */
const LIVE_LEASES = `
local function live_leases(active, now, job)
  local all = redis.call('HGETALL', active)
  local count, holds = 0, false
  for i = 1, #all, 2 do
    if tonumber(all[i + 1]) < now then redis.call('HDEL', active, all[i])
    else
      count = count + 1
      if all[i] == job then holds = true end
    end
  end
  return count, holds
end
local function window(cfg, now, write)
  local periodMs = tonumber(redis.call('HGET', cfg, 'periodMs') or '1000')
  local start = tonumber(redis.call('HGET', cfg, 'windowStart') or '0')
  local count = tonumber(redis.call('HGET', cfg, 'windowCount') or '0')
  if now >= start + periodMs then
    start, count = now, 0
    if write then redis.call('HSET', cfg, 'windowStart', start, 'windowCount', 0) end
  end
  return start, count, periodMs
end
`;

/** Publish: the message's configuration becomes the key's (fields not pinned); a due message joins the wait list. */
const REGISTER = `
local cfg, waitKey = KEYS[1], KEYS[2]
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('HSETNX', cfg, 'createdAt', ARGV[7])
if redis.call('HGET', cfg, 'pinnedParallelism') ~= '1' then redis.call('HSET', cfg, 'parallelism', ARGV[2]) end
if redis.call('HGET', cfg, 'pinnedRate') ~= '1' then redis.call('HSET', cfg, 'rate', ARGV[3], 'periodMs', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('ZADD', waitKey, 'NX', ARGV[6], ARGV[5]) end
return 1
`;

/**
 * Before an attempt: {1} granted (a lease taken, the rate window counted, the job off the wait
 * list), or {0, why, at}: why = 'paused' | 'parallelism' | 'rate' (at = when the window ends); the
 * job is then on the wait list. A job that already holds a lease (an attempt redone after a crash)
 * keeps it without counting again.
 */
const ACQUIRE = `${LIVE_LEASES}
local cfg, active, waitKey = KEYS[1], KEYS[2], KEYS[3]
local job, now, leaseMs, score = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local count, holds = live_leases(active, now, job)
if holds then
  redis.call('HSET', active, job, now + leaseMs)
  redis.call('ZREM', waitKey, job)
  return {1}
end
if redis.call('HGET', cfg, 'paused') == '1' then
  redis.call('ZADD', waitKey, 'NX', score, job)
  return {0, 'paused', 0}
end
local parallelism = tonumber(redis.call('HGET', cfg, 'parallelism') or '0')
if parallelism > 0 and count >= parallelism then
  redis.call('ZADD', waitKey, 'NX', score, job)
  return {0, 'parallelism', 0}
end
local start, used, periodMs = window(cfg, now, true)
local rate = tonumber(redis.call('HGET', cfg, 'rate') or '0')
if rate > 0 and used >= rate then
  redis.call('ZADD', waitKey, 'NX', score, job)
  -- The n-th in the wait list is due about n / rate windows later: waiters do not all wake at once.
  local rank = redis.call('ZRANK', waitKey, job) or 0
  return {0, 'rate', start + periodMs * (1 + math.floor(rank / rate))}
end
redis.call('HINCRBY', cfg, 'windowCount', 1)
redis.call('HSET', active, job, now + leaseMs)
redis.call('ZREM', waitKey, job)
return {1}
`;

/**
 * After an attempt (ARGV[1] = the job, or '' when nothing is freed): frees its lease, then reserves
 * the free slots (parallelism and rate window allowing; none while paused) for the oldest waiting
 * jobs and answers them, to be woken. ARGV[5] = a job just put to sleep: answered too when a
 * release reserved a slot for it meanwhile (it was not asleep yet to be woken).
 */
const RELEASE = `${LIVE_LEASES}
local cfg, active, waitKey = KEYS[1], KEYS[2], KEYS[3]
local job, now, most, reserveMs, self = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
if job ~= '' then redis.call('HDEL', active, job) end
local woken = {}
if self ~= '' and redis.call('HEXISTS', active, self) == 1 then woken[1] = self end
if redis.call('HGET', cfg, 'paused') == '1' then return woken end
local count = live_leases(active, now, '')
local free = most
local parallelism = tonumber(redis.call('HGET', cfg, 'parallelism') or '0')
if parallelism > 0 then free = math.min(free, parallelism - count) end
local start, used = window(cfg, now, false)
local rate = tonumber(redis.call('HGET', cfg, 'rate') or '0')
if rate > 0 then free = math.min(free, rate - used) end
if free <= 0 then return woken end
local ids = redis.call('ZRANGE', waitKey, 0, free - 1)
if #ids == 0 then return woken end
for _, id in ipairs(ids) do
  redis.call('ZREM', waitKey, id)
  redis.call('HSET', active, id, now + reserveMs)
  woken[#woken + 1] = id
end
redis.call('HSET', cfg, 'windowStart', start, 'windowCount', used + #ids)
return woken
`;

export type WaitReason = 'paused' | 'parallelism' | 'rate';
export type Verdict = { granted: true } | { granted: false; reason: WaitReason; retryAt?: number };

/** GET /v2/flowControl/{key}: the fields of the SDK's FlowControlInfo, as the service names them. */
export interface FlowControlInfo {
  flowControlKey: string;
  waitListSize: number;
  parallelismMax: number;
  parallelismCount: number;
  rateMax: number;
  rateCount: number;
  ratePeriod: number;
  ratePeriodStart: number;
  isPaused: boolean;
  isPinnedParallelism: boolean;
  isPinnedRate: boolean;
}

export class FlowControl {
  private readonly shas: Record<string, string> = {};

  constructor(private readonly redis: Redis) {}

  /** A script on the key's config, leases and wait list (by EVALSHA; EVAL when Redis does not have it yet). */
  private run(
    script: string,
    key: string,
    args: Array<string | number>,
    keys = [K.config(key), K.active(key), K.wait(key)],
  ): Promise<unknown> {
    const sha = (this.shas[script] ??= createHash('sha1').update(script).digest('hex'));
    return this.redis.evalsha(sha, keys.length, ...keys, ...args).catch((err: Error) => {
      if (!String(err.message).startsWith('NOSCRIPT')) throw err;
      return this.redis.eval(script, keys.length, ...keys, ...args);
    });
  }

  /** A message with flow control is being persisted: its limits become the key's (unless pinned). */
  async register(s: FlowControlSetting, messageId: string, due: boolean, now: number): Promise<void> {
    const args = [s.key, s.parallelism, s.rate, s.periodS * 1000, due ? messageId : '', now, now];
    await this.run(REGISTER, s.key, args, [K.config(s.key), K.wait(s.key), K.keys]);
  }

  async acquire(key: string, messageId: string, leaseMs: number, waitingSince: number): Promise<Verdict> {
    const answer = await this.run(ACQUIRE, key, [messageId, Date.now(), leaseMs + LEASE_MARGIN_MS, waitingSince]);
    const [granted, reason, at] = answer as [number, WaitReason, number];
    if (granted === 1) return { granted: true };
    return { granted: false, reason, ...(at ? { retryAt: at } : {}) };
  }

  /**
   * Frees the message's slot (when given) and reserves the free slots for the oldest waiting
   * messages: answers them, to be woken (and `sleeper` when a slot was reserved for it meanwhile).
   */
  async release(key: string, messageId = '', sleeper = ''): Promise<string[]> {
    return (await this.run(RELEASE, key, [messageId, Date.now(), WAKE_MAX, RESERVATION_MS, sleeper])) as string[];
  }

  /** A message that will not be delivered (cancelled, its queue deleted): off the wait list, its reserved slot freed. */
  async forget(key: string, messageId: string): Promise<void> {
    await this.redis.multi().zrem(K.wait(key), messageId).hdel(K.active(key), messageId).exec();
  }

  async exists(key: string): Promise<boolean> {
    return (await this.redis.sismember(K.keys, key)) === 1;
  }

  async keys(search?: string): Promise<string[]> {
    const all = (await this.redis.smembers(K.keys)).sort();
    return search ? all.filter((k) => k.includes(search)) : all;
  }

  async info(key: string): Promise<FlowControlInfo> {
    const now = Date.now();
    const [cfg, leases, waiting] = await Promise.all([
      this.redis.hgetall(K.config(key)),
      this.redis.hvals(K.active(key)),
      this.redis.zcard(K.wait(key)),
    ]);
    const periodMs = Number(cfg.periodMs ?? 1000);
    const start = Number(cfg.windowStart ?? 0);
    const windowOpen = start > 0 && now < start + periodMs;
    return {
      flowControlKey: key,
      waitListSize: waiting,
      parallelismMax: Number(cfg.parallelism ?? 0),
      parallelismCount: leases.filter((expiry) => Number(expiry) >= now).length,
      rateMax: Number(cfg.rate ?? 0),
      rateCount: windowOpen ? Number(cfg.windowCount ?? 0) : 0,
      ratePeriod: periodMs / 1000,
      ratePeriodStart: Math.floor(start / 1000),
      isPaused: cfg.paused === '1',
      isPinnedParallelism: cfg.pinnedParallelism === '1',
      isPinnedRate: cfg.pinnedRate === '1',
    };
  }

  /** Pause or resume; a resume answers the waiting messages that may start now. */
  async setPaused(key: string, paused: boolean): Promise<string[]> {
    await this.redis
      .multi()
      .sadd(K.keys, key)
      .hset(K.config(key), 'paused', paused ? '1' : '0')
      .exec();
    return paused ? [] : this.release(key);
  }

  /** Pins parallelism and/or rate (with its period); pinning resets the rate window (as the service documents). */
  async pin(key: string, pin: { parallelism?: number; rate?: number; periodS?: number }): Promise<string[]> {
    const cfg = K.config(key);
    const fields: Record<string, string | number> = { windowStart: Date.now(), windowCount: 0 };
    if (pin.parallelism !== undefined) Object.assign(fields, { parallelism: pin.parallelism, pinnedParallelism: '1' });
    if (pin.rate !== undefined) Object.assign(fields, { rate: pin.rate, pinnedRate: '1' });
    if (pin.periodS !== undefined) Object.assign(fields, { periodMs: pin.periodS * 1000, pinnedRate: '1' });
    await this.redis.multi().sadd(K.keys, key).hset(cfg, fields).exec();
    return this.release(key);
  }

  /** Unpinning keeps the pinned values until the next publish brings its own (as the service documents). */
  async unpin(key: string, which: { parallelism: boolean; rate: boolean }): Promise<void> {
    const fields: Record<string, string> = {};
    if (which.parallelism) fields.pinnedParallelism = '0';
    if (which.rate) fields.pinnedRate = '0';
    await this.redis.multi().sadd(K.keys, key).hset(K.config(key), fields).exec();
  }

  /** Ends the current rate window now: the count is cleared and a new window starts. */
  async resetRate(key: string): Promise<string[]> {
    await this.redis.multi().sadd(K.keys, key).hset(K.config(key), { windowStart: Date.now(), windowCount: 0 }).exec();
    return this.release(key);
  }
}
