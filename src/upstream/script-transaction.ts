// MULTI … EXEC as ONE upstream EVAL, for the transactions /multi-exec cannot carry: those with
// watched keys (WATCH) and those with an argument that is not valid UTF-8 (JSON text cannot hold it).
//
// WATCH: the proxy takes a fingerprint of each watched key when WATCH runs (FINGERPRINT_SCRIPT) and
// the EXEC script first compares them with the keys' fingerprints now; if one differs, nothing runs
// and the script answers nil (the null EXEC). A fingerprint is SHA-1 of the key's DUMP (type,
// encoding and value) and its absolute expiry (PEXPIRETIME); a missing key has the empty fingerprint.
//
// The queued commands travel in the LAST argument, one binary blob (header line of decimal lengths,
// then the bytes), so that a transaction with binary arguments can go in the path form, whose raw
// body carries any byte (spec 4.2); kv-client sends it as JSON when it is valid UTF-8. The script
// runs the commands in order with redis.pcall (an error stays in its place, as in EXEC) and returns
// their replies as one array. Lua's conversion keeps bulk, status, integer and error replies and
// nesting; it turns `*-1` into `$-1` (undone by reply type in proxy/transaction.ts) and integers into
// doubles (beyond 2^53 they lose precision; docs/proxy.md).
//
// Queued scripts (EVAL, EVALSHA): a script may not call them, so this script runs their bodies itself
// (what each slot becomes is decided in transaction-scripts.ts).
import { splitReplies } from '../resp/reply-scanner.js';
import { allCommandsAndSubcommands } from '../commands/table.js';
import type { ScriptSlot } from './transaction-scripts.js';

/** The Lua function both scripts use: a key's fingerprint, '' when the key does not exist. */
const FINGERPRINT_LUA = `local function fingerprint(key)
  local dump = redis.call('DUMP', key)
  if not dump then return '' end
  return redis.sha1hex(dump) .. ':' .. redis.call('PEXPIRETIME', key)
end
`;

/** KEYS: the keys to watch. Returns one fingerprint per key. */
export const FINGERPRINT_SCRIPT = `${FINGERPRINT_LUA}local out = {}
for i = 1, #KEYS do out[i] = fingerprint(KEYS[i]) end
return out
`;

/**
 * ARGV[1]: "<scripts> <writes> <name length>… <watched> <key length> <fingerprint length>… then per
 * command its kind and lengths\n" then the bytes of every write command's name (for read-only
 * scripts; none without them), watched key, fingerprint and argument, in that order. A command
 * is `0 <argc> <arg length>…` (run with redis.pcall), `1 <numkeys> <read-only> <argc> <arg length>…`
 * (a queued script: its SHA-1, its body, its keys then its arguments: transaction-scripts.ts),
 * `3 <numkeys> <read-only> <argc> <arg length>…` (a queued FCALL: the function's name, its library's code, its
 * keys then its arguments) or `2 <message length>` (the slot's error reply). Returns nil when a watched key changed, an
 * EXECABORT error when the upstream cannot run the queued scripts (before anything ran), else the
 * array of the commands' replies.
 *
 * A queued script runs as EVAL runs it: compiled as "@user_script" (so Redis' error texts and line
 * numbers), with its own KEYS and ARGV (the tables are refilled in place: a script may not replace
 * globals), Redis' own error handler (__redis__err__handler gives the source and line), its error
 * as Redis words it ("<error> script: <sha>, on @user_script:<line>."), nil as false (a nil would end
 * the replies' table), and the RESP version it may have set put back to 2.
 */
export const TRANSACTION_SCRIPT = `${FINGERPRINT_LUA}local blob = ARGV[1]
local eol = string.find(blob, '\\n', 1, true)
local lengths = {}
for n in string.gmatch(string.sub(blob, 1, eol - 1), '%d+') do lengths[#lengths + 1] = tonumber(n) end
local pos, at = eol + 1, 1
local function number()
  local n = lengths[at]
  at = at + 1
  return n
end
local function take()
  local len = number()
  local s = string.sub(blob, pos, pos + len - 1)
  pos = pos + len
  return s
end
local scripts = number()
local writes, write_names = {}, number()
for i = 1, write_names do writes[take()] = true end
local compile = rawget(_G, 'loadstring')
if scripts > 0 and (compile == nil or not pcall(function() KEYS[1] = ''; KEYS[1] = nil end)
    or (write_names > 0 and rawget(_G, 'coroutine') == nil)) then
  return {err = 'EXECABORT Transaction discarded because of: ERR the upstream cannot run the queued scripts of a transaction with watched keys or binary arguments (its scripts lack loadstring, coroutine or a writable KEYS table)'}
end
local watched = number()
for i = 1, watched do
  local key = take()
  local expected = take()
  if fingerprint(key) ~= expected then return false end
end
local handler = rawget(_G, '__redis__err__handler') or function(e)
  if type(e) ~= 'table' then e = {err = 'ERR ' .. tostring(e)} end
  return e
end
local function refill(t, args, from, to)
  for i = #t, 1, -1 do t[i] = nil end
  for i = from, to do t[i - from + 1] = args[i] end
end
-- Read-only runs (EVAL_RO, EVALSHA_RO, no-writes): the code gets a local redis whose call and pcall
-- refuse what Redis refuses there (write and may-replicate commands: writes). Its call is a coroutine
-- (a C function to the caller, as Redis' own is): an error raised inside it reaches Redis' error
-- handler with the caller's frame, so its line is the caller's line. A coroutine ends with its error;
-- the next call gets a new one.
local READONLY = 'ERR Write commands are not allowed from read-only scripts.'
local function is_write(name, sub)
  name = string.lower(tostring(name))
  return writes[name] or (sub ~= nil and writes[name .. '|' .. string.lower(tostring(sub))])
end
local live_call
local function new_call()
  return coroutine.wrap(function(...)
    local args = {...}
    while true do
      local reply
      if is_write(args[1], args[2]) then reply = {err = READONLY} else reply = redis.pcall(unpack(args)) end
      if type(reply) == 'table' and reply.err then
        live_call = nil
        error(reply)
      end
      args = {coroutine.yield(reply)}
    end
  end)
end
local readonly_redis = setmetatable({
  pcall = function(...)
    if is_write(...) then return {err = READONLY} end
    return redis.pcall(...)
  end,
}, {__index = function(_, key)
  if key ~= 'call' then return redis[key] end
  live_call = live_call or new_call()
  return live_call
end})
-- How a queued script or function ends: its value (nil as false), or its error worded as Redis words it.
local function finish(name, ok, result)
  redis.setresp(2)
  if ok then
    if result == nil then return false end
    return result
  end
  if type(result) ~= 'table' then result = {err = 'ERR ' .. tostring(result)} end
  local message = tostring(result.err)
  if result.source and result.line then
    return {err = message .. ' script: ' .. name .. ', on ' .. result.source .. ':' .. result.line .. '.'}
  end
  return {err = message .. ' script: ' .. name}
end
local function script(args, numkeys, readonly)
  local sha, body = args[1], args[2]
  if string.sub(body, 1, 2) == '#!' then body = '--' .. string.sub(body, 3) end
  if readonly then body = 'local redis = ...; ' .. body end
  local fn, problem = compile(body, '@user_script')
  if not fn then return {err = 'ERR Error compiling script (new function): ' .. tostring(problem)} end
  refill(KEYS, args, 3, 2 + numkeys)
  refill(ARGV, args, 3 + numkeys, #args)
  if readonly then return finish(sha, xpcall(function() return fn(readonly_redis) end, handler)) end
  return finish(sha, xpcall(fn, handler))
end
-- A function: its library's code runs with a local redis whose register_function keeps the callbacks
-- (the shebang line becomes that local, so line numbers stay), then the function is called.
local function call(args, numkeys, readonly)
  local name, code = args[1], args[2]
  local callbacks = {}
  local library = setmetatable({register_function = function(a, b)
    if type(a) == 'table' then callbacks[string.lower(a.function_name)] = a.callback
    else callbacks[string.lower(a)] = b end
  end}, {__index = readonly and readonly_redis or redis})
  local eol1 = string.find(code, '\\n', 1, true)
  local chunk, problem = compile('local redis = ...' .. (eol1 and string.sub(code, eol1) or ''), '@user_function')
  if not chunk then return {err = 'ERR Error compiling function: ' .. tostring(problem)} end
  local loaded, failure = pcall(chunk, library)
  local fn = callbacks[string.lower(name)]
  if not loaded or fn == nil then return {err = 'ERR respgate could not load the library of function ' .. name .. ': ' .. tostring(failure)} end
  local keys, argv = {}, {}
  for i = 3, 2 + numkeys do keys[#keys + 1] = args[i] end
  for i = 3 + numkeys, #args do argv[#argv + 1] = args[i] end
  return finish(name, xpcall(function() return fn(keys, argv) end, handler))
end
local replies = {}
while at <= #lengths do
  local kind = number()
  if kind == 2 then
    replies[#replies + 1] = {err = take()}
  else
    local numkeys, readonly = 0, false
    if kind == 1 or kind == 3 then
      numkeys = number()
      readonly = number() == 1
    end
    local argc = number()
    local args = {}
    for i = 1, argc do args[i] = take() end
    if kind == 1 then
      replies[#replies + 1] = script(args, numkeys, readonly)
    elseif kind == 3 then
      replies[#replies + 1] = call(args, numkeys, readonly)
    else
      replies[#replies + 1] = redis.pcall(unpack(args))
    end
  end
end
return replies
`;

/**
 * Most arguments of one command the script can run: Lua's `unpack` and a C call take at most
 * LUAI_MAXCSTACK (8000) stack slots, a few of which are in use; a larger command would fail midway.
 * (A queued script's keys and arguments are not unpacked: no limit for them.)
 */
export const MAX_SCRIPT_COMMAND_ARGS = 7900;

/** Why the transaction cannot run as the script (checked before sending, so nothing runs), or undefined. */
export function scriptLimitError(slots: ScriptSlot[]): string | undefined {
  const index = slots.findIndex((s) => s.kind === 'command' && s.args.length > MAX_SCRIPT_COMMAND_ARGS);
  if (index < 0) return undefined;
  const count = (slots[index] as { args: Buffer[] }).args.length;
  return `ERR command ${index + 1} of the transaction has ${count} arguments, and a transaction with watched keys or binary arguments runs as one upstream script, whose commands take at most ${MAX_SCRIPT_COMMAND_ARGS}; split the command (the transaction was not sent)`;
}

/** Keys watched by a connection, and their fingerprints once WATCH's call has answered. */
export interface WatchedKeys {
  keys: Buffer[];
  /** Filled in by WATCH's reply, index for index; undefined until then. */
  fingerprints: (Buffer | undefined)[];
  /** A WATCH whose fingerprints could not be read: the EXEC fails (null), as for a changed key. */
  broken: boolean;
}

/** The read-only script call (EVAL_RO: also allowed to read-only tokens) that reads the fingerprints of `keys` (WATCH). */
export function fingerprintCommand(keys: Buffer[]): Buffer[] {
  return [Buffer.from('EVAL_RO'), Buffer.from(FINGERPRINT_SCRIPT), Buffer.from(String(keys.length)), ...keys];
}

/** The fingerprints in FINGERPRINT_SCRIPT's reply (an array of bulk strings), or undefined if it is not one. */
export function readFingerprints(reply: Buffer, count: number): Buffer[] | undefined {
  const header = `*${count}\r\n`;
  if (!reply.subarray(0, header.length).equals(Buffer.from(header))) return undefined;
  const items = splitReplies(reply.subarray(header.length), count);
  if (!items) return undefined;
  const out: Buffer[] = [];
  for (const item of items) {
    if (item[0] !== 0x24) return undefined;
    const start = item.indexOf(10) + 1;
    out.push(item.subarray(start, item.length - 2));
  }
  return out;
}

/** The EVAL that runs a transaction (with its watched keys' check). */
export function transactionCommand(slots: ScriptSlot[], watch: WatchedKeys | undefined): Buffer[] {
  const lengths: number[] = [slots.filter((s) => s.kind === 'script' || s.kind === 'function').length];
  const data: Buffer[] = [];
  const writes = slots.some((s) => (s.kind === 'script' || s.kind === 'function') && s.readOnly) ? writeCommands() : [];
  lengths.push(writes.length);
  for (const name of writes) {
    lengths.push(name.length);
    data.push(name);
  }
  const keys = watch?.keys ?? [];
  lengths.push(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const fingerprint = watch!.fingerprints[i] ?? Buffer.alloc(0);
    lengths.push(keys[i].length, fingerprint.length);
    data.push(keys[i], fingerprint);
  }
  for (const slot of slots) {
    let args: Buffer[];
    switch (slot.kind) {
      case 'error': {
        const message = Buffer.from(slot.message);
        lengths.push(2, message.length);
        data.push(message);
        continue;
      }
      case 'script':
        args = [Buffer.from(slot.sha), slot.body, ...slot.rest];
        lengths.push(1, slot.numkeys, slot.readOnly ? 1 : 0);
        break;
      case 'function':
        args = [Buffer.from(slot.name), slot.code, ...slot.rest];
        lengths.push(3, slot.numkeys, slot.readOnly ? 1 : 0);
        break;
      case 'command':
        args = slot.args;
        lengths.push(0);
        break;
    }
    lengths.push(args.length);
    for (const arg of args) {
      lengths.push(arg.length);
      data.push(arg);
    }
  }
  const blob = Buffer.concat([Buffer.from(lengths.join(' ') + '\n'), ...data]);
  return [Buffer.from('EVAL'), Buffer.from(TRANSACTION_SCRIPT), Buffer.from('0'), blob];
}

let writeNames: Buffer[] | undefined;

/**
 * The commands a read-only script may not call (scriptVerifyWriteCommandAllow): write commands and
 * subcommands (`xgroup|create`), and the may-replicate ones COMMAND INFO does not flag.
 */
function writeCommands(): Buffer[] {
  writeNames ??= [
    ...allCommandsAndSubcommands()
      .filter((c) => c.flags.has('write'))
      .map((c) => c.name),
    'publish',
    'spublish',
    'pfcount',
  ].map((n) => Buffer.from(n));
  return writeNames;
}

export type ScriptOutcome =
  | { kind: 'replies'; replies: Buffer[] }
  /** A watched key changed: nothing ran. */
  | { kind: 'aborted' }
  /** The script refused to run the transaction before running any of it. */
  | { kind: 'discarded'; error: string }
  | { kind: 'failed'; error: string };

/** Reads TRANSACTION_SCRIPT's RESP2 reply for `count` commands. */
export function readTransactionReply(reply: Buffer, count: number): ScriptOutcome {
  if (reply[0] === 0x2d) {
    const error = reply.toString('utf8', 1, reply.length - 2);
    return { kind: error.startsWith('EXECABORT ') ? 'discarded' : 'failed', error };
  }
  if (reply.equals(NIL)) return { kind: 'aborted' };
  const header = `*${count}\r\n`;
  const items = reply.subarray(0, header.length).equals(Buffer.from(header))
    ? splitReplies(reply.subarray(header.length), count)
    : undefined;
  if (!items)
    return {
      kind: 'failed',
      error: `ERR upstream sent a malformed answer to the transaction's script (expected ${count} replies); the outcome of the transaction is unknown`,
    };
  return { kind: 'replies', replies: items };
}

const NIL = Buffer.from('$-1\r\n');
