// Argument parsing of the hash-field expiration commands (Redis 7.4/8), as Redis 8's t_hash.c does it
// (parseHashCommandArgs, parseHashFieldExpireArgs, httlGenericCommand), with its exact error texts. Pure:
// the emulation (field-expiry.ts) runs what these return.
import type { Arg } from '../../resp/request-writer.js';

/** Redis' HFE_MAX_ABS_TIME_MSEC: EB_EXPIRE_TIME_MAX (2^48 - 1) >> 2. */
export const MAX_ABS_TIME_MS = Math.floor((2 ** 48 - 1) / 4);

export type Condition = '' | 'NX' | 'XX' | 'GT' | 'LT';

export interface ExpireArgs {
  /** Absolute expiry in ms. */
  at: number;
  cond: Condition;
  fields: Arg[];
}

export interface FieldOptions {
  /** Absolute expiry in ms (EX, PX, EXAT, PXAT), or 'persist' (HGETEX), or 'keep' (HSETEX KEEPTTL). */
  expiry?: number | 'persist' | 'keep';
  /** HSETEX: FNX or FXX. */
  cond?: 'FNX' | 'FXX';
  /** HGETEX: the fields; HSETEX: field, value, field, value… */
  fields: Arg[];
}

type Parsed<T> = T | { error: string };

const text = (a: Arg): string => (typeof a === 'string' ? a : a.toString('latin1'));
const upper = (a: Arg): string => text(a).toUpperCase();

/** Redis' string2ll: an optional '-', digits, no leading zeros (except "0"), within 64 bits. */
function integer(a: Arg): number | undefined {
  const s = text(a);
  if (!/^-?(0|[1-9]\d*)$/.test(s) || s === '-0') return undefined;
  const n = BigInt(s);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return undefined;
  return Number(n);
}

const NOT_INTEGER = 'ERR value is not an integer or out of range';

/** parseExpireTime: seconds or ms, relative to `base` (0 for the *AT forms). */
function expireTime(a: Arg, unitMs: number, base: number, fullname: string): Parsed<{ at: number }> {
  const v = integer(a);
  if (v === undefined) return { error: NOT_INTEGER };
  if (v < 0) return { error: 'ERR invalid expire time, must be >= 0' };
  const invalid = { error: `ERR invalid expire time in '${fullname}' command` };
  if (unitMs === 1000 && v > Math.floor(MAX_ABS_TIME_MS / 1000)) return invalid;
  const ms = v * unitMs;
  if (ms > MAX_ABS_TIME_MS - base) return invalid;
  return { at: ms + base };
}

/** getRangeLongFromObjectOrReply(min 1) with a message: the count, or that message (also for a non-number). */
function positive(a: Arg, message: string, max: number): Parsed<{ n: number }> {
  const v = integer(a);
  if (v === undefined || v < 1 || v > max) return { error: `ERR ${message}` };
  return { n: v };
}

/** HEXPIRE/HPEXPIRE/HEXPIREAT/HPEXPIREAT key time [NX|XX|GT|LT] FIELDS n field… (keywords in any order after time). */
export function parseExpire(args: Arg[], name: string, now: number): Parsed<ExpireArgs> {
  const unitMs = name === 'hexpire' || name === 'hexpireat' ? 1000 : 1;
  const base = name.endsWith('at') ? 0 : now;
  const time = expireTime(args[2], unitMs, base, name);
  if ('error' in time) return time;
  let cond = 0;
  let which: Condition = '';
  let fields: Arg[] | undefined;
  for (let i = 3; i < args.length; i++) {
    const word = upper(args[i]);
    if (word === 'FIELDS') {
      if (fields) return { error: 'ERR FIELDS keyword specified multiple times' };
      if (i >= args.length - 2) return { error: 'ERR FIELDS requires at least numfields and one field argument' };
      const n = positive(args[i + 1], 'Parameter `numFields` should be greater than 0', 2 ** 31 - 1);
      if ('error' in n) return n;
      if (n.n > args.length - (i + 2)) return { error: 'ERR wrong number of arguments' };
      fields = args.slice(i + 2, i + 2 + n.n);
      i = i + 1 + n.n;
      continue;
    }
    if (word === 'NX' || word === 'XX' || word === 'GT' || word === 'LT') {
      if (which !== word) cond++;
      which = word;
      continue;
    }
    return { error: `ERR unknown argument: ${text(args[i])}` };
  }
  if (!fields) return { error: 'ERR missing FIELDS argument' };
  if (cond > 1) return { error: 'ERR Multiple condition flags specified' };
  return { at: time.at, cond: which, fields };
}

/** HTTL/HPTTL/HEXPIRETIME/HPEXPIRETIME/HPERSIST key FIELDS n field… (FIELDS fixed at the third argument). */
export function parseFieldList(args: Arg[]): Parsed<{ fields: Arg[] }> {
  if (upper(args[2]) !== 'FIELDS') return { error: 'ERR Mandatory argument FIELDS is missing or not at the right position' };
  const n = positive(args[3], 'Number of fields must be a positive integer', Number.MAX_SAFE_INTEGER);
  if ('error' in n) return n;
  if (n.n !== args.length - 4) return { error: 'ERR The `numfields` parameter must match the number of arguments' };
  return { fields: args.slice(4) };
}

/** HGETEX key [EX|PX|EXAT|PXAT t|PERSIST] FIELDS n field… and HSETEX key [FNX|FXX] [EX…|KEEPTTL] FIELDS n field value… */
export function parseFieldOptions(args: Arg[], name: 'hgetex' | 'hsetex', now: number): Parsed<FieldOptions> {
  const perField = name === 'hsetex' ? 2 : 1;
  const out: FieldOptions = { fields: [] };
  let haveFields = false;
  const tooMany =
    name === 'hsetex'
      ? 'ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified'
      : 'ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified';
  for (let i = 2; i < args.length; i++) {
    const word = upper(args[i]);
    if (word === 'FIELDS') {
      if (haveFields) return { error: 'ERR FIELDS keyword specified multiple times' };
      if (i + 1 >= args.length) return { error: `ERR wrong number of arguments for '${name}' command` };
      const n = positive(args[i + 1], 'invalid number of fields', 2 ** 31 - 1);
      if ('error' in n) return n;
      if (i + 2 + n.n * perField > args.length) return { error: 'ERR wrong number of arguments' };
      out.fields = args.slice(i + 2, i + 2 + n.n * perField);
      haveFields = true;
      i = i + 1 + n.n * perField;
    } else if (word === 'EX' || word === 'PX' || word === 'EXAT' || word === 'PXAT') {
      if (out.expiry !== undefined && !(name === 'hgetex' && out.expiry === 'keep')) return { error: tooMany };
      if (i >= args.length - 1) return { error: 'ERR missing expire time' };
      const t = expireTime(args[++i], word.startsWith('E') ? 1000 : 1, word.endsWith('AT') ? 0 : now, name);
      if ('error' in t) return t;
      out.expiry = t.at;
    } else if (name === 'hgetex' && word === 'PERSIST') {
      if (out.expiry !== undefined) return { error: tooMany };
      out.expiry = 'persist';
    } else if (name === 'hsetex' && word === 'KEEPTTL') {
      if (out.expiry !== undefined) return { error: tooMany };
      out.expiry = 'keep';
    } else if (name === 'hsetex' && (word === 'FXX' || word === 'FNX')) {
      if (out.cond) return { error: 'ERR Only one of FXX or FNX arguments can be specified' };
      out.cond = word;
    } else return { error: `ERR unknown argument: ${text(args[i])}` };
  }
  if (!haveFields) return { error: 'ERR missing FIELDS argument' };
  return out;
}

/** CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2): validated like Redis; over REST there is no connection to name. */
export function clientSetinfoError(args: Arg[]): string | undefined {
  if (args.length !== 4) return "ERR wrong number of arguments for 'client|setinfo' command";
  const attr = text(args[2]).toLowerCase();
  if (attr !== 'lib-name' && attr !== 'lib-ver') return `ERR Unrecognized option '${text(args[2])}'`;
  // validateClientAttr: printable ASCII (33..126) only.
  if (!/^[\x21-\x7e]*$/.test(text(args[3]))) return `ERR ${attr} cannot contain spaces, newlines or special characters.`;
  return undefined;
}
