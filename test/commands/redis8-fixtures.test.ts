/**
 * The proxy's COMMAND replies against Redis 8.8.0's, through the real proxy (proxy → platform → redis-server
 * 7.0.15): COMMAND COUNT/LIST (FILTERBY)/INFO/DOCS/GETKEYS/GETKEYSANDFLAGS/HELP and their errors, in RESP2
 * and RESP3. CI has no Redis 8, so the oracle is a recording of a real redis-server 8.8.0 (the cases of
 * test/fixtures/commands-redis8/cases.ts, recorded by scripts/gen-command-data.ts into replies.json).
 *
 * Differences by design (docs/decisions.md "Redis 8.8"): the vector-set commands (module vectorset) are
 * not the proxy's (the vector side port serves them), so they are left out of the lists and unknown to
 * GETKEYS; JSON.* and SEARCH.* are the proxy's module commands, so they are in the lists.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonical, parseReply, sha256, type RecordedReplies } from '../../scripts/resp-replies.js';
import { allCommandsAndSubcommands, tableData } from '../../src/commands/table.js';
import { RawClient, startStack, type Stack } from '../helpers/stack.js';

const recorded = JSON.parse(readFileSync(new URL('../fixtures/commands-redis8/replies.json', import.meta.url), 'utf8')) as RecordedReplies;
const vectorSet = (name: string) =>
  recorded.modules[name.toLowerCase()] !== undefined || recorded.modules[name.toUpperCase()] !== undefined;
const ourModuleCommand = (name: string) => /^(json|search)\./i.test(name);

let stack: Stack;
const conns = new Map<2 | 3, RawClient>();

beforeAll(async () => {
  stack = await startStack();
  conns.set(2, await RawClient.connect(stack.proxy.port));
  const c3 = await RawClient.connect(stack.proxy.port);
  const [hello] = await c3.call(['HELLO', '3']);
  expect(hello.toString('latin1').startsWith('%')).toBe(true);
  conns.set(3, c3);
}, 60_000);

afterAll(async () => {
  for (const c of conns.values()) c.close();
  await stack?.stop();
});

/** The names of a COMMAND LIST reply. */
const listed = (bytes: string) => [...bytes.matchAll(/\$\d+\r\n([^\r\n]*)\r\n/g)].map((m) => m[1]);

describe.each([2, 3] as const)('through the proxy in RESP%i', (proto) => {
  it('every recorded case answers as Redis 8.8.0 (vector sets out, JSON.* and SEARCH.* in, by design)', async () => {
    const c = conns.get(proto)!;
    const replies = await c.call(...recorded.cases.map((k) => k.args));
    const mismatches: string[] = [];
    recorded.cases.forEach((k, i) => {
      const parsed = parseReply(replies[i]);
      if (!parsed) throw new Error(`no reply to ${k.args.join(' ')}`);
      const ours = canonical(parsed.reply, k.canon).toString('latin1');
      let theirs = proto === 2 ? k.resp2 : k.resp3;
      const sub = (k.args[1] ?? '').toUpperCase();
      if ((sub === 'GETKEYS' || sub === 'GETKEYSANDFLAGS') && k.args.length > 2 && vectorSet(k.args[2])) {
        theirs = '-ERR Invalid command specified\r\n';
      }
      if (sub === 'COUNT' && k.args.length === 2) {
        expect(theirs).toBe(':295\r\n');
        theirs = `:${295 - Object.keys(recorded.modules).length + tableData.filter((d) => ourModuleCommand(d.name)).length}\r\n`;
      }
      if (k.canon === 'names') {
        // Compared as name lists: Redis' without its vector sets, ours without JSON.* and SEARCH.*.
        const a = listed(ours).filter((n) => !ourModuleCommand(n));
        const b = listed(theirs).filter((n) => !vectorSet(n));
        if (JSON.stringify(a) !== JSON.stringify(b))
          mismatches.push(`${k.args.join(' ')}\n  redis: ${b.join(' ')}\n  ours:  ${a.join(' ')}`);
        return;
      }
      if (ours !== theirs) mismatches.push(`${k.args.join(' ')}\n  redis: ${JSON.stringify(theirs)}\n  ours:  ${JSON.stringify(ours)}`);
    });
    expect(mismatches).toEqual([]);
  });

  it('COMMAND INFO and COMMAND DOCS of every core command and subcommand are Redis 8.8.0 bytes', async () => {
    const c = conns.get(proto)!;
    const core = recorded.names.filter((n) => !vectorSet(n));
    const info = await c.call(...core.map((n) => ['COMMAND', 'INFO', n.toUpperCase()]));
    const docs = await c.call(...core.map((n) => ['COMMAND', 'DOCS', n.toUpperCase()]));
    const bad = core.filter((n, i) => {
      const want = recorded.entries[n];
      const i2 = sha256(canonical(parseReply(info[i])!.reply, 'info'));
      const d2 = sha256(canonical(parseReply(docs[i])!.reply, 'docs'));
      return i2 !== (proto === 2 ? want.info2 : want.info3) || d2 !== (proto === 2 ? want.docs2 : want.docs3);
    });
    expect(bad).toEqual([]);
  });

  it('COMMAND COUNT, LIST and a whole COMMAND list the table: core commands, JSON.* and SEARCH.*', async () => {
    const c = conns.get(proto)!;
    const [count, list, all, docs] = await c.call(['COMMAND', 'COUNT'], ['COMMAND', 'LIST'], ['COMMAND'], ['COMMAND', 'DOCS']);
    expect(count.toString()).toBe(`:${tableData.length}\r\n`);
    expect(listed(list.toString('latin1'))).toEqual(allCommandsAndSubcommands().map((s) => s.name));
    expect(all.toString('latin1').startsWith(`*${tableData.length}\r\n*10\r\n$3\r\nacl\r\n`)).toBe(true);
    expect(docs.toString('latin1').startsWith(proto === 3 ? `%${tableData.length}\r\n` : `*${tableData.length * 2}\r\n`)).toBe(true);
    const [json, search, vector] = await c.call(
      ['COMMAND', 'LIST', 'FILTERBY', 'MODULE', 'ReJSON'],
      ['COMMAND', 'LIST', 'FILTERBY', 'MODULE', 'upstash-search'],
      ['COMMAND', 'LIST', 'FILTERBY', 'MODULE', 'vectorset'],
    );
    expect(listed(json.toString('latin1'))).toContain('json.debug|memory');
    expect(listed(json.toString('latin1')).length).toBe(26);
    expect(listed(search.toString('latin1')).length).toBe(12);
    expect(vector.toString()).toBe('*0\r\n');
  });

  it('COMMAND GETKEYS(ANDFLAGS) knows JSON.*, SEARCH.* and binary keys; a command the table lacks is invalid', async () => {
    const c = conns.get(proto)!;
    const key = Buffer.from([0x00, 0xff, 0x0d, 0x0a]);
    const [mget, flags, search, binary, ft] = await c.call(
      ['COMMAND', 'GETKEYS', 'JSON.MGET', 'a', 'b', '$'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'json.set', 'k', '$', '1'],
      ['COMMAND', 'GETKEYS', 'SEARCH.QUERY', 'idx', '{}'],
      ['COMMAND', 'GETKEYS', 'GET', key],
      ['COMMAND', 'GETKEYS', 'FT.SEARCH', 'idx', '*'],
    );
    expect(mget.toString()).toBe('*2\r\n$1\r\na\r\n$1\r\nb\r\n');
    expect(flags.toString()).toBe(
      proto === 3 ? '*1\r\n*2\r\n$1\r\nk\r\n~2\r\n+RW\r\n+update\r\n' : '*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+RW\r\n+update\r\n',
    );
    expect(search.toString()).toBe('-ERR The command has no key arguments\r\n');
    expect(binary.equals(Buffer.concat([Buffer.from('*1\r\n$4\r\n'), key, Buffer.from('\r\n')]))).toBe(true);
    expect(ft.toString()).toBe('-ERR Invalid command specified\r\n');
  });
});
