/**
 * COMMAND, COMMAND COUNT/LIST/INFO/DOCS replies re-encoded from the command table's data, byte-identical to
 * Redis 8.8.0 (server.c addReplyCommandInfo / addReplyCommandDocs / commandListCommand) in RESP2 and RESP3,
 * for the commands the proxy carries (table.ts tableData). The one difference: Redis lists commands and
 * subcommands in hash-table order, which changes with every process start; these replies list them sorted
 * by name.
 */
import type { Protocol } from '../resp/protocol.js';
import { ReplyWriter } from '../resp/reply-writer.js';
import { fullDocs, type CommandData, type Plain, type PlainMap } from './data.js';
import { globToRegExp } from './glob.js';
import { allCommandsAndSubcommands, tableData, type CommandSpec } from './table.js';

export type { Protocol };

// Commands and subcommands by full name, made at the first COMMAND INFO/DOCS of a name: ~3 ms of a proxy's
// start otherwise (bench/README.md, "The proxy's start, fourth pass").
let byFullName: Map<string, CommandData> | undefined;
function commandsByFullName(): Map<string, CommandData> {
  if (byFullName === undefined) {
    byFullName = new Map();
    for (const c of tableData) {
      byFullName.set(c.name, c);
      for (const s of c.subcommands ?? []) byFullName.set(s.name, s);
    }
  }
  return byFullName;
}

/** Key specs and arguments: strings are bulk, numbers integers, `flags` a set of status replies. */
function plain(w: ReplyWriter, v: Plain, key?: string): void {
  if (typeof v === 'string') return void w.bulk(v);
  if (typeof v === 'number') return void w.integer(v);
  if (v === null) return void w.nullBulk();
  if (Array.isArray(v)) {
    if (key === 'flags') {
      w.setHeader(v.length);
      for (const f of v) w.simple(f as string);
      return;
    }
    w.arrayHeader(v.length);
    for (const x of v) plain(w, x);
    return;
  }
  plainMap(w, v);
}

function plainMap(w: ReplyWriter, m: PlainMap): void {
  const keys = Object.keys(m);
  w.mapHeader(keys.length);
  for (const k of keys) {
    w.bulk(k);
    plain(w, m[k], k);
  }
}

function info(w: ReplyWriter, c: CommandData): void {
  w.arrayHeader(10);
  w.bulk(c.name);
  w.integer(c.arity);
  w.setHeader(c.flags.length);
  for (const f of c.flags) w.simple(f);
  w.integer(c.firstKey);
  w.integer(c.lastKey);
  w.integer(c.step);
  w.setHeader(c.aclCategories.length);
  for (const a of c.aclCategories) w.simple(a);
  w.setHeader(c.tips.length);
  for (const t of c.tips) w.bulk(t);
  w.setHeader(c.keySpecs.length);
  for (const k of c.keySpecs) plainMap(w, k);
  // addReplyCommandSubCommands: an empty set without subcommands, else an array.
  const subs = c.subcommands ?? [];
  if (subs.length) w.arrayHeader(subs.length);
  else w.setHeader(0);
  for (const s of subs) info(w, s);
}

function docs(w: ReplyWriter, c: CommandData): void {
  const d = fullDocs(c);
  const subs = c.subcommands;
  let n = 1; // group
  for (const v of [d.summary, d.since, d.complexity, d.module, d.docFlags, d.deprecatedSince, d.replacedBy, d.history, d.arguments, subs]) {
    if (v !== undefined) n++;
  }
  w.mapHeader(n);
  if (d.summary !== undefined) w.bulk('summary').bulk(d.summary);
  if (d.since !== undefined) w.bulk('since').bulk(d.since);
  w.bulk('group');
  w.bulk(d.group);
  if (d.complexity !== undefined) w.bulk('complexity').bulk(d.complexity);
  if (d.module !== undefined) w.bulk('module').bulk(d.module);
  if (d.docFlags !== undefined) {
    w.bulk('doc_flags');
    w.setHeader(d.docFlags.length);
    for (const f of d.docFlags) w.simple(f);
  }
  if (d.deprecatedSince !== undefined) w.bulk('deprecated_since').bulk(d.deprecatedSince);
  if (d.replacedBy !== undefined) w.bulk('replaced_by').bulk(d.replacedBy);
  if (d.history !== undefined) {
    w.bulk('history');
    w.setHeader(d.history.length);
    for (const [version, text] of d.history) w.arrayHeader(2).bulk(version).bulk(text);
  }
  if (d.arguments !== undefined) {
    w.bulk('arguments');
    w.arrayHeader(d.arguments.length);
    for (const a of d.arguments) plainMap(w, a);
  }
  if (subs !== undefined) {
    w.bulk('subcommands');
    w.mapHeader(subs.length);
    for (const s of subs) docs(w.bulk(s.name), s);
  }
}

function find(name: string | Buffer): CommandData | undefined {
  const s = typeof name === 'string' ? name : name.toString('latin1');
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return undefined;
  return commandsByFullName().get(s.toLowerCase());
}

const cache = new Map<string, Buffer>();
function cached(key: string, make: () => Buffer): Buffer {
  let b = cache.get(key);
  if (!b) cache.set(key, (b = make()));
  return b;
}

/** One COMMAND INFO entry (`get`, or `client|list` for a subcommand), or undefined for an unknown name. */
export function commandInfoEntry(fullname: string, proto: Protocol): Buffer | undefined {
  const c = find(fullname);
  if (!c) return undefined;
  return cached(`i${proto}${c.name}`, () => {
    const w = new ReplyWriter(proto);
    info(w, c);
    return w.toBuffer();
  });
}

/** One COMMAND DOCS value (the map, without the name before it), or undefined for an unknown name. */
export function commandDocsEntry(fullname: string, proto: Protocol): Buffer | undefined {
  const c = find(fullname);
  if (!c) return undefined;
  return cached(`d${proto}${c.name}`, () => {
    const w = new ReplyWriter(proto);
    docs(w, c);
    return w.toBuffer();
  });
}

/**
 * The reply of `COMMAND` (names undefined) or `COMMAND INFO name...` (all commands when no names are
 * given): one entry per name, a null for an unknown name, names resolved like Redis (`client|list` works).
 */
export function commandInfoReply(names: readonly (string | Buffer)[] | undefined, proto: Protocol): Buffer {
  if (!names || names.length === 0) {
    return cached(`I${proto}`, () => {
      const w = new ReplyWriter(proto);
      w.arrayHeader(tableData.length);
      for (const c of tableData) info(w, c);
      return w.toBuffer();
    });
  }
  const parts: Buffer[] = [Buffer.from(`*${names.length}\r\n`)];
  for (const n of names) {
    const c = find(n);
    parts.push(c ? commandInfoEntry(c.name, proto)! : Buffer.from(proto === 3 ? '_\r\n' : '$-1\r\n'));
  }
  return Buffer.concat(parts);
}

/** The reply of `COMMAND DOCS [name...]`: a map of full name to docs; unknown names are left out. */
export function commandDocsReply(names: readonly (string | Buffer)[] | undefined, proto: Protocol): Buffer {
  const found = !names || names.length === 0 ? undefined : names.map(find).filter((c): c is CommandData => c !== undefined);
  if (!found) {
    return cached(`D${proto}`, () => {
      const w = new ReplyWriter(proto);
      w.mapHeader(tableData.length);
      for (const c of tableData) docs(w.bulk(c.name), c);
      return w.toBuffer();
    });
  }
  const head = new ReplyWriter(proto);
  head.mapHeader(found.length);
  const parts: Buffer[] = [head.toBuffer()];
  for (const c of found) parts.push(Buffer.from(`$${c.name.length}\r\n${c.name}\r\n`), commandDocsEntry(c.name, proto)!);
  return Buffer.concat(parts);
}

const SYNTAX_ERROR = Buffer.from('-ERR syntax error\r\n');

/** The reply of `COMMAND COUNT`: the top-level commands COMMAND lists. */
export function commandCountReply(proto: Protocol): Buffer {
  return new ReplyWriter(proto).integer(tableData.length).toBuffer();
}

/**
 * The reply of `COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]` (server.c
 * commandListCommand): every command and subcommand that passes the filter. One FILTERBY and nothing else
 * (Redis wants exactly its two values after it); module and category names match case-insensitively,
 * patterns as glob without case.
 */
export function commandListReply(proto: Protocol, options: readonly Buffer[]): Buffer {
  let keep: ((s: CommandSpec) => boolean) | undefined;
  if (options.length > 0) {
    if (options.length !== 3 || options[0].toString('latin1').toLowerCase() !== 'filterby') return SYNTAX_ERROR;
    const kind = options[1].toString('latin1').toLowerCase();
    const value = options[2].toString('latin1');
    if (kind === 'module') keep = (s) => s.module !== undefined && s.module.toLowerCase() === value.toLowerCase();
    else if (kind === 'aclcat') keep = (s) => s.aclCategories.has(`@${value.toLowerCase()}`);
    else if (kind === 'pattern') {
      const re = globToRegExp(value, true);
      keep = (s) => re.test(s.name);
    } else return SYNTAX_ERROR;
  }
  const specs = keep ? allCommandsAndSubcommands().filter(keep) : allCommandsAndSubcommands();
  const w = new ReplyWriter(proto);
  w.arrayHeader(specs.length);
  for (const s of specs) w.bulk(s.name);
  return w.toBuffer();
}

/**
 * The encoders for another port's command data (the side ports' tables, server/command-table.ts):
 * one COMMAND INFO entry and one COMMAND DOCS value, written as the proxy writes its own.
 */
export { info as writeCommandInfo, docs as writeCommandDocs };
