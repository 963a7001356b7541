// The commands beyond Redis 7.0.15 (newer-commands.ts, redis-8-added.json): they resolve with Redis
// 8's arity, flags and key positions, are routed deliberately, answer COMMAND INFO / DOCS by name, and
// a command the table still lacks stays unknown (never forwarded).
import { describe, expect, it } from 'vitest';
import { commandDocsReply, commandInfoReply } from '../../src/commands/introspection.js';
import { NEWER_REDIS_VERSION, newerCommandData, newerSubcommandData } from '../../src/commands/newer-commands.js';
import { replyShape } from '../../src/commands/reply-types.js';
import { allCommands, checkCommand, lookupFullName } from '../../src/commands/table.js';
import { toResp3 } from '../../src/resp/resp3-converter.js';

const spec = (name: string) => {
  const s = lookupFullName(name);
  if (!s) throw new Error(`no command ${name}`);
  return s;
};

describe('commands newer than Redis 7.0.15', () => {
  it('come from Redis 8.8.0 and include the ones the service runs', () => {
    expect(NEWER_REDIS_VERSION).toBe('8.8.0');
    const names = [...newerCommandData, ...newerSubcommandData].map((c) => c.name);
    for (const n of ['client|setinfo', 'waitaof', 'hexpire', 'hpexpire', 'hexpireat', 'hpexpireat', 'httl', 'hpttl'])
      expect(names).toContain(n);
    for (const n of ['hexpiretime', 'hpexpiretime', 'hpersist', 'hgetdel', 'hgetex', 'hsetex', 'msetex', 'delex', 'digest'])
      expect(names).toContain(n);
    for (const n of ['search.query', 'search.create', 'search.count', 'search.aggregate']) expect(names).toContain(n);
    // Sentinel-only commands are not a data node's.
    expect(names.some((n) => n.startsWith('sentinel'))).toBe(false);
    // Not in COMMAND COUNT / LIST, which stay Redis 7.0.15's (docs/decisions.md).
    expect(allCommands().length).toBe(240);
  });

  it('carry Redis 8 arity, flags, key positions and ACL categories', () => {
    expect(spec('hgetex')).toMatchObject({
      arity: -5,
      firstKey: 1,
      lastKey: 1,
      keyStep: 1,
      group: 'hash',
      since: '8.0.0',
      route: 'forward',
    });
    expect([...spec('hgetex').flags]).toEqual(['write', 'fast']);
    expect([...spec('hgetex').aclCategories]).toEqual(['@write', '@hash', '@fast']);
    expect(spec('waitaof')).toMatchObject({ arity: 4, firstKey: 0, route: 'forward' });
    expect([...spec('waitaof').flags]).toEqual(['blocking']);
    expect(spec('msetex')).toMatchObject({ arity: -4, route: 'forward' });
    expect([...spec('msetex').flags]).toContain('movablekeys');
    expect(spec('client|setinfo')).toMatchObject({ arity: 4, container: 'client', route: 'local' });
    expect(spec('search.query')).toMatchObject({ firstKey: 0, route: 'forward' });
  });

  it('route server-side and cluster commands to clear refusals', () => {
    expect(spec('hotkeys')).toMatchObject({ route: 'refused' });
    expect(spec('hotkeys').refusal).toMatch(/HOTKEYS/);
    expect(spec('sflush')).toMatchObject({ route: 'refused', refusal: 'ERR This instance has cluster support disabled' });
    expect(spec('cluster|myshardid')).toMatchObject({ route: 'refused', refusal: 'ERR This instance has cluster support disabled' });
  });

  it('check arity like Redis', () => {
    expect(checkCommand(['HEXPIRE', 'h', '10', 'FIELDS', '1', 'f'])).toMatchObject({ ok: true, spec: { name: 'hexpire' } });
    expect(checkCommand(['HEXPIRE', 'h', '10', 'FIELDS', '1'])).toMatchObject({
      ok: false,
      error: "ERR wrong number of arguments for 'hexpire' command",
    });
    expect(checkCommand(['waitaof', '0', '0'])).toMatchObject({ ok: false, error: "ERR wrong number of arguments for 'waitaof' command" });
    expect(checkCommand(['HOTKEYS', 'NOSUCH'])).toMatchObject({ ok: false, error: "ERR unknown subcommand 'NOSUCH'. Try HOTKEYS HELP." });
  });

  it('keep commands the table lacks unknown, as Redis does', () => {
    expect(checkCommand(['FT.SEARCH', 'idx', '*'])).toMatchObject({
      ok: false,
      error: "ERR unknown command 'FT.SEARCH', with args beginning with: 'idx' '*' ",
    });
    expect(checkCommand(['SEARCH.NOSUCH'])).toMatchObject({ ok: false });
  });

  it('answer COMMAND INFO and COMMAND DOCS by name', () => {
    const info = commandInfoReply(['client|setinfo', 'HSETEX', 'nosuch'], 2).toString('latin1');
    expect(info).toMatch(/^\*3\r\n\*10\r\n\$14\r\nclient\|setinfo\r\n:4\r\n/);
    expect(info).toContain('$6\r\nhsetex\r\n:-6\r\n');
    expect(info.endsWith('$-1\r\n')).toBe(true);
    const docs = commandDocsReply(['waitaof'], 3).toString('latin1');
    expect(docs).toMatch(/^%1\r\n\$7\r\nwaitaof\r\n%/);
    expect(docs).toContain('$5\r\nsince\r\n$5\r\n7.2.0\r\n');
    expect(docs).toContain('numlocal');
  });

  it('convert ZRANK … WITHSCORE (Redis 7.2) to RESP3 as Redis 8 sends it: [integer, double], null', () => {
    const withScore = ['ZRANK', 'z', 'm', 'WITHSCORE'];
    const shape = replyShape(spec('zrank'), withScore);
    expect(toResp3(Buffer.from('*2\r\n:0\r\n$3\r\n1.5\r\n'), shape).toString()).toBe('*2\r\n:0\r\n,1.5\r\n');
    expect(toResp3(Buffer.from('*-1\r\n'), shape).toString()).toBe('_\r\n');
    expect(toResp3(Buffer.from(':3\r\n'), replyShape(spec('zrevrank'), ['ZREVRANK', 'z', 'm'])).toString()).toBe(':3\r\n');
  });
});
