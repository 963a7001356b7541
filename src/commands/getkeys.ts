/**
 * COMMAND GETKEYS / GETKEYSANDFLAGS answered from the command table as Redis 8.8.0 answers them
 * (server.c getKeysSubcommandImpl, db.c getKeysFromCommandWithSpecs): the key specs first, then, when a
 * spec is incomplete or has variable flags, the command's own key-finding procedure (db.c *GetKeys).
 * The proxy answers these itself: the upstream knows neither the newer commands nor JSON.* and SEARCH.*.
 */
import type { Protocol } from '../resp/protocol.js';
import { ReplyWriter } from '../resp/reply-writer.js';
import type { PlainMap } from './data.js';
import { resolveCommand, type CommandSpec } from './table.js';

type Arg = string | Buffer;

/** A key found: its position in the command's arguments (0 = the command name) and its key-spec flags. */
interface KeyRef {
  pos: number;
  flags: readonly string[];
}

/** Redis' strcasecmp on an argument: a C string (cut at the first NUL), ASCII case folded. */
function is(arg: Arg, word: string): boolean {
  const b = typeof arg === 'string' ? Buffer.from(arg, 'latin1') : arg;
  const nul = b.indexOf(0);
  const end = nul < 0 ? b.length : nul;
  if (end !== word.length) return false;
  for (let i = 0; i < end; i++) {
    let c = b[i];
    if (c >= 65 && c <= 90) c += 32;
    if (c !== word.charCodeAt(i)) return false;
  }
  return true;
}

/** util.c string2ll: a canonical decimal integer (no sign on 0, no leading zeros, no spaces). */
function parseInteger(arg: Arg): number | undefined {
  const s = typeof arg === 'string' ? arg : arg.toString('latin1');
  if (!/^(0|-?[1-9]\d{0,18})$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** libc atoi: leading spaces, a sign and digits; 0 when none. */
function atoi(arg: Arg): number {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(typeof arg === 'string' ? arg : arg.toString('latin1'));
  return m ? Math.max(-2147483648, Math.min(2147483647, Number(m[1]))) : 0;
}

const specFlags = (k: PlainMap) => k.flags as string[];
const specPart = (k: PlainMap, part: 'begin_search' | 'find_keys') => k[part] as { type: string; spec: PlainMap };

/** db.c getKeysUsingKeySpecs; undefined where Redis returns -1 (an invalid or incomplete spec). */
function keysFromSpecs(cmd: CommandSpec, argv: readonly Arg[]): KeyRef[] | undefined {
  const argc = argv.length;
  const keys: KeyRef[] = [];
  for (const ks of cmd.keySpecs) {
    const flags = specFlags(ks);
    if (flags.includes('not_key')) continue;
    const bs = specPart(ks, 'begin_search');
    let first = 0;
    if (bs.type === 'index') first = bs.spec.index as number;
    else if (bs.type === 'keyword') {
      const startfrom = bs.spec.startfrom as number;
      const keyword = (bs.spec.keyword as string).toLowerCase();
      const start = startfrom > 0 ? startfrom : argc + startfrom;
      const end = startfrom > 0 ? argc - 1 : 1;
      for (let i = start; i !== end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (is(argv[i], keyword)) {
          first = i + 1;
          break;
        }
      }
      if (!first) continue; // keyword not found
    } else return undefined;
    const fk = specPart(ks, 'find_keys');
    let last: number;
    let step: number;
    if (fk.type === 'range') {
      const lastkey = fk.spec.lastkey as number;
      const limit = fk.spec.limit as number;
      step = fk.spec.keystep as number;
      if (lastkey >= 0) last = first + lastkey;
      else if (!limit) last = argc + lastkey;
      else last = first + (Math.trunc((argc - first) / limit) + lastkey);
    } else if (fk.type === 'keynum') {
      step = fk.spec.keystep as number;
      const keynumidx = first + (fk.spec.keynumidx as number);
      if (keynumidx >= argc || keynumidx < 0) return undefined;
      const numkeys = parseInteger(argv[keynumidx]);
      if (numkeys === undefined || numkeys < 0) return undefined;
      first += fk.spec.firstkey as number;
      last = first + (numkeys - 1) * step;
    } else return undefined;
    if (last >= argc || last < first || first >= argc) return undefined;
    for (let i = first; i <= last; i += step) if (i < argc) keys.push({ pos: i, flags });
    if (flags.includes('incomplete')) return undefined;
  }
  return keys;
}

// ---------------------------------------------------------------------------------------------------------------
// db.c's key-finding procedures, for the commands that have one.

const RO_ACCESS = ['RO', 'access'];

/** genericGetKeys: `[destkey] numkeys key...`; flags are not given (the command's key specs are complete). */
function numkeysForm(store: number, count: number, firstKey: number) {
  return (argv: readonly Arg[]): KeyRef[] => {
    if (count >= argv.length) return [];
    const num = atoi(argv[count]);
    if (num < 1 || num > Math.trunc(argv.length - firstKey)) return [];
    const keys: KeyRef[] = [];
    for (let i = 0; i < num; i++) keys.push({ pos: firstKey + i, flags: [] });
    if (store) keys.push({ pos: store, flags: [] });
    return keys;
  };
}

function sortKeys(argv: readonly Arg[]): KeyRef[] {
  const keys: KeyRef[] = [{ pos: 1, flags: RO_ACCESS }];
  let store: KeyRef | undefined;
  const skip: Record<string, number> = { limit: 2, get: 1, by: 1 };
  for (let i = 2; i < argv.length; i++) {
    const word = Object.keys(skip).find((k) => is(argv[i], k));
    if (word !== undefined) i += skip[word];
    else if (is(argv[i], 'store') && i + 1 < argv.length) store = { pos: i + 1, flags: ['OW', 'update'] };
  }
  return store ? [...keys, store] : keys;
}

function migrateKeys(argv: readonly Arg[]): KeyRef[] {
  let first = 3;
  let num = 1;
  const skip: Record<string, number> = { copy: 0, replace: 0, auth: 1, auth2: 2 };
  if (argv.length > 6) {
    for (let i = 6; i < argv.length; i++) {
      if (is(argv[i], 'keys')) {
        if (argv[3].length > 0) num = 0;
        else {
          first = i + 1;
          num = argv.length - first;
        }
        break;
      }
      const word = Object.keys(skip).find((k) => is(argv[i], k));
      if (word !== undefined) i += skip[word];
    }
  }
  return Array.from({ length: num }, (_, i) => ({ pos: first + i, flags: ['RW', 'access', 'delete'] }));
}

function georadiusKeys(argv: readonly Arg[]): KeyRef[] {
  let stored = -1;
  for (let i = 5; i < argv.length; i++) {
    if ((is(argv[i], 'store') || is(argv[i], 'storedist')) && i + 1 < argv.length) stored = ++i;
  }
  return stored < 0
    ? [{ pos: 1, flags: [] }]
    : [
        { pos: 1, flags: [] },
        { pos: stored, flags: [] },
      ];
}

function xreadKeys(argv: readonly Arg[]): KeyRef[] {
  let streams = -1;
  for (let i = 1; i < argv.length; i++) {
    if (is(argv[i], 'block') || is(argv[i], 'count')) i++;
    else if (is(argv[i], 'group')) i += 2;
    else if (is(argv[i], 'noack')) continue;
    else {
      if (is(argv[i], 'streams')) streams = i;
      break;
    }
  }
  const num = streams < 0 ? 0 : argv.length - streams - 1;
  if (streams < 0 || num === 0 || num % 2 !== 0) return [];
  return Array.from({ length: num / 2 }, (_, i) => ({ pos: streams + 1 + i, flags: [] }));
}

/** SET: RW and access with GET, RW with IFEQ/IFNE/IFDEQ/IFDNE, else OW; always update. */
function setKeys(argv: readonly Arg[]): KeyRef[] {
  let actual = 'OW';
  let access = false;
  for (let i = 3; i < argv.length; i++) {
    // Redis compares the first three bytes and a NUL: `GET` only, even with bytes after a NUL.
    if (is(argv[i], 'get')) {
      actual = 'RW';
      access = true;
    } else if (['ifeq', 'ifne', 'ifdeq', 'ifdne'].some((w) => is(argv[i], w))) actual = 'RW';
  }
  return [{ pos: 1, flags: access ? [actual, 'access', 'update'] : [actual, 'update'] }];
}

function delexKeys(argv: readonly Arg[]): KeyRef[] {
  let actual = 'RM';
  for (let i = 2; i < argv.length; i++) if (['ifeq', 'ifne', 'ifdeq', 'ifdne'].some((w) => is(argv[i], w))) actual = 'RW';
  return [{ pos: 1, flags: [actual, 'delete'] }];
}

function bitfieldKeys(argv: readonly Arg[]): KeyRef[] {
  let readonly = true;
  for (let i = 2; i < argv.length; i++) {
    const rem = argv.length - i - 1;
    if (is(argv[i], 'get') && rem >= 2) i += 2;
    else if ((is(argv[i], 'set') || is(argv[i], 'incrby')) && rem >= 3) {
      readonly = false;
      break;
    } else if (is(argv[i], 'overflow') && rem >= 1) i += 1;
    else {
      readonly = false;
      break;
    }
  }
  return [{ pos: 1, flags: readonly ? RO_ACCESS : ['RW', 'access', 'update'] }];
}

function pfmergeKeys(argv: readonly Arg[]): KeyRef[] {
  const keys: KeyRef[] = [{ pos: 1, flags: ['RW', 'access', 'insert'] }];
  for (let i = 2; i < argv.length; i++) keys.push({ pos: i, flags: RO_ACCESS });
  return keys;
}

/** The commands with a getkeys_proc in Redis 8.8.0's commands.def. */
const PROCS: Readonly<Record<string, (argv: readonly Arg[]) => KeyRef[]>> = {
  bitfield: bitfieldKeys,
  migrate: migrateKeys,
  sort: sortKeys,
  sort_ro: () => [{ pos: 1, flags: RO_ACCESS }],
  georadius: georadiusKeys,
  georadiusbymember: georadiusKeys,
  pfmerge: pfmergeKeys,
  blmpop: numkeysForm(0, 2, 3),
  lmpop: numkeysForm(0, 1, 2),
  eval: numkeysForm(0, 2, 3),
  evalsha: numkeysForm(0, 2, 3),
  evalsha_ro: numkeysForm(0, 2, 3),
  eval_ro: numkeysForm(0, 2, 3),
  fcall: numkeysForm(0, 2, 3),
  fcall_ro: numkeysForm(0, 2, 3),
  sintercard: numkeysForm(0, 1, 2),
  bzmpop: numkeysForm(0, 2, 3),
  zdiff: numkeysForm(0, 1, 2),
  zdiffstore: numkeysForm(1, 2, 3),
  zinter: numkeysForm(0, 1, 2),
  zintercard: numkeysForm(0, 1, 2),
  zinterstore: numkeysForm(1, 2, 3),
  zmpop: numkeysForm(0, 1, 2),
  zunion: numkeysForm(0, 1, 2),
  zunionstore: numkeysForm(1, 2, 3),
  xread: xreadKeys,
  xreadgroup: xreadKeys,
  delex: delexKeys,
  set: setKeys,
};

/** db.c getKeysFromCommandWithSpecs: the key specs when they are complete and fixed, else the procedure. */
export function commandKeys(cmd: CommandSpec, argv: readonly Arg[]): KeyRef[] {
  const real = cmd.keySpecs.some((k) => !specFlags(k).includes('not_key'));
  const variable = cmd.keySpecs.some((k) => specFlags(k).includes('variable_flags'));
  if (real && !variable) {
    const keys = keysFromSpecs(cmd, argv);
    if (keys !== undefined) return keys;
  }
  return PROCS[cmd.name]?.(argv) ?? [];
}

const error = (text: string) => Buffer.from(`-ERR ${text}\r\n`);

/**
 * The reply of `COMMAND GETKEYS cmd args...` (`withFlags`: GETKEYSANDFLAGS), `argv` being `cmd args...`.
 * The arity of COMMAND GETKEYS itself is checked before (the table's `command|getkeys`).
 */
export function getKeysReply(argv: readonly Arg[], withFlags: boolean, proto: Protocol): Buffer {
  const cmd = resolveCommand(argv);
  if (!cmd) return error('Invalid command specified');
  const hasKeys = PROCS[cmd.name] !== undefined || cmd.keySpecs.some((k) => !specFlags(k).includes('not_key'));
  if (!hasKeys) return error('The command has no key arguments');
  if ((cmd.arity > 0 && cmd.arity !== argv.length) || argv.length < -cmd.arity) {
    return error('Invalid number of arguments specified for command');
  }
  const keys = commandKeys(cmd, argv);
  if (keys.length === 0 && !cmd.flags.has('no_mandatory_keys')) return error('Invalid arguments specified for command');
  const w = new ReplyWriter(proto);
  w.arrayHeader(keys.length);
  for (const k of keys) {
    if (withFlags) w.arrayHeader(2);
    w.bulk(argv[k.pos]);
    if (!withFlags) continue;
    w.setHeader(k.flags.length);
    for (const f of k.flags) w.simple(f);
  }
  return w.toBuffer();
}
