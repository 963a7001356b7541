// A step of `npm run build`: writes the command data into dist/commands/ in two files. The proxy builds
// its command table from the first at every start; the second, the commands' documentation (summary,
// arguments, history: two thirds of the bytes), is read with the first COMMAND DOCS (src/commands/data.ts).
// On this 2-core machine, reading and parsing the whole 394 KB took ~9 ms of a proxy's start.
//   dist/commands/redis-8.8.0.json       every command, its docs cut to what the table needs (group,
//                                         since, module), and `docsFile`: where the rest is
//   dist/commands/redis-8.8.0.docs.json  the rest of each command's docs, by name (`container|sub` for subcommands)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NAME = 'redis-8.8.0';
/** The docs fields the command table is built from (src/commands/table.ts). */
const HEAD = ['group', 'since', 'module'];

const data = JSON.parse(readFileSync(path.join(root, 'src/commands', `${NAME}.json`), 'utf8'));
const rest = {};

function cut(command) {
  const head = {};
  const more = {};
  for (const [k, v] of Object.entries(command.docs)) (HEAD.includes(k) ? head : more)[k] = v;
  rest[command.name] = more;
  return { ...command, docs: head, ...(command.subcommands ? { subcommands: command.subcommands.map(cut) } : {}) };
}

const core = { ...data, docsFile: `${NAME}.docs.json`, commands: data.commands.map(cut) };
writeFileSync(path.join(root, 'dist/commands', `${NAME}.json`), JSON.stringify(core));
writeFileSync(path.join(root, 'dist/commands', core.docsFile), JSON.stringify(rest));
