/**
 * Records src/commands/redis-8.8.0.json, the command data of Redis 8.8.0, from a running redis-server 8.8.0:
 * `COMMAND INFO` (arity, flags, key positions, ACL categories, tips, key specs, subcommands) and
 * `COMMAND DOCS` (summary, since, group, complexity, module, doc flags, deprecation, history, arguments),
 * and the fixture test/fixtures/commands-redis8/replies.json: the SHA-256 of Redis' exact bytes of
 * `COMMAND INFO name` and `COMMAND DOCS name` for every command and subcommand, and Redis' exact replies to
 * the cases of test/fixtures/commands-redis8/cases.ts (GETKEYS, LIST FILTERBY, COUNT, errors), in RESP2 and
 * RESP3. CI has no Redis 8: test/commands/ compares the proxy's replies with these recordings.
 *
 *   redis-server(8.8.0) --port 16388 --save '' --appendonly no &      # bring your own; this script builds nothing
 *   npx tsx scripts/gen-command-data.ts --port 16388 [--host 127.0.0.1] [--out src/commands/redis-8.8.0.json]
 *                                      [--replies test/fixtures/commands-redis8/replies.json] [--expect 8.8.0]
 *
 * It only reads (COMMAND ...), so any idle Redis 8.8.0 will do; it refuses another version. The output is
 * deterministic: commands and subcommands are sorted by name (Redis lists them in hash order, which changes
 * from run to run); every other list and every map keeps the order Redis sends, so that
 * src/commands/introspection.ts can re-encode COMMAND INFO / COMMAND DOCS byte for byte.
 *
 * This file also exports the small redis-server launcher, the raw RESP client and the reply canonicalisers
 * that the tests under test/commands/ use (a typed RESP3 reader that keeps status vs bulk, set vs array,
 * raw bytes).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CommandData, CommandDataFile, CommandDocsData, Plain } from '../src/commands/data.js';
import { startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { COMMAND_CASES } from '../test/fixtures/commands-redis8/cases.js';
import { canonical, canonDocsMap, canonInfoList, RawRedis, sha256, type RecordedReplies, type Reply } from './resp-replies.js';

export { parseReply, RawRedis, type Reply } from './resp-replies.js';

/** The Redis version the command data is recorded from. */
export const RECORDED_VERSION = '8.8.0';

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
  'module',
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
    else if (k === 'module') docs.module = str(v);
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
    'module',
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

export async function collectCommandData(port: number, host = '127.0.0.1', expect = RECORDED_VERSION): Promise<CommandDataFile> {
  const c = await RawRedis.connect(port, host);
  try {
    const v = await serverVersion(c);
    if (v !== expect) throw new Error(`redis-server is ${v}, expected ${expect}`);
    const infoReply = await c.call('COMMAND', 'INFO');
    const docsReply = await c.call('COMMAND', 'DOCS');
    const infos = list(infoReply).map(parseInfo);
    const docs = new Map(entries(docsReply).map(([name, d]) => [name, parseDocs(d)] as const));
    if (docs.size !== infos.length) throw new Error(`COMMAND INFO has ${infos.length} commands, COMMAND DOCS ${docs.size}`);
    const commands = infos.map((i) => merge(i, docs.get(i.name), i.name)).sort(byName);
    return {
      redisVersion: v,
      generatedBy: `scripts/gen-command-data.ts: COMMAND INFO and COMMAND DOCS of a running redis-server ${v} (vector sets built in), in RESP3`,
      commands,
    };
  } finally {
    c.close();
  }
}

async function serverVersion(c: RawRedis): Promise<string> {
  const hello = await c.call('HELLO', '3');
  if (hello.type !== 'map') throw new Error('HELLO 3 failed');
  const version = entries(hello).find(([k]) => k === 'version');
  return version ? str(version[1]) : '?';
}

/**
 * Formats the document with one JSON value per line down to the argument level, but short lists and
 * maps on one line, so that the file diffs well and stays a reasonable size.
 */
export function formatCommandData(data: unknown): string {
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

export async function recordReplies(port: number, host: string, data: CommandDataFile): Promise<RecordedReplies> {
  const c2 = await RawRedis.connect(port, host);
  const c3 = await RawRedis.connect(port, host);
  try {
    await serverVersion(c3);
    const names = data.commands.flatMap((c) => [c, ...(c.subcommands ?? [])]).map((c) => c.name);
    const modules: Record<string, string> = {};
    for (const c of data.commands) if (c.docs.module !== undefined) modules[c.name] = c.docs.module;
    const entries: RecordedReplies['entries'] = {};
    for (const name of names) {
      const up = name.toUpperCase();
      const one = async (c: RawRedis) => ({
        info: sha256(canonInfoList(await c.call('COMMAND', 'INFO', up), false)),
        docs: sha256(canonDocsMap(await c.call('COMMAND', 'DOCS', up))),
      });
      const [r2, r3] = [await one(c2), await one(c3)];
      entries[name] = { info2: r2.info, info3: r3.info, docs2: r2.docs, docs3: r3.docs };
    }
    const cases: RecordedReplies['cases'] = [];
    for (const k of COMMAND_CASES) {
      const one = async (c: RawRedis) => canonical(await c.call(...k.args), k.canon).toString('latin1');
      const [resp2, resp3] = [await one(c2), await one(c3)];
      cases.push({ args: k.args, ...(k.canon ? { canon: k.canon } : {}), resp2, resp3 });
    }
    return {
      redisVersion: data.redisVersion,
      recordedBy: 'scripts/gen-command-data.ts from a running redis-server (vector sets built in)',
      names: [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      modules,
      entries,
      cases,
    };
  } finally {
    c2.close();
    c3.close();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const port = Number(opt('--port'));
  if (!Number.isInteger(port) || port <= 0) throw new Error('--port <port of a running redis-server 8.8.0> is required');
  const host = opt('--host') ?? '127.0.0.1';
  const out = opt('--out') ?? path.join(root, 'src/commands/redis-8.8.0.json');
  const repliesOut = opt('--replies') ?? path.join(root, 'test/fixtures/commands-redis8/replies.json');
  process.stderr.write(`gen-command-data: reading COMMAND INFO and COMMAND DOCS from ${host}:${port}\n`);
  const data = await collectCommandData(port, host, opt('--expect') ?? RECORDED_VERSION);
  const text = formatCommandData(data);
  writeFileSync(out, text);
  const subs = data.commands.reduce((n, c) => n + (c.subcommands?.length ?? 0), 0);
  process.stderr.write(`gen-command-data: wrote ${out} (${data.commands.length} commands, ${subs} subcommands, ${text.length} bytes)\n`);
  const replies = await recordReplies(port, host, data);
  writeFileSync(repliesOut, `${JSON.stringify(replies, null, 1)}\n`);
  process.stderr.write(`gen-command-data: wrote ${repliesOut} (${replies.names.length} entries, ${replies.cases.length} cases)\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((e: unknown) => {
    process.stderr.write(`gen-command-data: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
}
