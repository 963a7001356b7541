/**
 * Generates src/commands/redis-8-added.json: the commands and subcommands of a newer Redis (8.8.0) that
 * Redis 7.0.15's table (redis-7.0.15.json) lacks, transcribed from Redis' command descriptions
 * (src/commands/*.json of its source) into the shape COMMAND INFO / COMMAND DOCS reply with, as
 * server.c derives it: flags and key-spec flags in Redis' reply order, implicit ACL categories
 * (setImplicitACLCategories), the legacy first/last/step key range and `movablekeys`
 * (populateCommandLegacyRangeSpec). Sentinel-only commands are left out (a data node never lists them).
 *
 *   npx tsx scripts/gen-newer-command-data.ts --git /path/to/redis.git --tag 8.8.0 [--out src/commands/redis-8-added.json]
 *   npx tsx scripts/gen-newer-command-data.ts --git … --tag 8.8.0 --check   # transcribe the shared commands and compare with 7.0.15
 *
 * `--check` is the transcriber's own test: for every command both versions have, the transcription of
 * the newer description must equal Redis 7.0.15's own COMMAND INFO reply unless the description changed.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { CommandData, CommandDocsData, PlainMap } from '../src/commands/data.js';
import { commandData } from '../src/commands/data.js';

type Json = Record<string, unknown>;

// server.c addReplyCommandFlags / addReplyFlagsForKeyArgs order.
const FLAG_ORDER = [
  'write', 'readonly', 'denyoom', 'module', 'admin', 'pubsub', 'noscript', 'blocking', 'loading', 'stale',
  'skip_monitor', 'skip_slowlog', 'asking', 'fast', 'no_auth', 'no_mandatory_keys', 'no_async_loading', 'no_multi',
  'movablekeys', 'allow_busy',
]; // prettier-ignore
const KEY_FLAG_ORDER = ['RO', 'RW', 'OW', 'RM', 'access', 'update', 'insert', 'delete', 'not_key', 'incomplete', 'variable_flags'];
// server.c ACLCommandCategories order.
const ACL_ORDER = [
  'keyspace', 'read', 'write', 'set', 'sortedset', 'list', 'hash', 'string', 'bitmap', 'hyperloglog', 'geo', 'stream',
  'pubsub', 'admin', 'fast', 'slow', 'blocking', 'dangerous', 'connection', 'transaction', 'scripting',
]; // prettier-ignore

const ordered = (items: Iterable<string>, order: string[]) => order.filter((x) => new Set(items).has(x));

function keySpec(k: Json): PlainMap {
  const out: PlainMap = {};
  if (typeof k.notes === 'string') out.notes = k.notes;
  const flags = (k.flags as string[]).map((f) => (['RO', 'RW', 'OW', 'RM'].includes(f) ? f : f.toLowerCase()));
  out.flags = ordered(flags, KEY_FLAG_ORDER);
  const bs = k.begin_search as Json;
  if (bs.index) out.begin_search = { type: 'index', spec: { index: (bs.index as Json).pos as number } };
  else if (bs.keyword) {
    const kw = bs.keyword as Json;
    out.begin_search = { type: 'keyword', spec: { keyword: kw.keyword as string, startfrom: kw.startfrom as number } };
  } else out.begin_search = { type: 'unknown', spec: {} };
  const fk = k.find_keys as Json;
  if (fk.range) {
    const r = fk.range as Json;
    out.find_keys = { type: 'range', spec: { lastkey: r.lastkey as number, keystep: r.step as number, limit: r.limit as number } };
  } else if (fk.keynum) {
    const r = fk.keynum as Json;
    out.find_keys = {
      type: 'keynum',
      spec: { keynumidx: r.keynumidx as number, firstkey: r.firstkey as number, keystep: r.step as number },
    };
  } else out.find_keys = { type: 'unknown', spec: {} };
  return out;
}

/** populateCommandLegacyRangeSpec: the legacy key range and whether keys are movable. */
function legacyRange(specs: PlainMap[]): { first: number; last: number; step: number; movable: boolean } {
  let movable = false;
  const bsIndex = (s: PlainMap) => ((s.begin_search as PlainMap).spec as PlainMap).index as number;
  const range = (s: PlainMap) => (s.find_keys as PlainMap).spec as PlainMap;
  const isRange = (s: PlainMap) => (s.begin_search as PlainMap).type === 'index' && (s.find_keys as PlainMap).type === 'range';
  const incomplete = (s: PlainMap) => (s.flags as string[]).includes('incomplete');
  if (specs.length === 0) return { first: 0, last: 0, step: 0, movable };
  const toReply = (pos: number, lastkey: number, step: number) => ({ first: pos, last: lastkey >= 0 ? lastkey + pos : lastkey, step });
  if (specs.length === 1 && isRange(specs[0])) {
    const r = range(specs[0]);
    return { ...toReply(bsIndex(specs[0]), r.lastkey as number, r.keystep as number), movable: movable || incomplete(specs[0]) };
  }
  let first = Number.MAX_SAFE_INTEGER;
  let last = 0;
  let prevLast = 0;
  for (const s of specs) {
    if (!isRange(s)) {
      movable = true;
      continue;
    }
    const r = range(s);
    if (r.keystep !== 1 || (prevLast && prevLast !== bsIndex(s) - 1)) {
      movable = true;
      continue;
    }
    if (incomplete(s)) movable = true;
    first = Math.min(first, bsIndex(s));
    let abs = r.lastkey as number;
    if (abs >= 0) abs += bsIndex(s);
    last = last >>> 0 >= abs >>> 0 ? last : abs; // Redis compares unsigned (a negative lastkey wins)
    prevLast = last;
  }
  if (first === Number.MAX_SAFE_INTEGER) return { first: 0, last: 0, step: 0, movable: true };
  return { ...toReply(first, last < 0 ? last : last - first, 1), movable };
}

function argument(a: Json): PlainMap {
  const out: PlainMap = { name: a.name as string, type: a.type as string };
  if (typeof a.key_spec_index === 'number') out.key_spec_index = a.key_spec_index;
  if (typeof a.token === 'string') out.token = a.token;
  if (typeof a.summary === 'string') out.summary = a.summary;
  if (typeof a.since === 'string') out.since = a.since;
  if (typeof a.deprecated_since === 'string') out.deprecated_since = a.deprecated_since;
  const flags = (['optional', 'multiple', 'multiple_token'] as const).filter((f) => a[f] === true);
  if (flags.length) out.flags = flags;
  if (Array.isArray(a.arguments)) out.arguments = (a.arguments as Json[]).map(argument);
  return out;
}

/** One command description (the value under its name in a src/commands/*.json file). */
export function transcribe(fullName: string, d: Json): CommandData {
  const rawFlags = ((d.command_flags as string[] | undefined) ?? []).map((f) => f.toLowerCase());
  const keySpecs = ((d.key_specs as Json[] | undefined) ?? []).map(keySpec);
  const range = legacyRange(keySpecs);
  const flags = new Set(rawFlags);
  if (range.movable) flags.add('movablekeys');
  // setImplicitACLCategories.
  const acl = new Set(((d.acl_categories as string[] | undefined) ?? []).map((c) => c.toLowerCase()));
  if (flags.has('write')) acl.add('write');
  if (flags.has('readonly') && !acl.has('scripting')) acl.add('read');
  if (flags.has('admin')) acl.add('admin').add('dangerous');
  if (flags.has('pubsub')) acl.add('pubsub');
  if (flags.has('fast')) acl.add('fast');
  if (flags.has('blocking')) acl.add('blocking');
  if (!flags.has('fast')) acl.add('slow');
  // The JSON spells groups with `_` (sorted_set); COMMAND DOCS with `-`.
  const docs: CommandDocsData = { group: (d.group as string).replace(/_/g, '-') };
  if (typeof d.summary === 'string') docs.summary = d.summary;
  if (typeof d.since === 'string') docs.since = d.since;
  if (typeof d.complexity === 'string') docs.complexity = d.complexity;
  if (Array.isArray(d.doc_flags) && d.doc_flags.length) docs.docFlags = (d.doc_flags as string[]).map((f) => f.toLowerCase());
  if (typeof d.deprecated_since === 'string') docs.deprecatedSince = d.deprecated_since;
  if (typeof d.replaced_by === 'string') docs.replacedBy = d.replaced_by;
  if (Array.isArray(d.history) && d.history.length) docs.history = d.history as [string, string][];
  if (Array.isArray(d.arguments)) docs.arguments = (d.arguments as Json[]).map(argument);
  // Keep the docs fields in Redis' reply order.
  const docsOrdered = Object.fromEntries(
    (['summary', 'since', 'group', 'complexity', 'docFlags', 'deprecatedSince', 'replacedBy', 'history', 'arguments'] as const)
      .filter((k) => docs[k] !== undefined)
      .map((k) => [k, docs[k]]),
  ) as unknown as CommandDocsData;
  return {
    name: fullName,
    arity: d.arity as number,
    flags: ordered(flags, FLAG_ORDER),
    firstKey: range.first,
    lastKey: range.last,
    step: range.step,
    aclCategories: ordered(acl, ACL_ORDER).map((c) => `@${c}`),
    tips: ((d.command_tips as string[] | undefined) ?? []).map((t) => t.toLowerCase()),
    keySpecs,
    docs: docsOrdered,
  };
}

/** Every command description of the source at `tag`, by lowercase full name (`client|setinfo`). */
function readDescriptions(gitDir: string, tag: string): Map<string, Json> {
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 64 << 20 }).toString();
  const out = new Map<string, Json>();
  for (const file of git('ls-tree', '--name-only', `${tag}:src/commands/`).trim().split('\n')) {
    if (!file.endsWith('.json')) continue;
    const [[name, d]] = Object.entries(JSON.parse(git('show', `${tag}:src/commands/${file}`)) as Record<string, Json>);
    if (((d.command_flags as string[] | undefined) ?? []).includes('ONLY_SENTINEL')) continue;
    const container = typeof d.container === 'string' ? `${d.container.toLowerCase()}|` : '';
    out.set(container + name.toLowerCase(), d);
  }
  return out;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function main(): void {
  const opt = (name: string, dflt?: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : dflt;
  };
  const gitDir = opt('--git');
  const tag = opt('--tag', '8.8.0')!;
  if (!gitDir) throw new Error('--git <path of a Redis source git directory> is required');
  const descriptions = readDescriptions(gitDir, tag);
  const known = new Map<string, CommandData>();
  for (const c of commandData.commands) for (const x of [c, ...(c.subcommands ?? [])]) known.set(x.name, x);
  if (process.argv.includes('--check')) {
    // COMMAND INFO's fields without tips (7.2 added request/response policies to many commands), and
    // COMMAND DOCS' arguments (7.2 rewrote most summaries).
    const infoOf = (c: CommandData) => JSON.stringify([c.arity, c.flags, c.firstKey, c.lastKey, c.step, c.aclCategories, c.keySpecs]);
    const argsOf = (c: CommandData) => JSON.stringify(c.docs.arguments ?? []);
    let shared = 0;
    const info: string[] = [];
    const args: string[] = [];
    for (const [name, d] of descriptions) {
      const old = known.get(name);
      if (!old) continue;
      shared++;
      const now = transcribe(name, d);
      if (infoOf(now) !== infoOf(old)) info.push(name);
      if (argsOf(now) !== argsOf(old)) args.push(name);
    }
    console.log(`${shared} commands in both; COMMAND INFO differs for ${info.length}: ${info.join(' ')}`);
    console.log(`COMMAND DOCS arguments differ for ${args.length}: ${args.join(' ')}`);
    return;
  }
  // New top-level commands (with their subcommands), and new subcommands of 7.0.15's containers.
  const added: CommandData[] = [];
  const newSubs: CommandData[] = [];
  for (const [name, d] of [...descriptions].sort(([a], [b]) => cmp(a, b))) {
    if (known.has(name)) continue;
    const c = transcribe(name, d);
    if (!name.includes('|')) added.push(c);
    else if (known.has(name.split('|')[0])) newSubs.push(c);
  }
  for (const c of added) {
    const subs = newSubs.filter(() => false);
    for (const [name, d] of [...descriptions].sort(([a], [b]) => cmp(a, b)))
      if (name.startsWith(`${c.name}|`)) subs.push(transcribe(name, d));
    if (subs.length) c.subcommands = subs;
  }
  // Commands both have whose arity Redis widened since 7.0.15 (ZRANK … WITHSCORE, 7.2).
  const arities: Record<string, number> = {};
  for (const [name, d] of [...descriptions].sort(([a], [b]) => cmp(a, b))) {
    const old = known.get(name);
    if (old && d.arity !== old.arity) arities[name] = d.arity as number;
  }
  const file = {
    redisVersion: tag,
    generatedBy: `scripts/gen-newer-command-data.ts from Redis ${tag} src/commands/*.json (commands Redis 7.0.15 lacks)`,
    commands: added,
    subcommands: newSubs,
    arities,
  };
  const out = opt('--out', 'src/commands/redis-8-added.json')!;
  writeFileSync(out, `${JSON.stringify(file, null, 1)}\n`);
  console.log(`${out}: ${added.length} commands, ${newSubs.length} subcommands of existing containers`);
}

if (!process.argv.includes('--no-main')) main();
