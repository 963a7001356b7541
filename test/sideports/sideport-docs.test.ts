/** The command tables of docs/vector-sideport.md and docs/queue-sideport.md are generated from the command data. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, DOCS, END, renderCommandTable, renderSideportDoc, sideportCommands } from '../../scripts/gen-sideport-docs.js';
import { syntax } from '../../src/server/command-table.js';

const all = sideportCommands();

describe.each(['vector', 'queue'] as const)('docs/%s-sideport.md', (role) => {
  const text = readFileSync(new URL(`../../${DOCS[role]}`, import.meta.url), 'utf8');

  it('equals the generated output (run `npx tsx scripts/gen-sideport-docs.ts` after changing the command data)', async () => {
    expect(text).toBe(await renderSideportDoc(text, all[role]));
  });

  it('has a row for every command and subcommand of the port', () => {
    const table = text.slice(text.indexOf(BEGIN), text.indexOf(END));
    for (const c of all[role]) {
      for (const s of c.subcommands ?? [c]) expect(table, s.name).toContain(`\`${syntax(s).replace(/\|/g, '\\|')}\``);
    }
  });
});

describe('renderSideportDoc', () => {
  it('refuses a doc without the markers', async () => {
    await expect(renderSideportDoc('# no markers\n', all.vector)).rejects.toThrow(/lacks the markers/);
  });

  it('escapes the pipes of a syntax inside a table cell', () => {
    expect(renderCommandTable(all.vector)).toContain('FP32 blob \\| VALUES');
  });
});
