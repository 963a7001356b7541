// The commands newer than Redis 7.0.15 in the Redis 8.8 table: Redis 8's arity checks, deliberate routes,
// COMMAND INFO / DOCS by name, and RESP3 replies of the forms 7.2 added (the 7.0.15 oracle has none of them;
// their COMMAND replies are checked against the Redis 8.8 recording in redis8-fixtures.test.ts).
import { describe, expect, it } from 'vitest';
import { commandDocsReply, commandInfoReply } from '../../src/commands/introspection.js';
import { replyShape } from '../../src/commands/reply-types.js';
import { checkCommand, lookupFullName } from '../../src/commands/table.js';
import { toResp3 } from '../../src/resp/resp3-converter.js';

const spec = (name: string) => {
  const s = lookupFullName(name);
  if (!s) throw new Error(`no command ${name}`);
  return s;
};

describe('commands newer than Redis 7.0.15', () => {
  it('route server-side and cluster commands to clear refusals', () => {
    expect(spec('hotkeys')).toMatchObject({ route: 'refused' });
    expect(spec('hotkeys').refusal).toMatch(/HOTKEYS/);
    expect(spec('trimslots')).toMatchObject({ route: 'refused', refusal: 'ERR This instance has cluster support disabled' });
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
    // SFLUSH is experimental in Redis 8.8 and not compiled in: unknown, as there.
    expect(checkCommand(['SFLUSH', '0', '1'])).toMatchObject({
      ok: false,
      error: "ERR unknown command 'SFLUSH', with args beginning with: '0' '1' ",
    });
  });

  it('answer COMMAND INFO and COMMAND DOCS by name, and list their container with them', () => {
    const info = commandInfoReply(['client|setinfo', 'HSETEX', 'nosuch'], 2).toString('latin1');
    expect(info).toMatch(/^\*3\r\n\*10\r\n\$14\r\nclient\|setinfo\r\n:4\r\n/);
    expect(info).toContain('$6\r\nhsetex\r\n:-6\r\n');
    expect(info.endsWith('$-1\r\n')).toBe(true);
    const docs = commandDocsReply(['waitaof'], 3).toString('latin1');
    expect(docs).toMatch(/^%1\r\n\$7\r\nwaitaof\r\n%/);
    expect(docs).toContain('$5\r\nsince\r\n$5\r\n7.2.0\r\n');
    expect(commandInfoReply(['client'], 2).toString('latin1')).toContain('$14\r\nclient|setinfo\r\n');
  });

  it('convert ZRANK … WITHSCORE (Redis 7.2) to RESP3 as Redis 8 sends it: [integer, double], null', () => {
    const withScore = ['ZRANK', 'z', 'm', 'WITHSCORE'];
    const shape = replyShape(spec('zrank'), withScore);
    expect(toResp3(Buffer.from('*2\r\n:0\r\n$3\r\n1.5\r\n'), shape).toString()).toBe('*2\r\n:0\r\n,1.5\r\n');
    expect(toResp3(Buffer.from('*-1\r\n'), shape).toString()).toBe('_\r\n');
    expect(toResp3(Buffer.from(':3\r\n'), replyShape(spec('zrevrank'), ['ZREVRANK', 'z', 'm'])).toString()).toBe(':3\r\n');
  });
});
