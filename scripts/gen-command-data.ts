/**
 * Generates src/commands/redis-7.0.15.json, the command data of Redis 7.0.15, from a real redis-server:
 * `COMMAND INFO` (arity, flags, key positions, ACL categories, tips, key specs, subcommands) and
 * `COMMAND DOCS` (summary, since, group, complexity, doc flags, deprecation, history, arguments).
 *
 *   npx tsx scripts/gen-command-data.ts [--redis-server /usr/bin/redis-server] [--out src/commands/redis-7.0.15.json]
 *
 * The output is deterministic: commands and subcommands are sorted by name (Redis lists them in hash order,
 * which changes from run to run); every other list and every map keeps the order Redis sends, so that
 * src/commands/introspection.ts can re-encode COMMAND INFO / COMMAND DOCS byte for byte.
 *
 * This file also exports the small redis-server launcher and raw RESP client that the differential tests
 * under test/commands/ use (a typed RESP3 reader that keeps status vs bulk, set vs array, raw bytes).
 */
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CommandData, CommandDataFile, CommandDocsData, Plain } from '../src/commands/data.js';
import { startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { encodeCommands } from '../src/resp/request-writer.js';

export const REDIS_VERSION = '7.0.15';

// ---------------------------------------------------------------------------------------------------------------
// A throwaway redis-server on a free loopback port (the platform's own launcher, without a password).

export interface RedisServer {
  port: number;
  stop(): Promise<void>;
}

export async function startRedisServer(binary = process.env.REDIS_SERVER ?? 'redis-server'): Promise<RedisServer> {
  const server = await startEmbeddedRedis({ binary, password: null });
  return { port: server.endpoint.port, stop: server.stop };
}

// ---------------------------------------------------------------------------------------------------------------
// A raw RESP client: sends multibulk requests, returns typed replies together with their exact bytes.

export type Reply =
  | { type: 'status'; text: string; raw: Buffer }
  | { type: 'error'; text: string; raw: Buffer }
  | { type: 'int'; value: number; raw: Buffer }
  | { type: 'bulk'; value: Buffer | null; text: string; raw: Buffer }
  | { type: 'double' | 'bignum' | 'bool' | 'null'; text: string; raw: Buffer }
  | { type: 'array' | 'set' | 'push'; items: Reply[] | null; raw: Buffer }
  | { type: 'map'; entries: [Reply, Reply][]; raw: Buffer };

/** Parses one reply at `pos`; returns undefined when the buffer holds only part of it. */
export function parseReply(buf: Buffer, pos = 0): { reply: Reply; end: number } | undefined {
  const eol = buf.indexOf('\r\n', pos);
  if (eol < 0) return undefined;
  const kind = String.fromCharCode(buf[pos]);
  const line = buf.toString('latin1', pos + 1, eol);
  const next = eol + 2;
  const raw = (end: number) => buf.subarray(pos, end);
  switch (kind) {
    case '+':
      return { reply: { type: 'status', text: buf.toString('utf8', pos + 1, eol), raw: raw(next) }, end: next };
    case '-':
      return { reply: { type: 'error', text: buf.toString('utf8', pos + 1, eol), raw: raw(next) }, end: next };
    case ':':
      return { reply: { type: 'int', value: Number(line), raw: raw(next) }, end: next };
    case ',':
    case '(':
    case '#':
    case '_': {
      const type = kind === ',' ? 'double' : kind === '(' ? 'bignum' : kind === '#' ? 'bool' : 'null';
      return { reply: { type, text: line, raw: raw(next) }, end: next };
    }
    case '$':
    case '=':
    case '!': {
      const len = Number(line);
      if (len < 0) return { reply: { type: 'bulk', value: null, text: '', raw: raw(next) }, end: next };
      if (buf.length < next + len + 2) return undefined;
      const value = buf.subarray(next, next + len);
      const end = next + len + 2;
      if (kind === '!') return { reply: { type: 'error', text: value.toString('utf8'), raw: raw(end) }, end };
      return { reply: { type: 'bulk', value, text: value.toString('utf8'), raw: raw(end) }, end };
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      const n = Number(line);
      if (n < 0) return { reply: { type: 'array', items: null, raw: raw(next) }, end: next };
      const count = kind === '%' || kind === '|' ? 2 * n : n;
      const items: Reply[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const r = parseReply(buf, at);
        if (!r) return undefined;
        items.push(r.reply);
        at = r.end;
      }
      if (kind === '%' || kind === '|') {
        const entries: [Reply, Reply][] = [];
        for (let i = 0; i < items.length; i += 2) entries.push([items[i], items[i + 1]]);
        return { reply: { type: 'map', entries, raw: raw(at) }, end: at };
      }
      const type = kind === '*' ? 'array' : kind === '~' ? 'set' : 'push';
      return { reply: { type, items, raw: raw(at) }, end: at };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(kind)} at ${pos}`);
  }
}

export class RawRedis {
  private buf: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
  private closed: Error | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      for (;;) {
        if (!this.waiting.length || !this.buf.length) break;
        const r = parseReply(this.buf);
        if (!r) break;
        this.buf = this.buf.subarray(r.end);
        this.waiting.shift()!.resolve(r.reply);
      }
    });
    const fail = (e: Error) => {
      this.closed ??= e;
      for (const w of this.waiting.splice(0)) w.reject(e);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawRedis> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, host);
      s.once('connect', () => {
        s.off('error', reject);
        resolve(new RawRedis(s));
      });
      s.once('error', reject);
    });
  }

  /** Sends one command; resolves with its typed reply (raw bytes included). */
  call(...args: (string | Buffer)[]): Promise<Reply> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.socket.write(encodeCommands([args]));
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The JSON document.

function str(r: Reply): string {
  if (r.type === 'bulk' || r.type === 'status') return r.text;
  throw new Error(`expected a string, got ${r.type}`);
}
function int(r: Reply): number {
  if (r.type !== 'int') throw new Error(`expected an integer, got ${r.type}`);
  return r.value;
}
function list(r: Reply): Reply[] {
  if ((r.type === 'array' || r.type === 'set') && r.items) return r.items;
  throw new Error(`expected a list, got ${r.type}`);
}
function entries(r: Reply): [string, Reply][] {
  if (r.type !== 'map') throw new Error(`expected a map, got ${r.type}`);
  return r.entries.map(([k, v]) => [str(k), v]);
}

/** Converts a reply to plain JSON (types are implied by field names; test/commands/introspection.test.ts checks the re-encoding). */
function plain(r: Reply): Plain {
  switch (r.type) {
    case 'bulk':
    case 'status':
      return r.text;
    case 'int':
      return r.value;
    case 'array':
    case 'set':
      return list(r).map(plain);
    case 'map': {
      const o: { [k: string]: Plain } = {};
      for (const [k, v] of entries(r)) o[k] = plain(v);
      return o;
    }
    default:
      throw new Error(`unexpected reply type ${r.type} in command data`);
  }
}

function parseInfo(r: Reply): Omit<CommandData, 'docs'> {
  const f = list(r);
  if (f.length !== 10) throw new Error(`COMMAND INFO entry has ${f.length} fields`);
  const subs = list(f[9]).map(parseInfo);
  const out: Omit<CommandData, 'docs'> = {
    name: str(f[0]),
    arity: int(f[1]),
    flags: list(f[2]).map(str),
    firstKey: int(f[3]),
    lastKey: int(f[4]),
    step: int(f[5]),
    aclCategories: list(f[6]).map(str),
    tips: list(f[7]).map(str),
    keySpecs: list(f[8]).map((k) => plain(k) as { [k: string]: Plain }),
  };
  if (subs.length) (out as CommandData).subcommands = subs as CommandData[];
  return out;
}

interface DocsNode {
  docs: CommandDocsData;
  subcommands: Map<string, DocsNode>;
}

const DOCS_FIELDS = new Set([
  'summary',
  'since',
  'group',
  'complexity',
  'doc_flags',
  'deprecated_since',
  'replaced_by',
  'history',
  'arguments',
  'subcommands',
]);

function parseDocs(r: Reply): DocsNode {
  const docs: Partial<CommandDocsData> = {};
  const subcommands = new Map<string, DocsNode>();
  for (const [k, v] of entries(r)) {
    if (!DOCS_FIELDS.has(k)) throw new Error(`unknown COMMAND DOCS field ${k}`);
    if (k === 'summary') docs.summary = str(v);
    else if (k === 'since') docs.since = str(v);
    else if (k === 'group') docs.group = str(v);
    else if (k === 'complexity') docs.complexity = str(v);
    else if (k === 'doc_flags') docs.docFlags = list(v).map(str);
    else if (k === 'deprecated_since') docs.deprecatedSince = str(v);
    else if (k === 'replaced_by') docs.replacedBy = str(v);
    else if (k === 'history') docs.history = list(v).map((h) => list(h).map(str) as [string, string]);
    else if (k === 'arguments') docs.arguments = list(v).map((a) => plain(a) as { [k: string]: Plain });
    else if (k === 'subcommands') for (const [name, d] of entries(v)) subcommands.set(name, parseDocs(d));
  }
  if (docs.group === undefined) throw new Error('COMMAND DOCS entry without group');
  // Keep the docs fields in Redis' reply order (summary, since, group, complexity, doc_flags, ...).
  const o = {} as Record<string, unknown>;
  for (const key of [
    'summary',
    'since',
    'group',
    'complexity',
    'docFlags',
    'deprecatedSince',
    'replacedBy',
    'history',
    'arguments',
  ] as const) {
    if (docs[key] !== undefined) o[key] = docs[key];
  }
  return { docs: o as unknown as CommandDocsData, subcommands };
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function merge(info: Omit<CommandData, 'docs'>, docs: DocsNode | undefined, where: string): CommandData {
  if (!docs) throw new Error(`COMMAND DOCS lacks ${where}`);
  const out: CommandData = {
    name: info.name,
    arity: info.arity,
    flags: info.flags,
    firstKey: info.firstKey,
    lastKey: info.lastKey,
    step: info.step,
    aclCategories: info.aclCategories,
    tips: info.tips,
    keySpecs: info.keySpecs,
    docs: docs.docs,
  };
  const subs = (info as CommandData).subcommands;
  if (subs) {
    if (subs.length !== docs.subcommands.size) throw new Error(`${where}: subcommand counts differ`);
    out.subcommands = subs.map((s) => merge(s, docs.subcommands.get(s.name), s.name)).sort(byName);
  }
  return out;
}

export async function collectCommandData(port: number): Promise<CommandDataFile> {
  const c = await RawRedis.connect(port);
  try {
    const hello = await c.call('HELLO', '3');
    if (hello.type !== 'map') throw new Error('HELLO 3 failed');
    const version = entries(hello).find(([k]) => k === 'version');
    const v = version ? str(version[1]) : '?';
    if (v !== REDIS_VERSION) throw new Error(`redis-server is ${v}, expected ${REDIS_VERSION}`);
    const infoReply = await c.call('COMMAND', 'INFO');
    const docsReply = await c.call('COMMAND', 'DOCS');
    const infos = list(infoReply).map(parseInfo);
    const docs = new Map(entries(docsReply).map(([name, d]) => [name, parseDocs(d)] as const));
    if (docs.size !== infos.length) throw new Error(`COMMAND INFO has ${infos.length} commands, COMMAND DOCS ${docs.size}`);
    const commands = infos.map((i) => merge(i, docs.get(i.name), i.name)).sort(byName);
    return { redisVersion: v, generatedBy: 'scripts/gen-command-data.ts', commands };
  } finally {
    c.close();
  }
}

/**
 * Formats the document with one JSON value per line down to the argument level, but short lists and
 * maps on one line, so that the file diffs well and stays a reasonable size.
 */
export function formatCommandData(data: CommandDataFile): string {
  const fmt = (v: unknown, indent: string): string => {
    const flat = JSON.stringify(v);
    if (flat.length + indent.length <= 120 || v === null || typeof v !== 'object') return flat;
    const inner = indent + ' ';
    if (Array.isArray(v)) return `[\n${v.map((x) => inner + fmt(x, inner)).join(',\n')}\n${indent}]`;
    const lines = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${fmt(x, inner)}`);
    return `{\n${lines.join(',\n')}\n${indent}}`;
  };
  return fmt(data, '') + '\n';
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const out = opt('--out') ?? path.join(root, 'src/commands/redis-7.0.15.json');
  const server = await startRedisServer(opt('--redis-server'));
  try {
    process.stderr.write(`gen-command-data: redis-server on port ${server.port}, reading COMMAND INFO and COMMAND DOCS\n`);
    const data = await collectCommandData(server.port);
    const text = formatCommandData(data);
    writeFileSync(out, text);
    const subs = data.commands.reduce((n, c) => n + (c.subcommands?.length ?? 0), 0);
    process.stderr.write(`gen-command-data: wrote ${out} (${data.commands.length} commands, ${subs} subcommands, ${text.length} bytes)\n`);
  } finally {
    await server.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((e: unknown) => {
    process.stderr.write(`gen-command-data: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
}
