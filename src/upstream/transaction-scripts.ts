// The queued scripts of a transaction that runs as ONE upstream script (script-transaction.ts: WATCH,
// binary arguments). Redis forbids a script to call EVAL, EVALSHA or FCALL ("This Redis command is
// not allowed from script"), so the transaction's script runs each queued script's body itself,
// with its own KEYS and ARGV and Redis' error texts. What each slot becomes is decided here, before
// anything is sent:
//
// - EVAL/EVAL_RO: the body is in the command. It is also SCRIPT LOADed first, since Redis caches the
//   script of an EVAL (a later EVALSHA finds it).
// - EVALSHA/EVALSHA_RO: whether the upstream has the script is asked first (SCRIPT EXISTS, before the
//   loads), as that is what Redis' NOSCRIPT answers; an EVAL earlier in the same transaction counts
//   as loaded. A script the upstream has is run from the body the proxy passed on earlier
//   (script-bodies.ts); one the upstream has and the proxy never saw cannot be run, and the whole
//   transaction is refused (never a slot's error that a client may ignore).
// - FCALL/FCALL_RO: the function's library code comes from FUNCTION LIST WITHCODE (asked first);
//   the script loads it with its own `redis.register_function` and calls the function.
// - An argument error of the script command (numkeys), a bad shebang, *_RO of a script that may
//   write: Redis' error in its slot, as at EXEC. *_RO and no-writes scripts and functions run
//   read-only (the script refuses their writes as Redis does).
// - Any other command Redis does not let a script call (SCRIPT, FUNCTION, blocking forms…) refuses
//   the whole transaction, before anything ran.
// Pure: unit-tested in test/upstream/transaction-scripts.test.ts.
import { resolveCommand } from '../commands/table.js';
import { readFunctionList, type FunctionCode } from './function-list.js';
import type { ScriptBodies } from './script-bodies.js';

/** One command of the transaction, as the transaction's script runs it. */
export type ScriptSlot =
  | { kind: 'command'; args: Buffer[] }
  /** A queued script: `sha` names it in error texts; `rest` holds its keys (the first `numkeys`) then its arguments. */
  | { kind: 'script'; sha: string; body: Buffer; numkeys: number; rest: Buffer[]; readOnly: boolean }
  /** A queued FCALL: the function `name` (as registered) of the library `code`; `rest` as for a script. */
  | { kind: 'function'; name: string; code: Buffer; numkeys: number; rest: Buffer[]; readOnly: boolean }
  /** The slot's reply is this error, as Redis answers it at EXEC. */
  | { kind: 'error'; message: string };

type PlannedSlot =
  | ScriptSlot
  /** An FCALL or FCALL_RO: checked once the upstream listed its functions (`args` from the function name on). */
  | { kind: 'fcall'; args: Buffer[]; readOnly: boolean }
  /** An EVALSHA: `body` when the proxy knows it; `loadedBefore`: an EVAL earlier in the transaction has the same script. */
  | { kind: 'evalsha'; sha: string; body: Buffer | undefined; numkeys: number; rest: Buffer[]; loadedBefore: boolean; ro: boolean };

/** A transaction's slots before the upstream was asked about its EVALSHA scripts. */
export interface ScriptPlan {
  slots: PlannedSlot[];
  /**
   * Commands to send first: SCRIPT EXISTS of the EVALSHA scripts, FUNCTION LIST WITHCODE for FCALL,
   * then SCRIPT LOAD of the EVAL bodies (each when needed); empty: none.
   */
  preflight: Buffer[][];
  /** The scripts SCRIPT EXISTS asks about, in its order. */
  asked: string[];
  /** Whether FUNCTION LIST WITHCODE is in the preflight (after SCRIPT EXISTS). */
  functions: boolean;
}

export const NOSCRIPT = 'NOSCRIPT No matching script. Please use EVAL.';

/** How the transaction's commands run inside its script, or why it cannot run as one (nothing is sent). */
export function planScriptSlots(commands: Buffer[][], bodies: ScriptBodies): ScriptPlan | { error: string } {
  const slots: PlannedSlot[] = [];
  const asked: string[] = [];
  const loads = new Map<string, Buffer>();
  let functions = false;
  for (let i = 0; i < commands.length; i++) {
    const command = commands[i];
    const name = command[0].toString('latin1').toLowerCase();
    if ((name === 'fcall' || name === 'fcall_ro') && command.length >= 3) {
      functions = true;
      slots.push({ kind: 'fcall', args: command.slice(1), readOnly: name === 'fcall_ro' });
      continue;
    }
    const script = name === 'eval' || name === 'eval_ro' ? 'eval' : name === 'evalsha' || name === 'evalsha_ro' ? 'evalsha' : undefined;
    if (script === undefined) {
      const spec = resolveCommand(command);
      // Redis 7 (the upstream's scripting) refuses blocking commands in scripts too; Redis 8 dropped
      // their noscript flag because it runs them there without blocking.
      if (spec && (spec.flags.has('noscript') || spec.flags.has('blocking'))) return { error: notFromScript(spec.name, i) };
      slots.push({ kind: 'command', args: command });
      continue;
    }
    if (command.length < 3) {
      // The command table checked the arity at queueing; kept for a caller that did not.
      slots.push({ kind: 'error', message: `ERR wrong number of arguments for '${name}' command` });
      continue;
    }
    const numkeys = checkNumkeys(command);
    if (typeof numkeys === 'string') {
      slots.push({ kind: 'error', message: numkeys });
      continue;
    }
    const rest = command.slice(3);
    const ro = name.endsWith('_ro');
    if (script === 'eval') {
      const sha = bodies.remember(command[1]);
      const slot = scriptSlot(sha, command[1], numkeys, rest, ro);
      // Redis caches the script of an EVAL whose shebang it accepts (a later EVALSHA finds it).
      if (slot.kind !== 'error' || !slot.message.includes('shebang')) loads.set(sha, command[1]);
      slots.push(slot);
    } else {
      const sha = command[1].toString('latin1').toLowerCase();
      if (sha.length !== 40) {
        slots.push({ kind: 'error', message: NOSCRIPT });
        continue;
      }
      if (!asked.includes(sha)) asked.push(sha);
      slots.push({ kind: 'evalsha', sha, body: loads.get(sha) ?? bodies.get(sha), numkeys, rest, loadedBefore: loads.has(sha), ro });
    }
  }
  const preflight: Buffer[][] = [];
  if (asked.length > 0) preflight.push([Buffer.from('SCRIPT'), Buffer.from('EXISTS'), ...asked.map((s) => Buffer.from(s))]);
  if (functions) preflight.push([Buffer.from('FUNCTION'), Buffer.from('LIST'), Buffer.from('WITHCODE')]);
  for (const body of loads.values()) preflight.push([Buffer.from('SCRIPT'), Buffer.from('LOAD'), body]);
  return { slots, preflight, asked, functions };
}

/**
 * The slots once the upstream answered the preflight (`replies`, one per preflight command): an
 * EVALSHA runs when its script exists (or an earlier EVAL of the transaction loaded it), else answers
 * NOSCRIPT; an error when the transaction cannot run (nothing was sent).
 */
export function resolveScriptSlots(plan: ScriptPlan, replies: Buffer[]): ScriptSlot[] | { error: string } {
  let exists: boolean[] = [];
  if (plan.asked.length > 0) {
    const read = readExists(replies[0], plan.asked.length);
    if (typeof read === 'string') return { error: read };
    exists = read;
  }
  let functions: Map<string, FunctionCode> | undefined;
  if (plan.functions) {
    const reply = replies[plan.asked.length > 0 ? 1 : 0];
    if (reply?.[0] === 0x2d)
      return { error: `ERR respgate could not read the upstream's functions (FUNCTION LIST: ${reply.toString('latin1', 1).trim()})` };
    functions = reply && readFunctionList(reply);
    if (!functions) return { error: 'ERR upstream sent a malformed answer to FUNCTION LIST' };
  }
  const out: ScriptSlot[] = [];
  for (const slot of plan.slots) {
    if (slot.kind === 'fcall') {
      out.push(functionSlot(slot.args, slot.readOnly, functions!));
      continue;
    }
    if (slot.kind !== 'evalsha') {
      out.push(slot);
      continue;
    }
    if (!slot.loadedBefore && !exists[plan.asked.indexOf(slot.sha)]) {
      out.push({ kind: 'error', message: NOSCRIPT });
      continue;
    }
    const body = slot.body;
    if (!body)
      return {
        error: `ERR script ${slot.sha} is loaded in the upstream, but respgate has not seen its body (it was loaded by another client or before respgate started), and this transaction runs as one upstream script (it has watched keys or binary arguments), which cannot call EVALSHA: send the script once through respgate with EVAL or SCRIPT LOAD`,
      };
    out.push(scriptSlot(slot.sha, body, slot.numkeys, slot.rest, slot.ro));
  }
  return out;
}

/** An FCALL as Redis 7.0 checks it at EXEC (fcallCommandGeneric): the function, numkeys, then the _RO rule. */
function functionSlot(args: Buffer[], readOnly: boolean, functions: Map<string, FunctionCode>): ScriptSlot {
  const found = functions.get(args[0].toString('latin1').toLowerCase());
  if (!found) return { kind: 'error', message: 'ERR Function not found' };
  const n = parseLongLong(args[1]);
  if (n === undefined) return { kind: 'error', message: 'ERR Bad number of keys provided' };
  if (n > BigInt(args.length - 2)) return { kind: 'error', message: "ERR Number of keys can't be greater than number of args" };
  if (n < 0n) return { kind: 'error', message: "ERR Number of keys can't be negative" };
  if (readOnly && !found.flags.includes('no-writes'))
    return { kind: 'error', message: 'ERR Can not execute a script with write flag using *_ro command.' };
  return {
    kind: 'function',
    name: found.name,
    code: found.code,
    numkeys: Number(n),
    rest: args.slice(2),
    readOnly: found.flags.includes('no-writes'),
  };
}

/**
 * A script's slot, after the checks Redis 7.0 makes once it has the body: its shebang
 * (evalExtractShebangFlags), then a *_RO call of a script whose shebang lacks no-writes
 * (scriptPrepareForRun). A script runs read-only under *_RO or with the no-writes flag.
 */
function scriptSlot(sha: string, body: Buffer, numkeys: number, rest: Buffer[], ro: boolean): ScriptSlot {
  const flags = shebangFlags(body);
  if (flags && 'error' in flags) return { kind: 'error', message: flags.error };
  if (ro && flags && !flags.includes('no-writes'))
    return { kind: 'error', message: 'ERR Can not execute a script with write flag using *_ro command.' };
  return { kind: 'script', sha, body, numkeys, rest, readOnly: ro || (flags?.includes('no-writes') ?? false) };
}

const SCRIPT_FLAGS = new Set(['no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys']);

/** The flags of a body's `#!lua flags=…` line, Redis' error for a bad one, or undefined without a shebang. */
export function shebangFlags(body: Buffer): string[] | { error: string } | undefined {
  if (body[0] !== 0x23 || body[1] !== 0x21) return undefined;
  const eol = body.indexOf(10);
  const parts = body
    .toString('latin1', 0, eol < 0 ? body.length : eol)
    .split(/[ \t\r]+/)
    .filter((p) => p !== '');
  if (parts[0] !== '#!lua') return { error: `ERR Unexpected engine in script shebang: ${parts[0]}` };
  const flags: string[] = [];
  for (const part of parts.slice(1)) {
    if (!part.startsWith('flags=')) return { error: `ERR Unknown lua shebang option: ${part}` };
    for (const flag of part.slice(6).split(',')) {
      if (!SCRIPT_FLAGS.has(flag)) return { error: `ERR Unexpected flag in script shebang: ${flag}` };
      flags.push(flag);
    }
  }
  return flags;
}

/** SCRIPT EXISTS' reply (`*n` of `:0`/`:1`), or the error that stops the transaction. */
function readExists(reply: Buffer | undefined, count: number): boolean[] | string {
  const text = reply?.toString('latin1') ?? '';
  if (text.startsWith('-')) return `ERR respgate could not ask the upstream which scripts it has (SCRIPT EXISTS: ${text.slice(1).trim()})`;
  const lines = text.split('\r\n');
  if (lines[0] !== `*${count}` || lines.length !== count + 2) return 'ERR upstream sent a malformed answer to SCRIPT EXISTS';
  const out: boolean[] = [];
  for (let i = 1; i <= count; i++) {
    if (lines[i] !== ':0' && lines[i] !== ':1') return 'ERR upstream sent a malformed answer to SCRIPT EXISTS';
    out.push(lines[i] === ':1');
  }
  return out;
}

/** EVAL's numkeys as Redis 7.0 checks it (evalGenericCommand), or its error text. */
function checkNumkeys(command: Buffer[]): number | string {
  const n = parseLongLong(command[2]);
  if (n === undefined) return 'ERR value is not an integer or out of range';
  if (n > BigInt(command.length - 3)) return "ERR Number of keys can't be greater than number of args";
  if (n < 0n) return "ERR Number of keys can't be negative";
  return Number(n);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Redis' string2ll: an optional '-', digits without a leading zero (or "0" alone), within 64 bits. */
export function parseLongLong(arg: Buffer): bigint | undefined {
  const text = arg.toString('latin1');
  if (!/^(0|-?[1-9][0-9]{0,19})$/.test(text)) return undefined;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function notFromScript(name: string, index: number): string {
  return `ERR command ${index + 1} of the transaction ('${name}') cannot run in it: a transaction with watched keys or binary arguments runs as one upstream script, and Redis does not let a script call '${name}' (the transaction was not sent)`;
}
