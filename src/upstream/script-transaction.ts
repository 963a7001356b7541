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
import { splitReplies } from '../resp/reply-scanner.js';

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
 * ARGV[1]: "<watched> <key length> <fingerprint length>… <argc> <arg length>……\n" then the bytes of
 * every watched key, fingerprint and argument, in that order. Returns nil when a watched key changed,
 * else the array of the commands' replies.
 */
export const TRANSACTION_SCRIPT = `${FINGERPRINT_LUA}local blob = ARGV[1]
local eol = string.find(blob, '\\n', 1, true)
local lengths = {}
for n in string.gmatch(string.sub(blob, 1, eol - 1), '%d+') do lengths[#lengths + 1] = tonumber(n) end
local pos, at = eol + 1, 1
local function take()
  local len = lengths[at]
  at = at + 1
  local s = string.sub(blob, pos, pos + len - 1)
  pos = pos + len
  return s
end
local watched = lengths[at]
at = at + 1
for i = 1, watched do
  local klen, flen = lengths[at], lengths[at + 1]
  at = at + 2
  local key = string.sub(blob, pos, pos + klen - 1)
  local expected = string.sub(blob, pos + klen, pos + klen + flen - 1)
  pos = pos + klen + flen
  if fingerprint(key) ~= expected then return false end
end
local replies = {}
while at <= #lengths do
  local argc = lengths[at]
  at = at + 1
  local args = {}
  for i = 1, argc do args[i] = take() end
  replies[#replies + 1] = redis.pcall(unpack(args))
end
return replies
`;

/**
 * Most arguments of one command the script can run: Lua's `unpack` and a C call take at most
 * LUAI_MAXCSTACK (8000) stack slots, a few of which are in use; a larger command would fail midway.
 */
export const MAX_SCRIPT_COMMAND_ARGS = 7900;

/** Why the transaction cannot run as the script (checked before sending, so nothing runs), or undefined. */
export function scriptLimitError(commands: Buffer[][]): string | undefined {
  const index = commands.findIndex((c) => c.length > MAX_SCRIPT_COMMAND_ARGS);
  if (index < 0) return undefined;
  return `ERR command ${index + 1} of the transaction has ${commands[index].length} arguments, and a transaction with watched keys or binary arguments runs as one upstream script, whose commands take at most ${MAX_SCRIPT_COMMAND_ARGS}; split the command (the transaction was not sent)`;
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
export function transactionCommand(commands: Buffer[][], watch: WatchedKeys | undefined): Buffer[] {
  const lengths: number[] = [];
  const data: Buffer[] = [];
  const keys = watch?.keys ?? [];
  lengths.push(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const fingerprint = watch!.fingerprints[i] ?? Buffer.alloc(0);
    lengths.push(keys[i].length, fingerprint.length);
    data.push(keys[i], fingerprint);
  }
  for (const command of commands) {
    lengths.push(command.length);
    for (const arg of command) {
      lengths.push(arg.length);
      data.push(arg);
    }
  }
  const blob = Buffer.concat([Buffer.from(lengths.join(' ') + '\n'), ...data]);
  return [Buffer.from('EVAL'), Buffer.from(TRANSACTION_SCRIPT), Buffer.from('0'), blob];
}

export type ScriptOutcome =
  | { kind: 'replies'; replies: Buffer[] }
  /** A watched key changed: nothing ran. */
  | { kind: 'aborted' }
  | { kind: 'failed'; error: string };

/** Reads TRANSACTION_SCRIPT's RESP2 reply for `count` commands. */
export function readTransactionReply(reply: Buffer, count: number): ScriptOutcome {
  if (reply[0] === 0x2d) return { kind: 'failed', error: reply.toString('utf8', 1, reply.length - 2) };
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
