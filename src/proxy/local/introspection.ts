// What clients read about the server during their handshake: INFO, COMMAND, CONFIG GET, MODULE.
import { globToRegExp } from '../../commands/glob.js';
import { getKeysReply } from '../../commands/getkeys.js';
import { commandCountReply, commandDocsReply, commandInfoReply, commandListReply } from '../../commands/introspection.js';
import { setsOnlyNotify } from '../../commands/table.js';
import { lower } from '../../resp/args.js';
import type { Protocol } from '../../resp/protocol.js';
import { errorReply, OK, reply, SYNTAX, textReply } from '../../server/replies.js';
import { COMMAND_HELP, CONFIG_HELP, helpReply, MODULE_HELP } from '../../server/commands/help.js';
import { buildInfo, resetInfoStats } from './info.js';
import { checkProxyParam, isProxyParam, proxyParamValues, setProxyParam } from './proxy-params.js';
import type { Credential } from '../../upstream/kv-client.js';
import type { Databases } from '../databases.js';
import type { ProxyHandler, ProxyServerState } from '../context.js';

const INFO_KEYSPACE = [Buffer.from('INFO'), Buffer.from('keyspace')];

export const info: ProxyHandler = (ctx, args) => {
  const { conn, server } = ctx;
  const sections = args.slice(1).map(lower);
  const wantsKeyspace = sections.length === 0 || sections.some((s) => ['keyspace', 'all', 'everything', 'default'].includes(s));
  // The protocol of the connection when the command ran (a HELLO after it must not change its reply).
  const protocol = conn.protocol;
  const render = (keyspaceLine: string | undefined) => textReply(protocol, buildInfo(sections, { server, conn, keyspaceLine }));
  if (!wantsKeyspace) return render(undefined);
  const databases = server.databases;
  if (databases.count > 1 && conn.queuedCommands < 0) {
    // A line per database with keys: every database is asked, after this connection's earlier commands.
    return {
      kind: 'defer',
      run: () =>
        ctx
          .drained()
          .then(() => keyspaceOfAll(databases, conn.credential))
          .then(render),
    };
  }
  // The key count comes from the upstream, in this connection's order of commands (inside EXEC: its database's).
  const db = conn.db;
  const upstreamDb = databases.has(db) ? databases.get(db).keyspaceDb : 0;
  return { kind: 'forward', args: INFO_KEYSPACE, transform: (upstream) => render(keyspaceFrom(upstream, upstreamDb, db)) };
};

/** The keyspace lines of every database, `db<n>:` each, in order; undefined when none has keys. */
async function keyspaceOfAll(databases: Databases, credential: Credential | undefined): Promise<string | undefined> {
  const indexes = databases.indexes();
  const lines = await Promise.all(
    indexes.map(async (index) => {
      const db = databases.get(index);
      const [reply] = await db.batcher.poll([INFO_KEYSPACE], credential);
      return keyspaceFrom(reply, db.keyspaceDb, index);
    }),
  );
  const present = lines.filter((l) => l !== undefined);
  return present.length > 0 ? present.join('\r\n') : undefined;
}

export const command: ProxyHandler = ({ conn }, args) => {
  const proto = conn.protocol;
  if (args.length === 1) return commandInfoReply(undefined, proto);
  const sub = lower(args[1]);
  switch (sub) {
    case 'count':
      return commandCountReply(proto);
    case 'info':
      return commandInfoReply(args.slice(2), proto);
    case 'docs':
      return commandDocsReply(args.slice(2), proto);
    case 'list':
      return commandListReply(proto, args.slice(2));
    case 'getkeys':
    case 'getkeysandflags':
      return getKeysReply(args.slice(2), sub === 'getkeysandflags', proto);
    case 'help':
      return helpReply(proto, COMMAND_HELP);
    default:
      return errorReply(`ERR command 'command|${sub}' is not supported by respgate`);
  }
};

export const config: ProxyHandler = ({ conn, server }, args) => {
  const sub = lower(args[1]);
  if (sub === 'help') return helpReply(conn.protocol, CONFIG_HELP);
  if (sub === 'set') {
    // Keyspace notifications are the upstream's, and the service lets CONFIG SET turn them on.
    if (setsOnlyNotify(args))
      return conn.queuedCommands < 0
        ? { kind: 'forward', args, transform: (reply) => reply }
        : errorReply("ERR respgate cannot run 'config|set' of notify-keyspace-events inside MULTI: it goes to the upstream");
    return configSet(server, args);
  }
  if (sub === 'resetstat') {
    // The proxy's own statistics (INFO stats and commandstats, errorstats, SLOWLOG untouched as in Redis);
    // the upstream's are the service's.
    resetInfoStats(server);
    return OK;
  }
  const databases = String(Math.max(...server.databases.indexes()) + 1);
  const values = { ...CONFIG_VALUES, databases, ...proxyParamValues(server) };
  const patterns = args.slice(2);
  const protocol = conn.protocol;
  if (conn.queuedCommands >= 0 || !patterns.some(asksNotify)) return configGet(protocol, patterns, values);
  // notify-keyspace-events is the upstream's value (CONFIG SET above), read in this connection's order.
  return {
    kind: 'forward',
    args: CONFIG_GET_NOTIFY,
    transform: (upstream) => configGet(protocol, patterns, { ...values, [NOTIFY]: notifyValue(upstream) }),
  };
};

const NOTIFY = 'notify-keyspace-events';
const CONFIG_GET_NOTIFY = [Buffer.from('CONFIG'), Buffer.from('GET'), Buffer.from(NOTIFY)];

/** Whether a CONFIG GET pattern names notify-keyspace-events. */
function asksNotify(pattern: Buffer): boolean {
  const text = pattern.toString('latin1');
  return /[[*?]/.test(text) ? globToRegExp(text, true).test(NOTIFY) : text.toLowerCase() === NOTIFY;
}

/** The value in the upstream's `*2 notify-keyspace-events <value>` answer ('' when it has none). */
function notifyValue(upstream: Buffer): string {
  const m = /^\*2\r\n\$\d+\r\nnotify-keyspace-events\r\n\$\d+\r\n([^\r\n]*)\r\n$/.exec(upstream.toString('latin1'));
  return m ? m[1] : '';
}

/**
 * Parameters that only choose how Redis encodes a value in memory (listpack or hashtable, intset,
 * quicklist nodes, stream nodes, sparse HyperLogLogs): no command's reply depends on them, only
 * OBJECT ENCODING, memory use and speed. The upstream's settings are the service's: CONFIG SET of
 * these is accepted (+OK) and changes nothing, so apps and test suites that tune them go on.
 */
const ENCODING_PARAMETERS = new Set([
  'hash-max-listpack-entries',
  'hash-max-listpack-value',
  'hash-max-ziplist-entries',
  'hash-max-ziplist-value',
  'set-max-intset-entries',
  'zset-max-listpack-entries',
  'zset-max-listpack-value',
  'zset-max-ziplist-entries',
  'zset-max-ziplist-value',
  'list-max-listpack-size',
  'list-max-ziplist-size',
  'list-compress-depth',
  'stream-node-max-bytes',
  'stream-node-max-entries',
  'hll-sparse-max-bytes',
]);
const MANAGED_CONFIG_REFUSAL = errorReply(
  "ERR command 'config|set' is not supported by respgate: the upstream's configuration is managed by the service; configure respgate with its flags",
);

/**
 * config.c configSetCommand: the proxy's own parameters (proxy-params.ts) change live; the encoding
 * parameters are checked (an integer, memory units for the byte sizes) and change nothing; all or
 * nothing, as in Redis.
 */
function configSet(server: ProxyServerState, args: Buffer[]): Buffer {
  if (args.length % 2 !== 0) return SYNTAX;
  const seen = new Set<string>();
  const changes: Array<[string, unknown]> = [];
  for (let i = 2; i < args.length; i += 2) {
    const name = lower(args[i]);
    if (seen.has(name)) return errorReply(`ERR CONFIG SET failed (possibly related to argument '${name}') - duplicate parameter`);
    seen.add(name);
    if (isProxyParam(name)) {
      const checked = checkProxyParam(server, name, args[i + 1]);
      if ('error' in checked) return errorReply(`ERR CONFIG SET failed (possibly related to argument '${name}') - ${checked.error}`);
      changes.push([name, checked.value]);
      continue;
    }
    // A parameter CONFIG GET shows, set to the value it shows, changes nothing: +OK (test suites
    // and tools save a value, set it, and put it back).
    const same = Object.hasOwn(CONFIG_VALUES, name) && CONFIG_VALUES[name] === args[i + 1].toString('latin1');
    if (!ENCODING_PARAMETERS.has(name) && !same) return MANAGED_CONFIG_REFUSAL;
    if (same) continue;
    const value = args[i + 1].toString('latin1');
    const memory = name.endsWith('-bytes') || name.endsWith('-value');
    if (memory && !/^\d+([kmg]b?)?$/i.test(value))
      return errorReply(`ERR CONFIG SET failed (possibly related to argument '${name}') - argument must be a memory value`);
    if (!memory && !/^-?\d+$/.test(value))
      return errorReply(`ERR CONFIG SET failed (possibly related to argument '${name}') - argument couldn't be parsed into an integer`);
  }
  for (const [name, value] of changes) setProxyParam(server, name, value);
  return OK;
}

export const module: ProxyHandler = ({ conn }, args) => {
  const sub = lower(args[1]);
  if (sub === 'list') return reply(conn.protocol, (w) => w.arrayHeader(0));
  if (sub === 'help') return helpReply(conn.protocol, MODULE_HELP);
  return errorReply(`ERR command 'module|${sub}' is not supported by respgate: modules cannot be loaded into the upstream service`);
};

/** The keys clients read at start-up (redis-benchmark: save, appendonly; BullMQ: maxmemory-policy). */
const CONFIG_VALUES: Record<string, string> = {
  save: '',
  appendonly: 'no',
  'maxmemory-policy': 'noeviction',
  maxmemory: '0',
  databases: '1',
  // timeout, maxclients and slowlog-*: the proxy's live values (proxy-params.ts).
  timeout: '',
  maxclients: '',
  'proto-max-bulk-len': '536870912',
  'notify-keyspace-events': '',
  'cluster-enabled': 'no',
  'lua-time-limit': '5000',
  'busy-reply-threshold': '5000',
  // Encoding parameters: Redis 7.0's defaults (the upstream's own values are not observable). CONFIG
  // SET of them is accepted and changes nothing (configSet), so a save / set / restore round trip works.
  'hash-max-listpack-entries': '128',
  'hash-max-listpack-value': '64',
  'hash-max-ziplist-entries': '128',
  'hash-max-ziplist-value': '64',
  'set-max-intset-entries': '512',
  'zset-max-listpack-entries': '128',
  'zset-max-listpack-value': '64',
  'zset-max-ziplist-entries': '128',
  'zset-max-ziplist-value': '64',
  'list-max-listpack-size': '-2',
  'list-max-ziplist-size': '-2',
  'list-compress-depth': '0',
  'stream-node-max-bytes': '4096',
  'stream-node-max-entries': '100',
  'hll-sparse-max-bytes': '3000',
};

/**
 * config.c configGetCommand: a name without glob characters is looked up directly and answered under
 * the name as given; a pattern matches parameter names case-insensitively. Each parameter appears once.
 * (Redis emits the matches in hash-table order, which differs between servers; here, in match order.)
 */
function configGet(protocol: Protocol, patterns: Buffer[], values: Record<string, string>): Buffer {
  const matched = new Map<string, [Buffer | string, string]>();
  for (const p of patterns) {
    const text = p.toString('latin1');
    if (!/[[*?]/.test(text)) {
      const name = text.toLowerCase();
      if (!matched.has(name) && Object.hasOwn(values, name)) matched.set(name, [p, values[name]]);
      continue;
    }
    const re = globToRegExp(text, true);
    for (const [k, v] of Object.entries(values)) if (!matched.has(k) && re.test(k)) matched.set(k, [k, v]);
  }
  return reply(protocol, (w) => {
    w.mapHeader(matched.size);
    for (const [k, v] of matched.values()) w.bulk(k).bulk(v);
  });
}

/** The `db<upstreamDb>:…` line of the upstream's INFO keyspace answer, if it has one, named `db<shownAs>:`. */
function keyspaceFrom(upstream: Buffer, upstreamDb = 0, shownAs = 0): string | undefined {
  if (upstream[0] !== 0x24) return undefined;
  const m = new RegExp(`^db${upstreamDb}:([^\r\n]*)`, 'm').exec(upstream.toString('latin1'));
  return m ? `db${shownAs}:${m[1]}` : undefined;
}
