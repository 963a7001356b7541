// What clients read about the server during their handshake: INFO, COMMAND, CONFIG GET, MODULE.
import { globToRegExp } from '../../commands/glob.js';
import { commandDocsReply, commandInfoReply } from '../../commands/introspection.js';
import { allCommands, allCommandsAndSubcommands } from '../../commands/table.js';
import { lower } from '../../resp/args.js';
import type { Protocol } from '../../resp/protocol.js';
import { arrayElements } from '../../resp/reply-scanner.js';
import type { LocalResult } from '../../server/commands/handler.js';
import { errorReply, OK, reply, SYNTAX, textReply } from '../../server/replies.js';
import { COMMAND_HELP, CONFIG_HELP, helpReply, MODULE_HELP } from '../../server/commands/help.js';
import { buildInfo, resetInfoStats } from './info.js';
import { checkProxyParam, isProxyParam, proxyParamValues, setProxyParam } from './proxy-params.js';
import type { ProxyHandler, ProxyServerState } from '../context.js';

const INFO_KEYSPACE = [Buffer.from('INFO'), Buffer.from('keyspace')];

export const info: ProxyHandler = ({ conn, server }, args) => {
  const sections = args.slice(1).map(lower);
  const wantsKeyspace = sections.length === 0 || sections.some((s) => ['keyspace', 'all', 'everything', 'default'].includes(s));
  // The protocol of the connection when the command ran (a HELLO after it must not change its reply).
  const protocol = conn.protocol;
  const render = (keyspaceLine: string | undefined) => textReply(protocol, buildInfo(sections, { server, conn, keyspaceLine }));
  if (!wantsKeyspace) return render(undefined);
  // The key count comes from the upstream, in this connection's order of commands.
  return { kind: 'forward', args: INFO_KEYSPACE, transform: (upstream) => render(keyspaceFrom(upstream)) };
};

export const command: ProxyHandler = ({ conn }, args) => {
  const proto = conn.protocol;
  if (args.length === 1) return commandInfoReply(undefined, proto);
  const sub = lower(args[1]);
  switch (sub) {
    case 'count':
      return reply(proto, (w) => w.integer(allCommands().length));
    case 'info':
      return commandInfoReply(args.slice(2), proto);
    case 'docs':
      return commandDocsReply(args.slice(2), proto);
    case 'list':
      return commandList(proto, args.slice(2));
    case 'help':
      return helpReply(proto, COMMAND_HELP);
    default:
      return errorReply(`ERR command 'command|${sub}' is not supported by respgate`);
  }
};

export const config: ProxyHandler = ({ conn, server }, args) => {
  const sub = lower(args[1]);
  if (sub === 'help') return helpReply(conn.protocol, CONFIG_HELP);
  if (sub === 'set') return withUpstreamParams(args, (local, apply) => configSet(server, local, apply));
  if (sub === 'resetstat') {
    // The proxy's own statistics (INFO stats and commandstats, errorstats, SLOWLOG untouched as in Redis);
    // the upstream's are the service's.
    resetInfoStats(server);
    return OK;
  }
  const patterns = args.slice(2);
  const protocol = conn.protocol;
  const values = { ...CONFIG_VALUES, ...proxyParamValues(server) };
  const upstream = patterns.filter((p) => UPSTREAM_PARAMS.some((name) => matchesParam(p, name)));
  if (upstream.length === 0) return configGet(protocol, patterns, values);
  // The upstream's own value (keyspace notifications: the service's documented CONFIG GET), in this
  // connection's order of commands; a pattern that only happens to match gets '' if the upstream refuses.
  const names = UPSTREAM_PARAMS.filter((name) => upstream.some((p) => matchesParam(p, name)));
  return {
    kind: 'forward',
    args: [Buffer.from('CONFIG'), Buffer.from('GET'), ...names.map((n) => Buffer.from(n))],
    transform: (reply) => {
      if (reply[0] === 0x2d && upstream.some((p) => !/[[*?]/.test(p.toString('latin1')))) return reply;
      return configGet(protocol, patterns, { ...values, ...configPairs(reply) });
    },
  };
};

/**
 * Parameters that belong to the upstream and that the service lets a client change: keyspace
 * notifications (Upstash documents `CONFIG SET notify-keyspace-events` over REST; the events then
 * come over the pub/sub streams like any message). CONFIG GET and SET of them go upstream.
 */
const UPSTREAM_PARAMS = ['notify-keyspace-events'];

function matchesParam(pattern: Buffer, name: string): boolean {
  const text = pattern.toString('latin1');
  return /[[*?]/.test(text) ? globToRegExp(text, true).test(name) : text.toLowerCase() === name;
}

/** The name/value pairs of an upstream CONFIG GET reply (RESP2 array of bulk strings). */
function configPairs(reply: Buffer): Record<string, string> {
  const items = (arrayElements(reply) ?? []).map((el) =>
    el[0] === 0x24 ? el.subarray(el.indexOf(10) + 1, el.length - 2).toString('latin1') : '',
  );
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < items.length; i += 2) out[items[i].toLowerCase()] = items[i + 1];
  return out;
}

/**
 * CONFIG SET with upstream parameters among its pairs: those go upstream as one CONFIG SET; the
 * proxy's own are checked first and applied only when the upstream said OK (all or nothing, as Redis).
 */
function withUpstreamParams(args: Buffer[], local: (args: Buffer[], apply: boolean) => Buffer): LocalResult {
  if (args.length < 4 || args.length % 2 !== 0) return local(args, true);
  const upstreamPairs: Buffer[] = [];
  const localArgs: Buffer[] = args.slice(0, 2);
  for (let i = 2; i + 1 < args.length; i += 2) {
    if (UPSTREAM_PARAMS.includes(lower(args[i]))) upstreamPairs.push(args[i], args[i + 1]);
    else localArgs.push(args[i], args[i + 1]);
  }
  if (upstreamPairs.length === 0) return local(args, true);
  const names = upstreamPairs.filter((_, i) => i % 2 === 0).map(lower);
  if (new Set(names).size !== names.length)
    return errorReply(`ERR CONFIG SET failed (possibly related to argument '${names[0]}') - duplicate parameter`);
  const checked = localArgs.length > 2 ? local(localArgs, false) : OK;
  if (checked !== OK) return checked;
  return {
    kind: 'forward',
    args: [args[0], args[1], ...upstreamPairs],
    transform: (reply) => (reply.equals(OK) && localArgs.length > 2 ? local(localArgs, true) : reply),
  };
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
function configSet(server: ProxyServerState, args: Buffer[], apply: boolean): Buffer {
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
  if (apply) for (const [name, value] of changes) setProxyParam(server, name, value);
  return OK;
}

export const module: ProxyHandler = ({ conn }, args) => {
  const sub = lower(args[1]);
  if (sub === 'list') return reply(conn.protocol, (w) => w.arrayHeader(0));
  if (sub === 'help') return helpReply(conn.protocol, MODULE_HELP);
  return errorReply(`ERR command 'module|${sub}' is not supported by respgate: modules cannot be loaded into the upstream service`);
};

/** COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern] */
function commandList(protocol: Protocol, filter: Buffer[]): Buffer {
  let specs = allCommandsAndSubcommands();
  if (filter.length > 0) {
    if (filter.length !== 3 || lower(filter[0]) !== 'filterby') return SYNTAX;
    const kind = lower(filter[1]);
    const value = filter[2].toString();
    if (kind === 'module') specs = [];
    else if (kind === 'aclcat') specs = specs.filter((s) => s.aclCategories.has(`@${value.toLowerCase()}`));
    else if (kind === 'pattern') {
      const re = globToRegExp(value, true);
      specs = specs.filter((s) => re.test(s.name));
    } else return SYNTAX;
  }
  return reply(protocol, (w) => {
    w.arrayHeader(specs.length);
    for (const s of specs) w.bulk(s.name);
  });
}

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

/** The `db0:…` line of the upstream's INFO keyspace answer, if it has one. */
function keyspaceFrom(upstream: Buffer): string | undefined {
  if (upstream[0] !== 0x24) return undefined;
  const m = /^db0:[^\r\n]*/m.exec(upstream.toString('latin1'));
  return m ? m[0] : undefined;
}
