/**
 * COMMAND / COMMAND INFO / COMMAND DOCS re-encoded from the command table must be byte-identical to Redis
 * 8.8.0, in RESP2 and RESP3. CI has no Redis 8: the oracle is the recording of a real redis-server 8.8.0
 * (test/fixtures/commands-redis8/replies.json, scripts/gen-command-data.ts): the SHA-256 of its exact
 * `COMMAND INFO NAME` and `COMMAND DOCS NAME` replies for every command and subcommand (subcommands put in
 * name order, Redis' only nondeterminism). The proxy's replies for whole COMMAND requests go through the
 * real proxy in redis8-fixtures.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sha256, type RecordedReplies } from '../../scripts/resp-replies.js';
import { commandData } from '../../src/commands/data.js';
import {
  commandCountReply,
  commandDocsEntry,
  commandDocsReply,
  commandInfoEntry,
  commandInfoReply,
  commandListReply,
  type Protocol,
} from '../../src/commands/introspection.js';
import { allCommands, allCommandsAndSubcommands, lookupCommand, tableData } from '../../src/commands/table.js';

const recorded = JSON.parse(readFileSync(new URL('../fixtures/commands-redis8/replies.json', import.meta.url), 'utf8')) as RecordedReplies;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const VECTOR_SETS = [
  'VADD',
  'VCARD',
  'VDIM',
  'VEMB',
  'VGETATTR',
  'VINFO',
  'VISMEMBER',
  'VLINKS',
  'VRANDMEMBER',
  'VRANGE',
  'VREM',
  'VSETATTR',
  'VSIM',
];
/** The names a reply lists (bulk strings of a flat array). */
const names = (reply: Buffer) => [...reply.toString('latin1').matchAll(/\$\d+\r\n([^\r\n]*)\r\n/g)].map((m) => m[1]);

describe('the recorded data', () => {
  it('is Redis 8.8.0: 295 commands, sorted, every subcommand named container|sub, the same names as the reply fixture', () => {
    expect(commandData.redisVersion).toBe('8.8.0');
    expect(recorded.redisVersion).toBe('8.8.0');
    expect(commandData.commands.length).toBe(295);
    const top = commandData.commands.map((c) => c.name);
    expect(top).toEqual([...top].sort(cmp));
    for (const c of commandData.commands) {
      const subs = (c.subcommands ?? []).map((s) => s.name);
      for (const s of subs) expect(s.startsWith(`${c.name}|`)).toBe(true);
      expect(subs).toEqual([...subs].sort(cmp));
    }
    const all = commandData.commands.flatMap((c) => [c, ...(c.subcommands ?? [])]).map((c) => c.name);
    expect([...all].sort(cmp)).toEqual(recorded.names);
    expect(all.length).toBe(432);
  });

  it("has Redis 8.8's module commands, the vector sets, and nothing else, as module commands", () => {
    expect(Object.keys(recorded.modules)).toEqual(VECTOR_SETS);
    expect(new Set(Object.values(recorded.modules))).toEqual(new Set(['vectorset']));
  });
});

describe('the table', () => {
  it("lists Redis 8.8's core commands, JSON.* and SEARCH.*, and not the vector sets", () => {
    const core = recorded.names.filter((n) => !(n in recorded.modules));
    const ours = allCommandsAndSubcommands().map((s) => s.name);
    expect(ours.filter((n) => !/^(json|search)\./.test(n)).sort(cmp)).toEqual(core);
    expect(ours.filter((n) => n.startsWith('json.')).length).toBe(26);
    expect(ours.filter((n) => n.startsWith('search.')).length).toBe(12);
    expect(allCommands().length).toBe(295 - 13 + 24 + 12);
    expect(tableData.map((d) => d.name)).toEqual(allCommands().map((s) => s.name));
    for (const v of VECTOR_SETS) expect(lookupCommand(v)).toBeUndefined();
  });
});

describe.each([2, 3] as const)('introspection replies in RESP%i', (proto: Protocol) => {
  it('COMMAND INFO and COMMAND DOCS of each core command and subcommand equal Redis 8.8.0', () => {
    const mismatches: string[] = [];
    for (const name of recorded.names.filter((n) => !(n in recorded.modules))) {
      const want = recorded.entries[name];
      const up = name.toUpperCase();
      if (sha256(commandInfoReply([up], proto)) !== (proto === 2 ? want.info2 : want.info3)) mismatches.push(`info ${name}`);
      if (sha256(commandDocsReply([up], proto)) !== (proto === 2 ? want.docs2 : want.docs3)) mismatches.push(`docs ${name}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('COMMAND and COMMAND DOCS are every entry of the table, in name order', () => {
    const info = Buffer.concat([Buffer.from(`*${tableData.length}\r\n`), ...tableData.map((c) => commandInfoEntry(c.name, proto)!)]);
    expect(commandInfoReply(undefined, proto).equals(info)).toBe(true);
    expect(commandInfoReply([], proto).equals(info)).toBe(true);
    const head = proto === 3 ? `%${tableData.length}\r\n` : `*${tableData.length * 2}\r\n`;
    const docs = Buffer.concat([
      Buffer.from(head),
      ...tableData.flatMap((c) => [Buffer.from(`$${c.name.length}\r\n${c.name}\r\n`), commandDocsEntry(c.name, proto)!]),
    ]);
    expect(commandDocsReply(undefined, proto).equals(docs)).toBe(true);
    expect(commandCountReply(proto).toString()).toBe(`:${tableData.length}\r\n`);
  });

  it('describe JSON.* as the module ReJSON and SEARCH.* as the module upstash-search, in the shape of a Redis 8 module command', () => {
    const info = commandInfoReply(['json.get'], proto).toString('latin1');
    const set = proto === 3 ? '~' : '*';
    expect(info).toBe(
      `*1\r\n*10\r\n$8\r\njson.get\r\n:-2\r\n${set}2\r\n+readonly\r\n+module\r\n:1\r\n:1\r\n:1\r\n${set}3\r\n+@read\r\n+@slow\r\n+@json\r\n${set}0\r\n` +
        `${set}1\r\n${proto === 3 ? '%3' : '*6'}\r\n$5\r\nflags\r\n${set}2\r\n+RO\r\n+access\r\n` +
        `$12\r\nbegin_search\r\n${proto === 3 ? '%2' : '*4'}\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n${proto === 3 ? '%1' : '*2'}\r\n$5\r\nindex\r\n:1\r\n` +
        `$9\r\nfind_keys\r\n${proto === 3 ? '%2' : '*4'}\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n${proto === 3 ? '%3' : '*6'}\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n` +
        `${set}0\r\n`,
    );
    const docs = commandDocsReply(['search.query'], proto).toString('latin1');
    const map = (n: number) => (proto === 3 ? `%${n}` : `*${n * 2}`);
    expect(docs).toBe(
      `${map(1)}\r\n$12\r\nsearch.query\r\n${map(3)}\r\n$7\r\nsummary\r\n$51\r\nSearch the documents of an index with a JSON filter\r\n` +
        '$5\r\ngroup\r\n$6\r\nmodule\r\n$6\r\nmodule\r\n$14\r\nupstash-search\r\n',
    );
    expect(commandDocsReply(['json.set'], proto).toString('latin1')).toContain('$6\r\nmodule\r\n$6\r\nReJSON\r\n');
  });

  it('COMMAND LIST FILTERBY MODULE and ACLCAT find the module commands the table carries', () => {
    const list = (...o: string[]) =>
      names(
        commandListReply(
          proto,
          o.map((x) => Buffer.from(x)),
        ),
      );
    expect(list('FILTERBY', 'MODULE', 'rejson')).toEqual(
      allCommandsAndSubcommands()
        .filter((s) => s.name.startsWith('json.'))
        .map((s) => s.name),
    );
    expect(list('FILTERBY', 'MODULE', 'upstash-search').length).toBe(12);
    expect(list('FILTERBY', 'MODULE', 'vectorset')).toEqual([]);
    expect(list('FILTERBY', 'ACLCAT', 'JSON').length).toBe(26);
    expect(list('FILTERBY', 'PATTERN', 'search.*')).toEqual(
      allCommands()
        .filter((s) => s.name.startsWith('search.'))
        .map((s) => s.name),
    );
    expect(commandListReply(proto, [Buffer.from('FILTERBY')]).toString()).toBe('-ERR syntax error\r\n');
  });
});
