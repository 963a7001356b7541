// The commands of a table port (a side port) described as data, like Redis' src/commands/*.json:
// arity, flags, key position, arguments and summary. The same description drives dispatch, arity
// errors, COMMAND INFO, COMMAND DOCS (redis-cli builds its hints from it), HELP and the docs.
import type { ReplyWriter } from '../resp/reply-writer.js';
import type { CommandData, CommandDocsData, PlainMap } from '../commands/data.js';
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
export interface PortArg {
  name: string;
  type: 'key' | 'string' | 'integer' | 'double' | 'pattern' | 'pure-token' | 'oneof' | 'block' | 'unix-time';
  token?: string;
  optional?: boolean;
  multiple?: boolean;
  arguments?: PortArg[];
}

export interface PortCommand {
  /** Lower case; `container|sub` for a subcommand. */
  name: string;
  /**
   * The name as Redis prints it in COMMAND INFO/DOCS and arity errors, when not `name`: a module's
   * commands keep the case they were registered with (Redis 8's vector sets: `VADD`).
   */
  displayName?: string;
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
  /** Distance between keys, as Redis' `step`; default 1 when the command has a key. */
  step?: number;
  args?: PortArg[];
  /** What the command maps to upstream, for HELP and the docs. */
  upstream?: string;
  /** Absent for the handshake commands, which every port runs alike (server/commands/). */
  run?: Handler;
  /**
   * Runs consecutive requests of one connection together (one reply or error per call, in order);
   * used instead of `run` when present, so a pipeline of VADDs becomes one batch of REST calls.
   */
  runGroup?: (calls: Call[]) => Promise<(Reply | Error)[]>;
  subcommands?: PortCommand[];
}

export class CommandTable {
  private readonly byName = new Map<string, PortCommand>();
  readonly all: PortCommand[];

  constructor(specs: PortCommand[]) {
    this.all = [...specs].sort((a, b) => a.name.localeCompare(b.name));
    for (const s of this.all) this.byName.set(s.name, s);
  }

  get(name: Buffer | string): PortCommand | undefined {
    const s = (typeof name === 'string' ? name : name.toString('latin1')).toLowerCase();
    if (s.includes('|')) {
      const [c, sub] = s.split('|', 2);
      return this.byName.get(c)?.subcommands?.find((x) => x.name === `${c}|${sub}`);
    }
    return this.byName.get(s);
  }

  private readonly dataOf = new WeakMap<PortCommand, CommandData>();

  /** The command in src/commands/' shape (COMMAND INFO / DOCS), built once. */
  data(spec: PortCommand): CommandData {
    let d = this.dataOf.get(spec);
    if (!d) this.dataOf.set(spec, (d = toCommandData(spec)));
    return d;
  }
}

/** The one-line syntax of a command: `VADD key (FP32 blob | VALUES num value …) element [CAS] …` */
export function syntax(spec: PortCommand): string {
  const name = spec.name.replace('|', ' ').toUpperCase();
  return [name, ...(spec.args ?? []).map(argSyntax)].join(' ');
}

function argSyntax(a: PortArg): string {
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

// ---- The same data in the shape of src/commands/ (Redis' command JSON), for COMMAND INFO / DOCS ----

/** The key spec Redis would give a single-range command (begin at firstKey, up to lastKey). */
function keySpecs(c: PortCommand): PlainMap[] {
  const key = c.firstKey ?? 0;
  if (!key) return [];
  const last = c.lastKey ?? key;
  const range = { type: 'range', spec: { lastkey: last < 0 ? -1 : last - key, keystep: c.step ?? 1, limit: 0 } };
  // A module command declared by its key positions gets Redis' legacy key spec: RW access update.
  if (c.flags.includes('module'))
    return [{ flags: ['RW', 'access', 'update'], begin_search: { type: 'index', spec: { index: key } }, find_keys: range }];
  const spec: PlainMap = {
    notes: 'the key is the namespace of the vector index',
    flags: [c.flags.includes('write') ? 'RW' : 'RO'],
    begin_search: { type: 'index', spec: { index: key } },
    find_keys: range,
  };
  return [spec];
}

function argData(a: PortArg): PlainMap {
  const m: PlainMap = { name: a.name, type: a.type };
  if (a.type === 'key') m.key_spec_index = 0;
  if (a.token) m.token = a.token;
  const flags = [...(a.optional ? ['optional'] : []), ...(a.multiple ? ['multiple'] : [])];
  if (flags.length) m.flags = flags;
  if (a.arguments) m.arguments = a.arguments.map(argData);
  return m;
}

/** A port command as src/commands/ describes a Redis command, so one encoder answers COMMAND on every port. */
export function toCommandData(c: PortCommand): CommandData {
  const key = c.firstKey ?? 0;
  const docs: CommandDocsData = { summary: c.summary, since: c.since ?? '0.1.0', group: c.group };
  if (c.complexity) docs.complexity = c.complexity;
  docs.arguments = (c.args ?? []).map(argData);
  const data: CommandData = {
    name: c.displayName ?? c.name,
    arity: c.arity,
    flags: c.flags,
    firstKey: key,
    lastKey: key ? (c.lastKey ?? key) : 0,
    step: key ? (c.step ?? 1) : 0,
    aclCategories: c.acl,
    tips: [],
    keySpecs: keySpecs(c),
    docs,
  };
  if (c.subcommands) data.subcommands = c.subcommands.map(toCommandData);
  return data;
}

/** Help lines of one command (`<CMD> HELP`, `HELP <cmd>`): its syntax, summary and subcommands. */
export function helpLines(spec: PortCommand): string[] {
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
