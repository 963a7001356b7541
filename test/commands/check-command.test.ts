/**
 * Differential tests of checkCommand against a real redis-server 7.0.15 (the one CI has): unknown commands,
 * unknown subcommands and arity errors must be byte-identical, and every argument count Redis accepts must
 * be accepted. Commands are sent inside MULTI, where Redis runs its existence and arity checks and then only
 * queues the command (answers +QUEUED or "not allowed inside a transaction"), so nothing is executed.
 *
 * The table is Redis 8.8.0's, whose checks and texts are 7.0's (server.c processCommand did not change): the
 * commands both servers have with the same arity are compared with the live 7.0.15; the arities of the
 * others come straight from the recorded Redis 8.8.0 data (redis8-fixtures.test.ts checks that data).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawRedis, startRedisServer, type RedisServer, type Reply } from '../../scripts/gen-command-data.js';
import { allCommandsAndSubcommands, checkCommand, type CommandSpec } from '../../src/commands/table.js';
import { commandInfoReply } from '../../src/commands/introspection.js';

let server: RedisServer;
let conn: RawRedis;
/** Redis 7.0.15's commands and subcommands with their arities, from the live server's COMMAND INFO. */
const arities7 = new Map<string, number>();

beforeAll(async () => {
  server = await startRedisServer();
  conn = await RawRedis.connect(server.port);
  const all = await conn.call('COMMAND', 'INFO');
  const walk = (entry: Reply) => {
    if (entry.type !== 'array' || !entry.items) return;
    const [name, arity] = entry.items;
    if (name.type === 'bulk' && arity.type === 'int') arities7.set(name.text, arity.value);
    const subs = entry.items[9];
    if ((subs.type === 'array' || subs.type === 'set') && subs.items) subs.items.forEach(walk);
  };
  if (all.type === 'array' && all.items) all.items.forEach(walk);
}, 30_000);

/** Whether the live 7.0.15 has this command or subcommand with the same arity. */
const shared = (s: CommandSpec) => arities7.get(s.name) === s.arity;

afterAll(async () => {
  conn?.close();
  await server?.stop();
});

/** Sends each argument list on one connection (pipelined) and returns the replies in order. */
async function send(cases: (string | Buffer)[][]): Promise<Reply[]> {
  return Promise.all(cases.map((args) => conn.call(...args)));
}

/** Our prediction of Redis' reply bytes when the check fails. */
function predicted(args: (string | Buffer)[]): Buffer | undefined {
  const r = checkCommand(args);
  return r.ok ? undefined : Buffer.concat([Buffer.from('-'), r.errorBytes, Buffer.from('\r\n')]);
}

const CHECK_ERRORS = /^-ERR (unknown command|unknown subcommand|wrong number of arguments for)/;

function show(b: Buffer | undefined): string {
  return b === undefined ? '(accepted)' : JSON.stringify(b.toString('latin1'));
}

/** Compares our checks with Redis' replies: failing checks byte for byte, passing checks by kind. */
function compare(cases: (string | Buffer)[][], replies: Reply[]): string[] {
  const mismatches: string[] = [];
  cases.forEach((args, i) => {
    const ours = predicted(args);
    const theirs = replies[i].raw;
    const redisRejected = CHECK_ERRORS.test(theirs.toString('latin1'));
    const ok = ours === undefined ? !redisRejected : ours.equals(theirs);
    if (!ok) {
      const shown = args.map((a) => (typeof a === 'string' ? a : `<${a.toString('hex')}>`)).join(' ');
      mismatches.push(`${shown.slice(0, 200)}\n  redis: ${show(theirs)}\n  ours:  ${show(ours)}`);
    }
  });
  return mismatches;
}

async function inMulti(cases: (string | Buffer)[][]): Promise<string[]> {
  const multi = await conn.call('MULTI');
  expect(multi.type).toBe('status');
  const replies = await send(cases);
  // DISCARD answering +OK shows that the whole batch ran inside MULTI (nothing was executed).
  const discard = await conn.call('DISCARD');
  expect(discard.raw.toString()).toBe('+OK\r\n');
  return compare(cases, replies);
}

/** Mixes the case of a name the way clients do (Redis matches case-insensitively). */
function mixCase(name: string, i: number): string {
  if (i % 3 === 0) return name;
  if (i % 3 === 1) return name.toUpperCase();
  return [...name].map((c, j) => (j % 2 ? c.toUpperCase() : c)).join('');
}

// These are not queued inside MULTI (EXEC runs or, when rejected, aborts the queue, DISCARD and RESET end
// it, QUIT closes the connection): they are tested outside MULTI with failing argument counts only.
const NOT_QUEUED = new Set(['exec', 'discard', 'multi', 'quit', 'reset', 'watch']);

function argumentCountsFor(spec: CommandSpec): number[] {
  const n = Math.abs(spec.arity);
  const counts = new Set<number>([1, 2, 3, n - 2, n - 1, n, n + 1, n + 2, n + 5]);
  return [...counts].filter((c) => c >= 1).sort((a, b) => a - b);
}

function casesFor(spec: CommandSpec, k: number): (string | Buffer)[][] {
  const out: (string | Buffer)[][] = [];
  if (NOT_QUEUED.has(spec.name)) return out;
  const prefix = spec.container
    ? [mixCase(spec.container, k), mixCase(spec.name.slice(spec.container.length + 1), k + 1)]
    : [mixCase(spec.name, k)];
  for (const argc of argumentCountsFor(spec)) {
    if (argc < prefix.length) continue;
    const args: string[] = [...prefix];
    while (args.length < argc) args.push(`arg${args.length}`);
    out.push(args);
  }
  return out;
}

describe('checkCommand against redis-server 7.0.15', () => {
  it('agrees on every command and subcommand both have, at argument counts around its arity', async () => {
    const both = allCommandsAndSubcommands().filter(shared);
    expect(both.length).toBe(arities7.size - 4);
    const cases = both.flatMap((s, k) => casesFor(s, k));
    expect(cases.length).toBeGreaterThan(1500);
    expect(await inMulti(cases)).toEqual([]);
  });

  it("takes Redis 8.8's arity where it differs from 7.0.15's (ZRANK/ZREVRANK WITHSCORE, COMMAND GETKEYS)", () => {
    const differ = allCommandsAndSubcommands().filter((s) => arities7.has(s.name) && !shared(s));
    expect(differ.map((s) => s.name)).toEqual(['command|getkeys', 'command|getkeysandflags', 'zrank', 'zrevrank']);
    expect(checkCommand(['ZRANK', 'z', 'm', 'WITHSCORE'])).toMatchObject({ ok: true });
    expect(checkCommand(['zrevrank', 'z', 'm', 'WITHSCORE'])).toMatchObject({ ok: true });
    expect(checkCommand(['ZRANK', 'z'])).toMatchObject({ ok: false, error: "ERR wrong number of arguments for 'zrank' command" });
    expect(checkCommand(['COMMAND', 'GETKEYS', 'GET'])).toMatchObject({ ok: true });
    expect(commandInfoReply(['zrank'], 2).toString()).toContain(':-3\r\n');
  });

  it('checks the arity of the commands 7.0.15 lacks with their Redis 8.8 arity', () => {
    const all = allCommandsAndSubcommands();
    expect(all.filter((s) => !arities7.has(s.name)).length).toBe(all.length - arities7.size);
    // Containers alone fail their arity check (tested above); their subcommands are here.
    const newer = all.filter((s) => !arities7.has(s.name) && !s.subcommands);
    for (const s of newer) {
      const prefix = s.container ? [s.container, s.name.slice(s.container.length + 1)] : [s.name];
      const argc = Math.abs(s.arity);
      const exact = [...prefix, ...Array.from({ length: argc - prefix.length }, (_, i) => `a${i}`)];
      expect(checkCommand(exact), s.name).toMatchObject({ ok: true, spec: { name: s.name } });
      if (argc - 1 >= prefix.length) {
        expect(checkCommand(exact.slice(0, -1)), s.name).toMatchObject({
          ok: false,
          error: `ERR wrong number of arguments for '${s.name}' command`,
        });
      }
      if (s.arity > 0) expect(checkCommand([...exact, 'x']).ok, s.name).toBe(false);
    }
    expect(checkCommand(['HGETDEL', 'h', 'FIELDS', '1'])).toMatchObject({
      ok: false,
      error: "ERR wrong number of arguments for 'hgetdel' command",
    });
    expect(checkCommand(['json.get', 'k'])).toMatchObject({ ok: true });
    expect(checkCommand(['search.query', 'idx'])).toMatchObject({
      ok: false,
      error: "ERR wrong number of arguments for 'search.query' command",
    });
  });

  it('agrees on containers called without a subcommand', async () => {
    const containers = allCommandsAndSubcommands().filter((s) => s.subcommands && arities7.has(s.name));
    expect(containers.length).toBe(15);
    const cases = containers.flatMap((s) => [[s.name], [s.name.toUpperCase()]]);
    expect(await inMulti(cases)).toEqual([]);
    expect(checkCommand(['client'])).toMatchObject({ ok: false, error: "ERR wrong number of arguments for 'client' command" });
    expect(checkCommand(['COMMAND'])).toMatchObject({ ok: true });
  });

  it('agrees on the transaction and connection commands that are not queued (sent outside MULTI)', async () => {
    // Only argument counts that fail the checks are sent, so none of them runs. EXEC is special: a
    // rejected EXEC answers EXECABORT (and would discard a transaction).
    const cases = [
      ['exec', 'x'],
      ['EXEC', 'x', 'y'],
      ['DISCARD', 'x', 'y'],
      ['multi', 'x'],
      ['watch'],
      ['Watch'],
      ['Reset', 'x'],
      ['reset', 'x', 'y'],
    ];
    for (const c of cases) expect(checkCommand(c).ok).toBe(false);
    expect(compare(cases, await send(cases))).toEqual([]);
    expect(checkCommand(['exec', 'x'])).toMatchObject({
      ok: false,
      error: "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command",
    });
    // QUIT takes any number of arguments: it passes the checks (and would close the connection).
    expect(checkCommand(['quit', 'x', 'y'])).toMatchObject({ ok: true });
  });

  it('agrees on unknown commands with 0, 1, many, long and binary arguments', async () => {
    const long = 'x'.repeat(200);
    const utf8 = 'é'.repeat(100); // 200 bytes: the 128-byte cut falls inside a character
    const cases: (string | Buffer)[][] = [
      ['foo'],
      ['foo', 'a'],
      ['foo', 'a', 'b'],
      [
        'FoO',
        'a',
        'b',
        'c',
        'd',
        'e',
        'f',
        'g',
        'h',
        'i',
        'j',
        'k',
        'l',
        'm',
        'n',
        'o',
        'p',
        'q',
        'r',
        's',
        't',
        'u',
        'v',
        'w',
        'x',
        'y',
        'z',
      ],
      Array.from({ length: 60 }, (_, i) => (i === 0 ? 'nosuch' : `argument-${i}`)),
      ['foo', long],
      ['foo', 'a'.repeat(120), 'b'.repeat(20)],
      ['foo', 'a'.repeat(124), 'b'.repeat(20)],
      ['foo', 'a'.repeat(125), 'b'.repeat(20)],
      ['foo', 'a'.repeat(126), 'b'],
      ['foo', 'a'.repeat(128), 'b'],
      ['foo', ...Array.from({ length: 40 }, () => 'abc')],
      [long],
      [long, long],
      ['z'.repeat(129), 'y'.repeat(129)],
      ['foo', utf8],
      [utf8, 'a'],
      ['foo', 'line\r\nbreak', 'lf\nonly', 'cr\ronly'],
      ['with\r\nnewline', 'a'],
      [''],
      ['', ''],
      ['foo', ''],
      ['foo', '', '', ''],
      [Buffer.from([0x66, 0x00, 0x6f]), 'a'],
      ['foo', Buffer.from([0x61, 0x00, 0x62]), 'c'],
      ['foo', Buffer.from([0x00]), Buffer.from([0x00, 0x01])],
      ['foo', Buffer.from([0xff, 0xfe, 0x80, 0xc3]), Buffer.from(Array.from({ length: 256 }, (_, i) => i))],
      [Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), Buffer.from([0x0d, 0x0a, 0x0d])],
      ['\u212Aeys', '*'], // Kelvin sign: JS lowercases it to "k", Redis does not
      ['get\u0130', 'k'],
      ['gét', 'k'],
      ['get ', 'k'],
      [' get', 'k'],
      ['client|list'],
      ['get|x', 'k'],
    ];
    expect(await inMulti(cases)).toEqual([]);
  });

  it('agrees on unknown subcommands', async () => {
    const containers = allCommandsAndSubcommands().filter((s) => s.subcommands && arities7.has(s.name));
    const cases: (string | Buffer)[][] = [];
    for (const c of containers) {
      cases.push([c.name, 'nosuch'], [c.name.toUpperCase(), 'NoSuch', 'a', 'b'], [c.name, ''], [c.name, 'x'.repeat(200)]);
      cases.push([c.name, 'a\r\nb'], [c.name, Buffer.from([0x6c, 0x69, 0x00, 0x73, 0x74])], [c.name, Buffer.from([0xff, 0xc3])]);
      cases.push([c.name, `${[...c.subcommands!.keys()][0]} `], [c.name, `${c.name}|${[...c.subcommands!.keys()][0]}`]);
    }
    cases.push(['CLIENT', 'MAINT_NOTIFICATIONS', 'on'], ['config', 'get\u212A', 'x']);
    expect(await inMulti(cases)).toEqual([]);
    // Redis 7.2+ subcommands are known (Redis 8.8's table), so they pass the check where 7.0.15 refuses them.
    expect(checkCommand(['client', 'setinfo', 'lib-name', 'x'])).toMatchObject({ ok: true, spec: { name: 'client|setinfo' } });
    expect(checkCommand(['client', 'setinfo', 'lib-name'])).toMatchObject({
      ok: false,
      error: "ERR wrong number of arguments for 'client|setinfo' command",
    });
  });

  it('agrees on negative arities (at least N arguments) and exact arities', async () => {
    const cases = [
      ['set', 'k'],
      ['set', 'k', 'v'],
      ['get'],
      ['get', 'k', 'extra'],
      ['mget'],
      ['del'],
      ['client', 'setname'],
      ['client', 'setname', 'a', 'b'],
      ['client', 'kill'],
      ['config', 'get'],
      ['xread', 'streams'],
      ['command', 'info'],
      ['command', 'count', 'x'],
      ['ping', 'a', 'b'],
      ['echo'],
      ['hello', '3', 'auth'],
    ];
    expect(await inMulti(cases)).toEqual([]);
    expect(checkCommand(['client', 'setname'])).toMatchObject({
      ok: false,
      error: "ERR wrong number of arguments for 'client|setname' command",
    });
  });

  it('gives the exact texts of the brief', () => {
    expect(checkCommand(['foo', 'a', 'b'])).toMatchObject({
      ok: false,
      error: "ERR unknown command 'foo', with args beginning with: 'a' 'b' ",
    });
    expect(checkCommand(['foo'])).toMatchObject({ ok: false, error: "ERR unknown command 'foo', with args beginning with: " });
    expect(checkCommand(['client', 'x'])).toMatchObject({ ok: false, error: "ERR unknown subcommand 'x'. Try CLIENT HELP." });
    expect(checkCommand([])).toMatchObject({ ok: false, error: "ERR unknown command '', with args beginning with: " });
    const r = checkCommand([Buffer.from('GET'), Buffer.from('k')]);
    expect(r.ok && r.spec.name).toBe('get');
  });
});
