/** docs/compatibility.md is generated from the command table; the committed file must be up to date. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderCompatDoc } from '../../scripts/gen-compat-doc.js';
import { allCommandsAndSubcommands } from '../../src/commands/table.js';

const file = new URL('../../docs/compatibility.md', import.meta.url);

describe('docs/compatibility.md', () => {
  it('equals the generated output (run `npx tsx scripts/gen-compat-doc.ts` after changing src/commands/)', () => {
    expect(readFileSync(file, 'utf8')).toBe(renderCompatDoc());
  });

  it('has a row for every command and subcommand', () => {
    const text = readFileSync(file, 'utf8');
    for (const s of allCommandsAndSubcommands()) {
      expect(text, s.name).toContain(`| ${s.name.toUpperCase().replace('|', ' ')} |`);
    }
  });
});
