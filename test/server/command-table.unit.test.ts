// The side ports' command data in src/commands/' shape: what COMMAND INFO / DOCS encode on every port.
import { describe, expect, it } from 'vitest';
import { CommandTable, toCommandData, type PortCommand } from '../../src/server/command-table.js';
import { writeCommandDocs, writeCommandInfo } from '../../src/commands/introspection.js';
import { ReplyWriter } from '../../src/resp/reply-writer.js';

const vcard: PortCommand = {
  name: 'vcard',
  arity: 2,
  summary: 'Count the elements.',
  group: 'vector',
  flags: ['readonly', 'fast'],
  acl: ['@read'],
  firstKey: 1,
  args: [{ name: 'key', type: 'key' }],
};

describe('toCommandData', () => {
  it('gives name, arity, flags, first/last key, step and a key spec as Redis lists them', () => {
    const d = toCommandData(vcard);
    expect(d).toMatchObject({ name: 'vcard', arity: 2, firstKey: 1, lastKey: 1, step: 1, aclCategories: ['@read'], tips: [] });
    expect(d.keySpecs[0]).toMatchObject({ flags: ['RO'], begin_search: { type: 'index', spec: { index: 1 } } });
    expect(Object.keys(d.keySpecs[0])[0]).toBe('notes'); // Redis writes notes before flags
    expect(d.docs).toEqual({
      summary: 'Count the elements.',
      since: '0.1.0',
      group: 'vector',
      arguments: [{ name: 'key', type: 'key', key_spec_index: 0 }],
    });
  });

  it("a module's command (Redis 8's VCARD): its displayed name, no notes, the legacy key spec RW access update", () => {
    const d = toCommandData({ ...vcard, displayName: 'VCARD', flags: ['readonly', 'module', 'fast'], acl: [] });
    expect(d).toMatchObject({ name: 'VCARD', flags: ['readonly', 'module', 'fast'], aclCategories: [] });
    expect(d.keySpecs).toEqual([
      {
        flags: ['RW', 'access', 'update'],
        begin_search: { type: 'index', spec: { index: 1 } },
        find_keys: { type: 'range', spec: { lastkey: 0, keystep: 1, limit: 0 } },
      },
    ]);
  });

  it('a command without a key has zero key positions and no key spec', () => {
    const d = toCommandData({ ...vcard, name: 'qlist', firstKey: undefined, args: [] });
    expect([d.firstKey, d.lastKey, d.step, d.keySpecs.length]).toEqual([0, 0, 0, 0]);
  });

  it('lastKey -1 (every argument a key) is a range to the end, as DEL', () => {
    const d = toCommandData({ ...vcard, arity: -2, lastKey: -1 });
    expect(d.keySpecs[0].find_keys).toEqual({ type: 'range', spec: { lastkey: -1, keystep: 1, limit: 0 } });
  });

  it('encodes COMMAND INFO with the proxy encoder: RESP2 ten fields, flags as status replies', () => {
    const table = new CommandTable([vcard]);
    const w = new ReplyWriter(2);
    writeCommandInfo(w, table.data(vcard));
    expect(w.toBuffer().toString()).toMatch(
      /^\*10\r\n\$5\r\nvcard\r\n:2\r\n\*2\r\n\+readonly\r\n\+fast\r\n:1\r\n:1\r\n:1\r\n\*1\r\n\+@read\r\n\*0\r\n\*1\r\n/,
    );
    expect(table.data(vcard)).toBe(table.data(vcard)); // built once
  });

  it('encodes COMMAND DOCS as a RESP3 map with summary, since, group and arguments', () => {
    const w = new ReplyWriter(3);
    writeCommandDocs(w, toCommandData(vcard));
    const s = w.toBuffer().toString();
    expect(s.startsWith('%4\r\n$7\r\nsummary\r\n')).toBe(true);
    expect(s).toContain('$14\r\nkey_spec_index\r\n:0\r\n');
  });
});
