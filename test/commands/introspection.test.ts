/**
 * COMMAND / COMMAND INFO / COMMAND DOCS re-encoded from redis-7.0.15.json must be byte-identical to a real
 * redis-server 7.0.15, in RESP2 and RESP3. Redis lists commands and subcommands in hash order (different in
 * every process), so its replies are put in name order first; nothing else is normalised.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawRedis, startRedisServer, type RedisServer, type Reply } from '../../scripts/gen-command-data.js';
import { commandData } from '../../src/commands/data.js';
import { commandDocsReply, commandInfoReply, type Protocol } from '../../src/commands/introspection.js';
import { allCommandsAndSubcommands } from '../../src/commands/table.js';

let server: RedisServer;
const conns = new Map<Protocol, RawRedis>();

beforeAll(async () => {
  server = await startRedisServer();
  conns.set(2, await RawRedis.connect(server.port));
  const c3 = await RawRedis.connect(server.port);
  expect((await c3.call('HELLO', '3')).type).toBe('map');
  conns.set(3, c3);
}, 30_000);

afterAll(async () => {
  for (const c of conns.values()) c.close();
  await server?.stop();
});

function children(r: Reply): Reply[] {
  if (r.type === 'map') return r.entries.flat();
  if ((r.type === 'array' || r.type === 'set' || r.type === 'push') && r.items) return r.items;
  return [];
}

/** The bytes of an aggregate's header (`*10\r\n`, `%7\r\n`, ...). */
function header(r: Reply): Buffer {
  const body = children(r).reduce((n, c) => n + c.raw.length, 0);
  return r.raw.subarray(0, r.raw.length - body);
}

const nameOf = (r: Reply) => (r.type === 'bulk' ? r.text : '');
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A COMMAND INFO entry with its subcommands in name order. */
function canonInfo(entry: Reply): Buffer {
  if (entry.type !== 'array' || !entry.items) return entry.raw;
  const f = entry.items;
  const subs = [...(f[9].type === 'array' && f[9].items ? f[9].items : [])].sort((a, b) =>
    cmp(nameOf((a as { items: Reply[] }).items[0]), nameOf((b as { items: Reply[] }).items[0])),
  );
  return Buffer.concat([header(entry), ...f.slice(0, 9).map((x) => x.raw), header(f[9]), ...subs.map(canonInfo)]);
}

/** The pairs of a map (RESP3) or of a flat key-value array (how RESP2 sends a map). */
function pairs(r: Reply): [Reply, Reply][] {
  if (r.type === 'map') return r.entries;
  const items = r.type === 'array' && r.items ? r.items : [];
  const out: [Reply, Reply][] = [];
  for (let i = 0; i + 1 < items.length; i += 2) out.push([items[i], items[i + 1]]);
  return out;
}

/** A map of name → COMMAND DOCS map, in name order, with nested subcommand maps in name order too. */
function canonDocsMap(map: Reply, sorted = true): Buffer {
  const entries = sorted ? [...pairs(map)].sort((a, b) => cmp(nameOf(a[0]), nameOf(b[0]))) : pairs(map);
  return Buffer.concat([header(map), ...entries.flatMap(([k, v]) => [k.raw, canonDocs(v)])]);
}

function canonDocs(docs: Reply): Buffer {
  return Buffer.concat([
    header(docs),
    ...pairs(docs).flatMap(([k, v]) => [k.raw, k.type === 'bulk' && k.text === 'subcommands' ? canonDocsMap(v) : v.raw]),
  ]);
}

/** A list of COMMAND INFO entries; `sorted` for COMMAND (all), request order for COMMAND INFO names. */
function canonInfoList(r: Reply, sorted = true): Buffer {
  if (r.type !== 'array' || !r.items) return r.raw;
  if (!sorted) return Buffer.concat([header(r), ...r.items.map(canonInfo)]);
  const items = [...r.items].sort((a, b) => {
    const na = a.type === 'array' && a.items ? nameOf(a.items[0]) : '';
    const nb = b.type === 'array' && b.items ? nameOf(b.items[0]) : '';
    return cmp(na, nb);
  });
  return Buffer.concat([header(r), ...items.map(canonInfo)]);
}

describe.each([2, 3] as const)('introspection replies in RESP%i', (proto) => {
  it('COMMAND equals redis-server (all commands)', async () => {
    const theirs = await conns.get(proto)!.call('COMMAND');
    const ours = commandInfoReply(undefined, proto);
    expect(ours.toString('latin1')).toBe(canonInfoList(theirs).toString('latin1'));
    expect(commandInfoReply([], proto).equals(ours)).toBe(true);
  });

  it('COMMAND DOCS equals redis-server (all commands)', async () => {
    const theirs = await conns.get(proto)!.call('COMMAND', 'DOCS');
    const ours = commandDocsReply(undefined, proto);
    expect(ours.toString('latin1')).toBe(canonDocsMap(theirs).toString('latin1'));
  });

  it('COMMAND INFO and COMMAND DOCS of each command and subcommand, by full name, equal redis-server', async () => {
    const c = conns.get(proto)!;
    const mismatches: string[] = [];
    for (const spec of allCommandsAndSubcommands()) {
      const name = spec.name.toUpperCase();
      const [info, docs] = await Promise.all([c.call('COMMAND', 'INFO', name), c.call('COMMAND', 'DOCS', name)]);
      if (!canonInfoList(info, false).equals(commandInfoReply([name], proto))) mismatches.push(`info ${spec.name}`);
      if (!canonDocsMap(docs).equals(commandDocsReply([name], proto))) mismatches.push(`docs ${spec.name}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('COMMAND INFO / DOCS with unknown and mixed names equal redis-server', async () => {
    const c = conns.get(proto)!;
    const names = ['get', 'nosuch', 'Client|List', 'get|x', 'client|', 'CONFIG', 'k\u212Aeys'];
    const info = await c.call('COMMAND', 'INFO', ...names);
    expect(commandInfoReply(names, proto).toString('latin1')).toBe(canonInfoList(info, false).toString('latin1'));
    const docs = await c.call('COMMAND', 'DOCS', ...names);
    expect(commandDocsReply(names, proto).toString('latin1')).toBe(canonDocsMap(docs, false).toString('latin1'));
    const none = await c.call('COMMAND', 'DOCS', 'nosuch');
    expect(commandDocsReply(['nosuch'], proto).equals(none.raw)).toBe(true);
  });
});

describe('command data file', () => {
  it('is Redis 7.0.15 with 240 commands, sorted, every subcommand named container|sub', () => {
    expect(commandData.redisVersion).toBe('7.0.15');
    expect(commandData.commands.length).toBe(240);
    const names = commandData.commands.map((c) => c.name);
    expect(names).toEqual([...names].sort(cmp));
    for (const c of commandData.commands) {
      for (const s of c.subcommands ?? []) expect(s.name.startsWith(`${c.name}|`)).toBe(true);
      const subs = (c.subcommands ?? []).map((s) => s.name);
      expect(subs).toEqual([...subs].sort(cmp));
    }
  });
});
