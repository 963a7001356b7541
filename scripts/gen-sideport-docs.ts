/**
 * Writes the command tables of docs/vector-sideport.md and docs/queue-sideport.md from the side ports'
 * command data (src/sideports/vector/commands.ts, queue-commands.ts, account-commands.ts), between the
 * markers in those docs, formatted by Prettier as `npm run check:style` expects. test/sideports/
 * sideport-docs.test.ts fails when a committed doc differs from this output.
 *
 *   npx tsx scripts/gen-sideport-docs.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import prettier from 'prettier';
import { syntax, type PortCommand } from '../src/server/command-table.js';
import { vectorCommands } from '../src/sideports/vector/commands.js';
import { queueCommands } from '../src/sideports/queue-commands.js';
import { accountCommands } from '../src/sideports/account-commands.js';
import type { VectorClient } from '../src/upstream/vector-client.js';
import type { QueueClient } from '../src/upstream/queue-client.js';

export const BEGIN = '<!-- BEGIN generated command table (npx tsx scripts/gen-sideport-docs.ts) -->';
export const END = '<!-- END generated command table -->';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The commands of each side port as data; the clients are never called (no handler runs here). */
export function sideportCommands(): Record<'vector' | 'queue', PortCommand[]> {
  return {
    vector: vectorCommands([{} as VectorClient]),
    queue: [...queueCommands({} as QueueClient), ...accountCommands(undefined)],
  };
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

function row(c: PortCommand): string {
  const key = c.firstKey ? `${c.firstKey}${c.lastKey === -1 ? '…' : ''}` : '';
  return `| \`${cell(syntax(c))}\` | ${c.arity} | ${c.flags.join(', ')} | ${key} | ${cell(c.summary)} | ${cell(c.upstream ?? '')} |`;
}

/** One row per command (sorted by name) and subcommand (in its container's order), as COMMAND DOCS lists them. */
export function renderCommandTable(commands: PortCommand[]): string {
  const lines = ['| Command | Arity | Flags | Key | Summary | Upstream |', '|---|---|---|---|---|---|'];
  for (const c of [...commands].sort((a, b) => a.name.localeCompare(b.name))) {
    if (c.subcommands) for (const s of c.subcommands) lines.push(row(s));
    else lines.push(row(c));
  }
  return lines.join('\n');
}

/** The doc with its generated table replaced, formatted as the committed file must be. */
export async function renderSideportDoc(doc: string, commands: PortCommand[]): Promise<string> {
  const b = doc.indexOf(BEGIN);
  const e = doc.indexOf(END);
  if (b < 0 || e < b) throw new Error(`the doc lacks the markers ${BEGIN} … ${END}`);
  const text = `${doc.slice(0, b + BEGIN.length)}\n\n${renderCommandTable(commands)}\n\n${doc.slice(e)}`;
  return prettier.format(text, { ...(await prettier.resolveConfig(path.join(root, 'docs/x.md'))), parser: 'markdown' });
}

export const DOCS = { vector: 'docs/vector-sideport.md', queue: 'docs/queue-sideport.md' } as const;

async function main(): Promise<void> {
  const all = sideportCommands();
  for (const role of ['vector', 'queue'] as const) {
    const file = path.join(root, DOCS[role]);
    writeFileSync(file, await renderSideportDoc(readFileSync(file, 'utf8'), all[role]));
    process.stderr.write(`gen-sideport-docs: wrote ${file}\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
