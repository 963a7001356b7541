// The commands of a table port (a side port) described as data, like Redis' src/commands/*.json:
// arity, flags, key position, arguments and summary. The same description drives dispatch, arity
// errors, COMMAND INFO, COMMAND DOCS (redis-cli builds its hints from it), HELP and the docs.
import type { ReplyWriter } from '../resp/reply-writer.js';
import type { Connection, ServerState } from './context.js';

/** A reply: bytes already encoded, or a function that writes it in the connection's protocol. */
export type Reply = Buffer | ((w: ReplyWriter) => void);

/** A command failed with a RESP error; `message` starts with its code (ERR, WRONGTYPE, NOAUTH…). */
export class CommandError extends Error {}

/** The port a table command runs on, as its handlers see it (INFO, COMMAND, HELP). */
export interface TablePortInfo {
  /** `vector` or `queue`: shown in INFO, HELP and errors. */
  readonly role: string;
  readonly table: CommandTable;
  readonly server: ServerState;
  /** Lines of INFO's `# Upstream` section (no secrets). */
  upstreamInfo(): string[];
}

/** What a table command's handler sees of its connection: the shared Connection, and its port. */
export interface TableConnection extends Connection {
  readonly port: TablePortInfo;
}

export interface Call {
  /** The whole request: args[0] is the command name (subcommand at args[1] for containers). */
  args: Buffer[];
  conn: TableConnection;
}

export type Handler = (call: Call) => Reply | Promise<Reply>;

/** One argument as COMMAND DOCS describes it (Redis 7 argument schema). */
export interface ArgSpec {
  name: string;
  type: 'key' | 'string' | 'integer' | 'double' | 'pattern' | 'pure-token' | 'oneof' | 'block' | 'unix-time';
  token?: string;
  optional?: boolean;
  multiple?: boolean;
  arguments?: ArgSpec[];
}

export interface CommandSpec {
  /** Lower case; `container|sub` for a subcommand. */
  name: string;
  /** Redis arity: n = exactly n words (with the name), -n = at least n. */
  arity: number;
  summary: string;
  group: string;
  since?: string;
  complexity?: string;
  flags: string[];
  acl: string[];
  /** Position of the key (the namespace), 0 when the command has none. */
  firstKey?: number;
  /** Last key position (-1: every argument from firstKey on, as DEL); default firstKey. */
  lastKey?: number;
  args?: ArgSpec[];
  /** What the command maps to upstream, for HELP and the docs. */
  upstream?: string;
  /** Absent for the handshake commands, which every port runs alike (server/commands/). */
  run?: Handler;
  /**
   * Runs consecutive requests of one connection together (one reply or error per call, in order);
   * used instead of `run` when present, so a pipeline of VADDs becomes one batch of REST calls.
   */
  runGroup?: (calls: Call[]) => Promise<(Reply | Error)[]>;
  subcommands?: CommandSpec[];
}

export class CommandTable {
  private readonly byName = new Map<string, CommandSpec>();
  readonly all: CommandSpec[];

  constructor(specs: CommandSpec[]) {
    this.all = [...specs].sort((a, b) => a.name.localeCompare(b.name));
    for (const s of this.all) this.byName.set(s.name, s);
  }

  get(name: Buffer | string): CommandSpec | undefined {
    const s = (typeof name === 'string' ? name : name.toString('latin1')).toLowerCase();
    if (s.includes('|')) {
      const [c, sub] = s.split('|', 2);
      return this.byName.get(c)?.subcommands?.find((x) => x.name === `${c}|${sub}`);
    }
    return this.byName.get(s);
  }
}

/** The one-line syntax of a command: `VADD key (FP32 blob | VALUES num value …) element [CAS] …` */
export function syntax(spec: CommandSpec): string {
  const name = spec.name.replace('|', ' ').toUpperCase();
  return [name, ...(spec.args ?? []).map(argSyntax)].join(' ');
}

function argSyntax(a: ArgSpec): string {
  let s: string;
  if (a.type === 'pure-token') s = a.token!;
  else if (a.type === 'oneof') s = (a.optional ? '' : '(') + a.arguments!.map(argSyntax).join(' | ') + (a.optional ? '' : ')');
  else if (a.type === 'block') s = a.arguments!.map(argSyntax).join(' ');
  else s = a.name;
  // A token introduces its argument, a choice or a block alike (VSIM … [QUERYMODE HYBRID | DENSE | SPARSE]).
  if (a.token && a.type !== 'pure-token') s = `${a.token} ${s}`;
  if (a.multiple) s = `${s} [${s} ...]`;
  return a.optional ? `[${s}]` : s;
}

// ---- COMMAND INFO / COMMAND DOCS, in the layout of Redis 7.0 (server.c addReplyCommandInfo/Docs) ----

export function writeCommandInfo(w: ReplyWriter, c: CommandSpec): void {
  w.arrayHeader(10);
  w.bulk(c.name);
  w.integer(c.arity);
  w.setHeader(c.flags.length);
  for (const f of c.flags) w.simple(f);
  const key = c.firstKey ?? 0;
  const last = c.lastKey ?? key;
  w.integer(key);
  w.integer(last);
  w.integer(key ? 1 : 0);
  w.setHeader(c.acl.length);
  for (const a of c.acl) w.simple(a);
  w.setHeader(0); // tips
  if (key) {
    w.setHeader(1);
    w.mapHeader(4);
    w.bulk('flags')
      .setHeader(1)
      .simple(c.flags.includes('write') ? 'RW' : 'RO');
    w.bulk('begin_search').mapHeader(2).bulk('type').bulk('index').bulk('spec').mapHeader(1).bulk('index').integer(key);
    w.bulk('find_keys')
      .mapHeader(2)
      .bulk('type')
      .bulk('range')
      .bulk('spec')
      .mapHeader(3)
      .bulk('lastkey')
      .integer(last < 0 ? -1 : 0)
      .bulk('keystep')
      .integer(1)
      .bulk('limit')
      .integer(0);
    w.bulk('notes').bulk('the key is the namespace of the vector index');
  } else w.setHeader(0);
  const subs = c.subcommands ?? [];
  if (subs.length) w.arrayHeader(subs.length);
  else w.setHeader(0);
  for (const s of subs) writeCommandInfo(w, s);
}

export function writeCommandDocs(w: ReplyWriter, c: CommandSpec): void {
  const args = c.args ?? [];
  const subs = c.subcommands;
  w.mapHeader(3 + (c.complexity ? 1 : 0) + (subs ? 1 : 0) + 1);
  w.bulk('summary').bulk(c.summary);
  w.bulk('since').bulk(c.since ?? '0.1.0');
  w.bulk('group').bulk(c.group);
  if (c.complexity) w.bulk('complexity').bulk(c.complexity);
  w.bulk('arguments').arrayHeader(args.length);
  for (const a of args) writeArgDocs(w, a);
  if (subs) {
    w.bulk('subcommands').mapHeader(subs.length);
    for (const s of subs) {
      w.bulk(s.name);
      writeCommandDocs(w, s);
    }
  }
}

function writeArgDocs(w: ReplyWriter, a: ArgSpec): void {
  const flags = [...(a.optional ? ['optional'] : []), ...(a.multiple ? ['multiple'] : [])];
  const n = 2 + (a.type === 'key' ? 1 : 0) + (a.token ? 1 : 0) + (flags.length ? 1 : 0) + (a.arguments ? 1 : 0);
  w.mapHeader(n);
  w.bulk('name').bulk(a.name);
  w.bulk('type').bulk(a.type);
  if (a.type === 'key') w.bulk('key_spec_index').integer(0);
  if (a.token) w.bulk('token').bulk(a.token);
  if (flags.length) {
    w.bulk('flags').setHeader(flags.length);
    for (const f of flags) w.simple(f);
  }
  if (a.arguments) {
    w.bulk('arguments').arrayHeader(a.arguments.length);
    for (const x of a.arguments) writeArgDocs(w, x);
  }
}

/** Help lines of one command (`<CMD> HELP`, `HELP <cmd>`): its syntax, summary and subcommands. */
export function helpLines(spec: CommandSpec): string[] {
  if (spec.subcommands) {
    const lines = [`${spec.name.toUpperCase()} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:`];
    for (const s of spec.subcommands) {
      lines.push(syntax(s).slice(spec.name.length + 1));
      lines.push(`    ${s.summary}`);
    }
    lines.push('HELP', '    Print this help.');
    return lines;
  }
  const lines = [syntax(spec), `    ${spec.summary}`];
  if (spec.upstream) lines.push(`    Upstream: ${spec.upstream}`);
  return lines;
}

/** Help text as Redis' addReplyHelp sends it: an array of status lines. */
export function help(lines: string[]): Reply {
  return (w) => {
    w.arrayHeader(lines.length);
    for (const l of lines) w.simple(l);
  };
}
