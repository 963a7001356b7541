// The command table builds a command's spec the first time it is looked up (src/commands/table.ts): a spec
// is one object however it is first reached (by name, by bytes, by full name, or in the list of all), and
// the lookups answer as the whole list does. This file's own process starts with nothing built.
import { describe, expect, it } from 'vitest';
import { allCommands, allCommandsAndSubcommands, lookupCommand, lookupFullName } from '../../src/commands/table.js';

describe('command specs built on first lookup', () => {
  it('are the same objects whichever lookup builds them first', () => {
    const get = lookupCommand('GET');
    const setname = lookupFullName('CLIENT|SETNAME');
    const hset = lookupCommand(Buffer.from('hset'));
    expect(get?.name).toBe('get');
    expect(setname?.name).toBe('client|setname');
    expect(setname?.container).toBe('client');
    expect(lookupCommand('client')?.subcommands?.get('setname')).toBe(setname);
    const all = allCommandsAndSubcommands();
    expect(all).toContain(get);
    expect(all).toContain(setname);
    expect(all).toContain(hset);
    expect(allCommands()).toBe(allCommands());
    for (const spec of all) expect(lookupFullName(spec.name.toUpperCase())).toBe(spec);
    for (const spec of allCommands()) {
      expect(lookupCommand(spec.name)).toBe(spec);
      expect(lookupCommand(Buffer.from(spec.name))).toBe(spec);
    }
    expect(Object.isFrozen(get)).toBe(true);
  });

  it('find nothing for names the table lacks, or full names that are not a command and subcommand', () => {
    for (const name of ['nosuch', 'client|', '|setname', 'get|x', 'client|setname|x', 'vadd', 'k\u212Aeys']) {
      expect(lookupFullName(name), name).toBeUndefined();
    }
    expect(lookupCommand('client|setname')).toBeUndefined();
    expect(lookupCommand('x'.repeat(200))).toBeUndefined();
  });
});
