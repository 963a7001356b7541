/**
 * Writes docs/compatibility.md from the command table (src/commands/), so the documentation cannot drift
 * from what the proxy and the platform do. test/commands/compat-doc.test.ts checks the committed file.
 *
 *   npx tsx scripts/gen-compat-doc.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { commandData, type CommandData } from '../src/commands/data.js';
import {
  CLUSTER_DISABLED_ERROR,
  PLATFORM_REFUSAL_REASONS,
  platformRefusalText,
  proxyRefusalText,
  type PlatformRefusalKind,
  type Route,
} from '../src/commands/routes.js';
import { JSON_MODULE } from '../src/commands/json-commands.js';
import { SEARCH_MODULE } from '../src/commands/search-commands.js';
import { allCommands, allCommandsAndSubcommands, tableData, type CommandSpec } from '../src/commands/table.js';

/** SELECT n and what cannot cross databases over REST (src/proxy/databases.ts). */
const SEVERAL_DATABASES = [
  '### Several databases (SELECT n)',
  '',
  'Database 0 is the upstream (`--upstream-url`); database n is the REST database given with `--database n=URL[,TOKEN]`',
  "(the dev stack serves 16, its platform's `<base>/db/<n>`). A connection's selected database decides the upstream of its",
  "commands, transactions, WATCH and blocking commands; each database has its own batcher, and a connection's commands stay",
  'in order across SELECTs (a command for another database waits until the earlier ones are answered). `SELECT` of a number',
  "that is not configured answers Redis' `ERR DB index is out of range`; RESET goes back to 0, HELLO and AUTH keep the",
  'database, as in Redis. Pub/sub is global in Redis: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and PUBLISH, SPUBLISH, PUBSUB use',
  "database 0's upstream whatever the selected database (a PUBLISH inside a script or a transaction runs where they run: on",
  "the dev stack, one redis-server, it reaches every subscriber; on separate hosted databases only database 0's). CLIENT LIST",
  'shows `db=n`, MONITOR `[n addr]`, INFO keyspace a line per database with keys (asking every configured database), CONFIG',
  'GET databases the highest number + 1.',
  '',
  'What one REST call cannot do across two databases is refused with an error that says so:',
  '',
  '| command | answer |',
  '|---|---|',
  "| MOVE, SWAPDB | `ERR command 'move' is not supported by respgate: it moves data between databases, …` |",
  '| COPY src dst DB n (n another configured database) | `ERR COPY to another database is not supported by respgate: …`; DB of the selected database copies in place; DB of an unconfigured number: `ERR DB index is out of range` |',
  '| MULTI … SELECT m … EXEC with commands for two databases, or WATCH in one database and EXEC in another | `EXECABORT Transaction discarded because of: respgate cannot run one transaction in several databases …`: nothing runs, the connection stays on its database |',
  '',
  'A SELECT inside MULTI that moves the whole transaction to one database runs as in Redis.',
];

/** What the local platform does with each command newer than Redis 7.0.15 (src/platform/kv/compat.ts). */
const NEWER_ON_PLATFORM: Record<string, string> = {
  hgetdel: 'emulated (one Lua script: HMGET + HDEL)',
  hgetex: 'emulated with field TTLs (field-expiry.ts; inside /multi-exec only without EX/PX/EXAT/PXAT)',
  hsetex: 'emulated with field TTLs (field-expiry.ts; inside /multi-exec only without EX/PX/EXAT/PXAT)',
  xackdel: 'emulated (one Lua script, KEEPREF/DELREF/ACKED)',
  xdelex: 'emulated (one Lua script, KEEPREF/DELREF/ACKED)',
};

const GROUP_ORDER = [
  'connection',
  'server',
  'generic',
  'string',
  'bitmap',
  'hash',
  'list',
  'set',
  'sorted-set',
  'geo',
  'hyperloglog',
  'stream',
  'pubsub',
  'transactions',
  'scripting',
  'cluster',
  'array',
  'module',
];

const GROUP_TITLES: Record<string, string> = {
  connection: 'Connection',
  server: 'Server',
  generic: 'Keys (generic)',
  string: 'Strings',
  bitmap: 'Bitmaps',
  hash: 'Hashes',
  list: 'Lists',
  set: 'Sets',
  'sorted-set': 'Sorted sets',
  geo: 'Geospatial',
  hyperloglog: 'HyperLogLog',
  stream: 'Streams',
  pubsub: 'Pub/sub',
  transactions: 'Transactions',
  scripting: 'Scripting and functions',
  cluster: 'Cluster',
  array: 'Arrays',
  module: 'Modules: JSON and Search',
};

const ROUTE_TEXT: Record<Route, string> = {
  forward: 'forward',
  local: 'local',
  transaction: 'transaction',
  stream: 'stream',
  blocking: 'blocking (emulated)',
  refused: '**refused**',
};

const EXAMPLES: Record<PlatformRefusalKind, string> = {
  blocking: 'blpop',
  transaction: 'watch',
  connection: 'select',
  cluster: 'cluster',
  pubsub: 'subscribe',
  monitor: 'monitor',
  operator: 'config|set',
  database: 'swapdb',
  debugger: 'script|debug',
};

const dataByName = new Map<string, CommandData>();
for (const c of tableData) {
  dataByName.set(c.name, c);
  for (const s of c.subcommands ?? []) dataByName.set(s.name, s);
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
const code = (s: string) => '`' + s.replace(/`/g, "'") + '`';
const display = (spec: CommandSpec) => spec.name.toUpperCase().replace('|', ' ');

function proxyNotes(spec: CommandSpec): string {
  const notes: string[] = [];
  if (spec.route === 'refused' && spec.refusal === CLUSTER_DISABLED_ERROR)
    notes.push(`answers ${code(CLUSTER_DISABLED_ERROR)}, like a standalone Redis`);
  else if (spec.reason) notes.push(spec.reason);
  const docs = dataByName.get(spec.name)?.docs;
  if (docs?.docFlags?.includes('deprecated')) {
    notes.push(`deprecated since ${docs.deprecatedSince ?? '?'}${docs.replacedBy ? `, use ${docs.replacedBy}` : ''}`);
  }
  return notes.join('; ');
}

/** Commands the platform answers itself although their rule refuses them (src/platform/kv/executor.ts). */
const PLATFORM_ANSWERS: Record<string, string> = {
  'client|setinfo': 'yes: checked as Redis checks it, then OK (a REST request has no connection to name)',
  'config|set': 'only notify-keyspace-events (as the service); other parameters: no (operator)',
};

/** Newer than the platform's redis-server 7.0.15 (a command, or a subcommand of one of its containers). */
const newerThanStorage = (spec: CommandSpec) => versionAbove(spec.since, '7.0.15');

function versionAbove(a: string, b: string): boolean {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
}

function platformCell(spec: CommandSpec): string {
  if (PLATFORM_ANSWERS[spec.name]) return PLATFORM_ANSWERS[spec.name];
  if (spec.module === JSON_MODULE) return 'yes: the JSON function library inside redis-server (docs/json.md)';
  if (spec.module === SEARCH_MODULE) return "yes: the platform's search engine (docs/platform-kv.md, Search)";
  const rule = spec.platform;
  if (!rule && NEWER_ON_PLATFORM[spec.name]) return NEWER_ON_PLATFORM[spec.name];
  if (!rule && spec.group === 'hash' && versionAbove(spec.since, '7.3.0'))
    return 'emulated: field TTLs beside the data, lazy and active expiry (field-expiry.ts); refused inside /multi-exec';
  if (!rule && newerThanStorage(spec)) return `error from redis-server 7.0.15 (unknown command); runs on Redis ${spec.since}+`;
  if (!rule) return 'yes';
  if (rule.when === 'block-option') return `yes; with BLOCK: no (${rule.kind})`;
  if (rule.when === 'db-option') return `yes; with DB other than 0: no (${rule.kind})`;
  if (rule.when === 'not-notify') return `notify-keyspace-events only; other parameters: no (${rule.kind})`;
  return `no (${rule.kind})`;
}

function row(spec: CommandSpec): string {
  const since = (dataByName.get(spec.name)?.docs.since ?? spec.since) || 'service';
  // CLIENT, CONFIG, ... alone fail their arity check: only their subcommands have routes that matter.
  if (spec.subcommands && spec.arity <= -2) return `| ${cell(display(spec))} | ${since} | — | needs a subcommand | — |`;
  return `| ${cell(display(spec))} | ${since} | ${ROUTE_TEXT[spec.route]} | ${cell(proxyNotes(spec))} | ${cell(platformCell(spec))} |`;
}

export function renderCompatDoc(): string {
  const all = allCommandsAndSubcommands();
  const count = (route: Route) => all.filter((s) => s.route === route).length;
  const platformRefused = all.filter((s) => s.platform && s.platform.when === 'always').length;
  const platformConditional = all.filter((s) => s.platform && s.platform.when !== 'always').length;
  const out: string[] = [];
  const modules = (m: string) => all.filter((s) => s.module === m && !s.container).length;
  out.push(`# Command compatibility (Redis ${commandData.redisVersion})`);
  out.push('');
  out.push(`<!-- Generated by scripts/gen-compat-doc.ts from src/commands/ (redis-${commandData.redisVersion}.json, json-commands.ts,`);
  out.push('     search-commands.ts, routes.ts). Do not edit; run `npx tsx scripts/gen-compat-doc.ts`. test/commands/compat-doc.test.ts');
  out.push('     fails when this file is stale. -->');
  out.push('');
  out.push(
    `Every command the proxy knows (${allCommands().length} commands and ${all.length - allCommands().length} subcommands), what the proxy ` +
      'does with it, and whether the local REST platform runs it:',
  );
  out.push('');
  out.push(
    `- the core commands of Redis ${commandData.redisVersion}, recorded from a real redis-server ${commandData.redisVersion} (\`COMMAND INFO\``,
  );
  out.push('  and `COMMAND DOCS`, `npx tsx scripts/gen-command-data.ts --port <port of a running Redis 8.8>`);');
  out.push(
    `- RedisJSON's JSON.* (${modules(JSON_MODULE)}, module \`${JSON_MODULE}\`) and the service's SEARCH.* (${modules(SEARCH_MODULE)}, Upstash Redis`,
  );
  out.push(`  Search, module \`${SEARCH_MODULE}\`), described by hand in the shape Redis 8 gives a loaded module's commands.`);
  out.push('');
  out.push('`COMMAND`, `COMMAND COUNT`, `COMMAND LIST` (with `FILTERBY MODULE`, `ACLCAT`, `PATTERN`), `COMMAND INFO`, `COMMAND DOCS`');
  out.push(
    `and \`COMMAND GETKEYS\`/\`GETKEYSANDFLAGS\` answer for exactly these, byte for byte as Redis ${commandData.redisVersion} answers for its`,
  );
  out.push("own (in name order where Redis uses hash order). Redis 8.8's module commands, the vector sets (VADD, VSIM, …,");
  out.push('module `vectorset`), are not among them: the vector side port serves them.');
  out.push('The routes and the platform policy are written by hand in `src/commands/routes.ts`.');
  out.push('');
  out.push("Before routing, the proxy checks every command as Redis does and answers with Redis' own texts:");
  out.push("`ERR unknown command 'foo', with args beginning with: 'a' `, `ERR unknown subcommand 'x'. Try CLIENT HELP.`,");
  out.push("`ERR wrong number of arguments for 'get' command`. A command the table lacks (FT.SEARCH, VADD, a command newer");
  out.push("than Redis 8.8) gets Redis' unknown-command error from the proxy and never reaches the upstream: without its arity,");
  out.push('flags and key positions the proxy could not check it, route it (blocking, pub/sub, transactions, CLIENT PAUSE WRITE)');
  out.push('or keep a read-only token read-only (docs/decisions.md).');
  out.push('');
  out.push('## Proxy routes');
  out.push('');
  out.push('| route | meaning | commands |');
  out.push('|---|---|---|');
  out.push(`| forward | sent to the REST upstream as is (resp2 bytes passed through) | ${count('forward')} |`);
  out.push(`| local | answered by the proxy itself: connection state, handshake, introspection | ${count('local')} |`);
  out.push(`| transaction | MULTI/EXEC: queued by the proxy and sent as one atomic \`/multi-exec\` request | ${count('transaction')} |`);
  out.push(`| stream | pub/sub and MONITOR: the upstream's server-sent-event streams turned back into RESP | ${count('stream')} |`);
  out.push(
    `| blocking (emulated) | the upstream has no blocking commands: the proxy polls the non-blocking form until the timeout | ${count('blocking')} |`,
  );
  out.push(`| refused | answered with an error naming the command and why; never sent upstream | ${count('refused')} |`);
  out.push('');
  out.push(`A refused command is answered with ${code(proxyRefusalText('<command>', '<proxy notes>'))}, except the`);
  out.push(`cluster commands (CLUSTER, READONLY, READWRITE, ASKING), answered ${code(CLUSTER_DISABLED_ERROR)} as by a`);
  out.push('standalone Redis, which is what cluster-aware clients expect from a non-cluster server.');
  out.push('');
  out.push('XREAD and XREADGROUP are forwarded, or emulated as blocking commands when they have a BLOCK argument.');
  out.push('');
  for (const line of SEVERAL_DATABASES) out.push(line);
  out.push('');
  out.push('## REST platform');
  out.push('');
  out.push(
    `The local platform runs every command on its redis-server except ${platformRefused} commands and subcommands that it refuses ` +
      `(and ${platformConditional} that it refuses only with certain arguments), answering HTTP 400 with \`{"error": text}\`.`,
  );
  out.push("The text names the command in lowercase (`container|sub` for a subcommand, as in Redis' own errors):");
  out.push('');
  out.push('| kind | why | text (example) |');
  out.push('|---|---|---|');
  for (const kind of Object.keys(PLATFORM_REFUSAL_REASONS) as PlatformRefusalKind[]) {
    out.push(`| ${kind} | ${cell(PLATFORM_REFUSAL_REASONS[kind])} | ${cell(code(platformRefusalText(kind, EXAMPLES[kind])))} |`);
  }
  out.push('');
  out.push('Blocking commands would hold a connection of the server for their whole timeout; WATCH needs a connection of its');
  out.push('own (send transactions to `/multi-exec`); connection commands have no connection to act on; pub/sub and MONITOR');
  out.push('have their own event-stream endpoints; operator commands would let a database user stop, reconfigure or escape');
  out.push('the server; only database 0 exists at a base URL (the platform serves database n at `<base>/db/<n>`).');
  out.push('');

  out.push("## Newer than the platform's redis-server 7.0.15");
  out.push('');
  out.push('The local platform stores in redis-server 7.0.15 (Debian 12). What it does with the commands newer than that, and with');
  out.push('JSON.* and SEARCH.*; on a newer data store (`--redis-server`, `--redis-url`) it lets the store run the ones it has');
  out.push('(docs/platform-kv.md). The hosted service answers for itself.');
  out.push('');
  out.push('| command | since | proxy | REST platform on redis-server 7.0.15 |');
  out.push('|---|---|---|---|');
  for (const spec of all.filter((s) => s.module === undefined && newerThanStorage(s) && !(s.subcommands && s.arity <= -2))) {
    out.push(`| ${code(display(spec))} | ${spec.since} | ${ROUTE_TEXT[spec.route]} | ${cell(platformCell(spec))} |`);
  }
  out.push(
    `| JSON.* (${modules(JSON_MODULE)}) | JSON 1.0.0–2.6.0 | forward | the JSON function library inside redis-server (docs/json.md) |`,
  );
  out.push(`| SEARCH.* (${modules(SEARCH_MODULE)}) | service | forward | the platform's search engine (docs/platform-kv.md, Search) |`);
  out.push(
    `| ${code('BITOP DIFF')}, ${code('DIFF1')}, ${code('ANDOR')}, ${code('ONE')} | 8.2.0 | forward | emulated (one Lua script, byte by byte) |`,
  );
  out.push('');

  const groups = new Map<string, CommandSpec[]>();
  for (const spec of allCommands()) {
    const list = groups.get(spec.group) ?? [];
    list.push(spec);
    groups.set(spec.group, list);
  }
  const order = [...GROUP_ORDER.filter((g) => groups.has(g)), ...[...groups.keys()].filter((g) => !GROUP_ORDER.includes(g)).sort()];
  // Measured figures (Redis' own test suite through the proxy): kept by hand in docs/redis-suite.md.
  out.push(readFileSync(new URL('../docs/redis-suite.md', import.meta.url), 'utf8').trimEnd());
  out.push('');
  out.push('## Commands by group');
  out.push('');
  out.push(
    order
      .map(
        (g) =>
          `[${GROUP_TITLES[g] ?? g}](#${(GROUP_TITLES[g] ?? g)
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, '')
            .replace(/ /g, '-')})`,
      )
      .join(' · '),
  );
  for (const g of order) {
    out.push('');
    out.push(`### ${GROUP_TITLES[g] ?? g}`);
    out.push('');
    out.push('| command | since | proxy | proxy notes | REST platform |');
    out.push('|---|---|---|---|---|');
    for (const spec of groups.get(g)!) {
      out.push(row(spec));
      for (const sub of spec.subcommands?.values() ?? []) out.push(row(sub));
    }
  }
  out.push('');
  return out.join('\n');
}

function main(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const file = path.join(root, 'docs/compatibility.md');
  const text = renderCompatDoc();
  writeFileSync(file, text);
  process.stderr.write(`gen-compat-doc: wrote ${file} (${text.split('\n').length} lines)\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
