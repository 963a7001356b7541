// The command data as the build writes it into dist/ (scripts/split-command-data.mjs): the table's
// part read at start, the rest of the docs apart and read with the first COMMAND DOCS. What dist/
// gives must be what src/ gives, command by command. Needs `npm run build` (npm test runs it first).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as source from '../../src/commands/data.js';
import type { CommandData } from '../../src/commands/data.js';

const root = path.resolve(import.meta.dirname, '../..');
const built = (await import(path.join(root, 'dist/commands/data.js'))) as typeof source;

const all = (commands: CommandData[]): CommandData[] => commands.flatMap((c) => [c, ...all(c.subcommands ?? [])]);
const withoutDocs = (c: CommandData): unknown => ({ ...c, docs: undefined, subcommands: c.subcommands?.map(withoutDocs) });

describe('the command data in dist/', () => {
  it('is split: the file read at start is under half of the whole, the docs file beside it', () => {
    const dist = path.join(root, 'dist/commands');
    expect(existsSync(path.join(dist, 'redis-8.8.0.docs.json'))).toBe(true);
    expect(statSync(path.join(dist, 'redis-8.8.0.json')).size).toBeLessThan(
      statSync(path.join(root, 'src/commands/redis-8.8.0.json')).size / 2,
    );
  });

  it("gives every command and subcommand as src/ does: the table's fields at once, the whole docs through fullDocs", () => {
    const fromSource = all(source.commandData.commands);
    const fromBuilt = all(built.commandData.commands);
    expect(fromBuilt.map((c) => c.name)).toEqual(fromSource.map((c) => c.name));
    expect(built.commandData.commands.map(withoutDocs)).toEqual(source.commandData.commands.map(withoutDocs));
    fromBuilt.forEach((c, i) => {
      const head = { group: fromSource[i].docs.group, since: fromSource[i].docs.since, module: fromSource[i].docs.module };
      expect({ group: c.docs.group, since: c.docs.since, module: c.docs.module }, c.name).toEqual(head);
      expect(built.fullDocs(c), c.name).toEqual(fromSource[i].docs);
      expect(built.fullDocs(c), c.name).toBe(c.docs); // read once
    });
    // A command made in code (not from the file) keeps its own docs.
    const own = { ...fromBuilt[0], docs: { group: 'x', summary: 'mine' } } as CommandData;
    expect(built.fullDocs(own)).toEqual({ group: 'x', summary: 'mine' });
  });
});
