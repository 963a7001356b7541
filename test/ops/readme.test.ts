// The README's configuration table is generated from the CLI's option definitions: it must not drift.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { END, renderConfigTable, START, withTable } from '../../scripts/gen-config-table.js';
import { buildProgram } from '../../src/cli/program.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README configuration table', () => {
  it('equals the table generated from src/cli/options.ts (run `npx tsx scripts/gen-config-table.ts` after changing a flag)', () => {
    expect(readme).toBe(withTable(readme));
  });

  it('has a row for every flag of every role, with its environment variable', () => {
    const table = readme.slice(readme.indexOf(START), readme.indexOf(END));
    for (const cmd of buildProgram().commands) {
      for (const o of cmd.options) {
        expect(table, `${cmd.name()} ${o.long}`).toMatch(new RegExp(`\\| \`${o.long}\` \\| \`${o.envVar}\` \\|[^\\n]*\\b${cmd.name()}\\b`));
      }
    }
  });

  it('fails on drift: a flag the table does not have changes the generated text', () => {
    const stale = readme.replace(/\| `--slowlog-max-len` [^\n]*\n/, '');
    expect(stale).not.toBe(readme);
    expect(withTable(stale)).toBe(readme);
    expect(renderConfigTable()).toContain('`RESPGATE_SLOWLOG_MAX_LEN`');
  });
});
