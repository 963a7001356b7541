// Where the real service differs from Redis 7.0.15, as the official SDK's tests show it, and commands
// newer than 7.0.15 that the SDK exposes. Each is either rewritten into an atomic equivalent that
// redis-server 7.0.15 runs (a Lua script sent whole with EVAL, so nothing has to be loaded first) or
// answered with an error that says what is missing and how to get it. Choices: docs/platform-kv.md
// "Commands newer than Redis 7.0.15 and the service's leniencies".
import type { Arg } from '../../resp/request-writer.js';

export type CompatPlan = { command: Arg[] } | { error: string };

/** The data store's redis_version as [major, minor, patch]. */
export type ServerVersion = [number, number, number];

export function parseServerVersion(info: string): ServerVersion {
  const m = /redis_version:(\d+)\.(\d+)\.(\d+)/.exec(info);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [7, 0, 15];
}

/** Whether the data store runs this (lowercase) command itself; false for commands compat.ts does not know. */
export function runsNatively(name: string, server: ServerVersion): boolean {
  return Object.hasOwn(NATIVE_SINCE, name) && atLeast(server, NATIVE_SINCE[name]);
}

function atLeast(v: ServerVersion, min: ServerVersion): boolean {
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i] > min[i];
  return true;
}

/** The Redis version that has each emulated command natively. */
const NATIVE_SINCE: Record<string, ServerVersion> = {
  hexpire: [7, 4, 0],
  hpexpire: [7, 4, 0],
  hexpireat: [7, 4, 0],
  hpexpireat: [7, 4, 0],
  httl: [7, 4, 0],
  hpttl: [7, 4, 0],
  hexpiretime: [7, 4, 0],
  hpexpiretime: [7, 4, 0],
  hpersist: [7, 4, 0],
  hgetdel: [8, 0, 0],
  hgetex: [8, 0, 0],
  hsetex: [8, 0, 0],
  xdelex: [8, 2, 0],
  xackdel: [8, 2, 0],
};

const text = (a: Arg): string => (typeof a === 'string' ? a : a.toString('latin1'));
const upper = (a: Arg): string => text(a).toUpperCase();

/** Field-level TTL (Redis 7.4+) cannot be emulated on 7.0.15: these commands get a clear error. */
const FIELD_TTL = new Set(['hexpire', 'hpexpire', 'hexpireat', 'hpexpireat', 'httl', 'hpttl', 'hexpiretime', 'hpexpiretime', 'hpersist']);

function needsNewerRedis(command: string, feature: string, since: string): string {
  return `ERR '${command}' needs ${feature} (Redis ${since}+), which the platform's redis-server 7.0.15 lacks: start the platform on a newer Redis-compatible server with --redis-server <binary> or --redis-url <url>`;
}

const arityError = (name: string) => `ERR wrong number of arguments for '${name}' command`;

/** `FIELDS numfields field…` from args[from]: the fields, or an error in Redis 8's words. */
function fieldsBlock(args: Arg[], from: number, name: string, perField = 1): { fields: Arg[] } | { error: string } {
  if (from >= args.length || upper(args[from]) !== 'FIELDS')
    return { error: 'ERR Mandatory argument FIELDS is missing or not at the right position' };
  const n = Number(text(args[from + 1] ?? ''));
  if (!Number.isInteger(n) || n <= 0) return { error: 'ERR Number of fields must be a positive integer' };
  const rest = args.slice(from + 2);
  if (rest.length !== n * perField)
    return {
      error:
        name === 'hsetex'
          ? "ERR wrong number of arguments for 'hsetex' command"
          : 'ERR The `numfields` parameter must match the number of arguments',
    };
  return { fields: rest };
}

// HGETDEL key FIELDS n field… (Redis 8.0): the values, then the fields are deleted (the key with the last one).
const HGETDEL_SCRIPT = `local vals = redis.call('HMGET', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[1], unpack(ARGV))
return vals`;

// HSETEX key [FNX|FXX] FIELDS n field value… without a TTL (Redis 8.0): 1 when the fields were set.
const HSETEX_SCRIPT = `local cond = ARGV[1]
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then n = n + 1 end
end
local fields = (#ARGV - 1) / 2
if cond == 'FNX' and n > 0 then return 0 end
if cond == 'FXX' and n < fields then return 0 end
local args = {}
for i = 2, #ARGV do args[#args + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(args))
return 1`;

// BITOP DIFF|DIFF1|ANDOR|ONE dest src… (Redis 8.2), byte by byte like Redis' other BITOP operations.
const BITOP_SCRIPT = `local op = ARGV[1]
local srcs, maxlen = {}, 0
for i = 2, #KEYS do
  local v = redis.call('GET', KEYS[i]) or ''
  srcs[#srcs + 1] = v
  if #v > maxlen then maxlen = #v end
end
if maxlen == 0 then redis.call('DEL', KEYS[1]) return 0 end
local out = {}
for p = 1, maxlen do
  local x = srcs[1]:byte(p) or 0
  local r
  if op == 'ONE' then
    local ones, twos = 0, 0
    for s = 1, #srcs do
      local b = srcs[s]:byte(p) or 0
      twos = bit.bor(twos, bit.band(ones, b))
      ones = bit.bxor(ones, b)
    end
    r = bit.band(ones, bit.band(bit.bnot(twos), 255))
  else
    local others = 0
    for s = 2, #srcs do others = bit.bor(others, srcs[s]:byte(p) or 0) end
    if op == 'DIFF' then r = bit.band(x, bit.band(bit.bnot(others), 255))
    elseif op == 'DIFF1' then r = bit.band(bit.band(bit.bnot(x), 255), others)
    else r = bit.band(x, others) end
  end
  out[p] = string.char(r)
end
redis.call('SET', KEYS[1], table.concat(out))
return maxlen`;

// XDELEX key [KEEPREF|DELREF|ACKED] IDS n id… and XACKDEL key group [policy] IDS n id… (Redis 8.2).
// Per id: -1 no such entry, 1 deleted, 2 kept because a group has not acknowledged it (ACKED).
const STREAM_DELETE_SCRIPT = `local mode, policy, group = ARGV[1], ARGV[2], ARGV[3]
local function id_cmp(a, b)
  local am, as = a:match('^(%d+)%-(%d+)$')
  local bm, bs = b:match('^(%d+)%-(%d+)$')
  if #am ~= #bm then return #am < #bm and -1 or 1 end
  if am ~= bm then return am < bm and -1 or 1 end
  if #as ~= #bs then return #as < #bs and -1 or 1 end
  if as ~= bs then return as < bs and -1 or 1 end
  return 0
end
local groups = {}
if redis.call('EXISTS', KEYS[1]) == 1 then
  groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
  if groups.err then return groups end
end
local function acked_by_all(id)
  for _, g in ipairs(groups) do
    local name, last
    for i = 1, #g, 2 do
      if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then last = g[i + 1] end
    end
    if id_cmp(id, last) > 0 then return false end
    if #redis.call('XPENDING', KEYS[1], name, id, id, 1) > 0 then return false end
  end
  return true
end
local out = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  local exists = #redis.call('XRANGE', KEYS[1], id, id) > 0
  if mode == 'ACKDEL' then redis.call('XACK', KEYS[1], group, id) end
  if not exists then
    out[#out + 1] = -1
  elseif policy == 'ACKED' and not acked_by_all(id) then
    out[#out + 1] = 2
  else
    redis.call('XDEL', KEYS[1], id)
    if policy == 'DELREF' then
      for _, g in ipairs(groups) do
        for j = 1, #g, 2 do if g[j] == 'name' then redis.call('XACK', KEYS[1], g[j + 1], id) end end
      end
    end
    out[#out + 1] = 1
  end
end
return out`;

// XREADGROUP … NOACK as the real service runs it: the entries are delivered and nothing is left behind,
// not even the consumer when this read created it (the SDK's xreadgroup test: XINFO CONSUMERS is empty
// after a NOACK read). ARGV: group, consumer, then the command's arguments after XREADGROUP.
const NOACK_SCRIPT = `local group, consumer = ARGV[1], ARGV[2]
local existed = {}
for i, key in ipairs(KEYS) do
  existed[i] = false
  local consumers = redis.pcall('XINFO', 'CONSUMERS', key, group)
  if type(consumers) == 'table' and not consumers.err then
    for _, c in ipairs(consumers) do
      for j = 1, #c, 2 do if c[j] == 'name' and c[j + 1] == consumer then existed[i] = true end end
    end
  end
end
local args = {}
for i = 3, #ARGV do args[#args + 1] = ARGV[i] end
local reply = redis.pcall('XREADGROUP', unpack(args))
if type(reply) == 'table' and reply.err then return reply end
for i, key in ipairs(KEYS) do
  if not existed[i] then redis.pcall('XGROUP', 'DELCONSUMER', key, group, consumer) end
end
return reply`;

/** XREADGROUP GROUP g c [COUNT n] NOACK STREAMS k… id…: the NOACK script; undefined without NOACK or when malformed. */
function xreadgroupNoack(command: Arg[]): CompatPlan | undefined {
  if (command.length < 7 || upper(command[1]) !== 'GROUP') return undefined;
  let noack = false;
  let streams = -1;
  for (let i = 4; i < command.length; i++) {
    const opt = upper(command[i]);
    if (opt === 'NOACK') noack = true;
    else if (opt === 'STREAMS') {
      streams = i;
      break;
    } else if (opt === 'COUNT') i++;
    else return undefined;
  }
  const rest = streams < 0 ? [] : command.slice(streams + 1);
  if (!noack || rest.length === 0 || rest.length % 2 !== 0) return undefined; // Redis answers its own errors
  return evalPlan(NOACK_SCRIPT, rest.slice(0, rest.length / 2), [command[2], command[3], ...command.slice(1)]);
}

function evalPlan(script: string, keys: Arg[], args: Arg[]): CompatPlan {
  return { command: ['EVAL', script, String(keys.length), ...keys, ...args] };
}

function streamDelete(args: Arg[], name: 'xdelex' | 'xackdel'): CompatPlan {
  const groupArg = name === 'xackdel' ? 1 : 0;
  if (args.length < 5 + groupArg) return { error: arityError(name) };
  let i = 2 + groupArg;
  let policy = 'KEEPREF';
  if (['KEEPREF', 'DELREF', 'ACKED'].includes(upper(args[i]))) policy = upper(args[i++]);
  if (upper(args[i] ?? '') !== 'IDS') return { error: 'ERR syntax error' };
  const n = Number(text(args[i + 1] ?? ''));
  if (!Number.isInteger(n) || n <= 0) return { error: 'ERR Number of IDs must be a positive integer' };
  const ids = args.slice(i + 2);
  if (ids.length !== n) return { error: 'ERR The `numids` parameter must match the number of arguments' };
  if (!ids.every((id) => /^\d+-\d+$/.test(text(id)))) return { error: 'ERR Invalid stream ID specified as stream command argument' };
  return evalPlan(
    STREAM_DELETE_SCRIPT,
    [args[1]],
    [name === 'xackdel' ? 'ACKDEL' : 'DELEX', policy, name === 'xackdel' ? args[2] : '', ...ids],
  );
}

/** The lowercase names compatPlan may rewrite or answer itself (the cases below: keep them in step). */
const COMPAT_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(NATIVE_SINCE),
  ...FIELD_TTL,
  ...['copy', 'xtrim', 'xadd', 'hgetdel', 'hgetex', 'hsetex', 'bitop', 'xdelex', 'xackdel', 'xreadgroup'],
]);

/** Whether compatPlan may change a command of this lowercase name; when false it always returns undefined. */
export function compatMayChange(name: string): boolean {
  return COMPAT_NAMES.has(name);
}

/**
 * The command to send instead of `command`, an error to answer, or undefined when Redis 7.0.15 runs the
 * command as it is.
 */
export function compatPlan(command: Arg[], server: ServerVersion = [7, 0, 15]): CompatPlan | undefined {
  if (command.length === 0 || command[0].length > 12) return undefined;
  const name = text(command[0]).toLowerCase();
  // A newer data store (--redis-server, --redis-url) runs its own commands.
  const native = NATIVE_SINCE[name];
  if (native && atLeast(server, native)) return undefined;
  if (name === 'bitop' && command.length > 1 && ['DIFF', 'DIFF1', 'ANDOR', 'ONE'].includes(upper(command[1])) && atLeast(server, [8, 2, 0]))
    return undefined;
  switch (name) {
    case 'copy':
      // The real service answers 0 (NOT_COPIED) where Redis 7.0 errors "source and destination objects are the same".
      if (
        command.length >= 3 &&
        Buffer.compare(Buffer.from(command[1]), Buffer.from(command[2])) === 0 &&
        !command.slice(3).some((a) => upper(a) === 'DB')
      ) {
        return evalPlan('return 0', [command[1]], []);
      }
      return undefined;
    case 'xtrim':
    case 'xadd':
      return exactTrim(command);
    case 'xreadgroup':
      return xreadgroupNoack(command);
    case 'hgetdel': {
      if (command.length < 5) return { error: arityError(name) };
      const f = fieldsBlock(command, 2, name);
      return 'error' in f ? f : evalPlan(HGETDEL_SCRIPT, [command[1]], f.fields);
    }
    case 'hgetex': {
      if (command.length < 5) return { error: arityError(name) };
      let i = 2;
      const opt = upper(command[i]);
      if (['EX', 'PX', 'EXAT', 'PXAT'].includes(opt)) return { error: needsNewerRedis(name, 'hash-field expiration', '8.0') };
      if (opt === 'PERSIST') i++; // no field has a TTL on 7.0.15: nothing to persist
      const f = fieldsBlock(command, i, name);
      return 'error' in f ? f : { command: ['HMGET', command[1], ...f.fields] };
    }
    case 'hsetex': {
      if (command.length < 6) return { error: arityError(name) };
      let i = 2;
      let cond = '';
      for (; i < command.length && upper(command[i]) !== 'FIELDS'; i++) {
        const opt = upper(command[i]);
        if (opt === 'FNX' || opt === 'FXX') cond = opt;
        else if (['EX', 'PX', 'EXAT', 'PXAT'].includes(opt)) return { error: needsNewerRedis(name, 'hash-field expiration', '8.0') };
        else if (opt !== 'KEEPTTL') return { error: 'ERR syntax error' };
      }
      const f = fieldsBlock(command, i, name, 2);
      return 'error' in f ? f : evalPlan(HSETEX_SCRIPT, [command[1]], [cond, ...f.fields]);
    }
    case 'bitop': {
      const op = command.length > 1 ? upper(command[1]) : '';
      if (!['DIFF', 'DIFF1', 'ANDOR', 'ONE'].includes(op)) return undefined;
      const sources = command.slice(3);
      if (command.length < 4) return { error: arityError(name) };
      if (op !== 'ONE' && sources.length < 2) return { error: `ERR BITOP ${op} must be called with at least two source keys.` };
      return evalPlan(BITOP_SCRIPT, command.slice(2), [op]);
    }
    case 'xdelex':
      return streamDelete(command, 'xdelex');
    case 'xackdel':
      return streamDelete(command, 'xackdel');
    default:
      if (FIELD_TTL.has(name)) return { error: needsNewerRedis(name, 'hash-field expiration', '7.4') };
      return undefined;
  }
}

/**
 * XTRIM/XADD with `MAXLEN ~ n` or `MINID ~ id` and no LIMIT: sent as `=`. Redis trims whole stream
 * nodes (100 entries) with `~`, so it may keep far more than asked; the real service trims to the
 * threshold (the SDK's xtrim test expects 29-31 entries of 1000 after `MAXLEN ~ 30`). Exact trimming is
 * a valid result of `~` in Redis' own terms ("at least n").
 */
function exactTrim(command: Arg[]): CompatPlan | undefined {
  if (command.some((a) => upper(a) === 'LIMIT')) return undefined;
  for (let i = 2; i + 1 < command.length; i++) {
    const opt = upper(command[i]);
    if ((opt === 'MAXLEN' || opt === 'MINID') && text(command[i + 1]) === '~') {
      const sent = [...command];
      sent[i + 1] = '=';
      return { command: sent };
    }
    if (command[0].length === 4 && upper(command[0]) === 'XADD' && (opt === '*' || /^\d/.test(opt))) return undefined; // past the options: fields
  }
  return undefined;
}
