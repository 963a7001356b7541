/**
 * Hand-written annotations of the command table (the data itself is redis-8.8.0.json, json-commands.ts and
 * search-commands.ts):
 *
 * 1. `proxyRoutes`: how the proxy handles each command. A key is a command (`get`), a container and all its
 *    subcommands (`cluster`), or one subcommand (`client|tracking`, which wins over its container's line).
 *    Commands not listed are `forward`ed.
 * 2. `platformRules`: what the local REST platform refuses with HTTP 400 (spec 4.2 "Command support"), with
 *    the texts of those refusals. Commands not listed are allowed.
 *
 * Every key must name a command of the table (test/commands/table.test.ts checks it), and
 * docs/compatibility.md is generated from these lines (scripts/gen-compat-doc.ts).
 */

/**
 * - `forward`: sent upstream as is.
 * - `local`: answered by the proxy itself (connection state, handshake, introspection).
 * - `transaction`: MULTI/EXEC machinery (queued by the proxy, sent as one /multi-exec).
 * - `stream`: turns the connection into a stream of pushed replies (pub/sub, MONITOR).
 * - `blocking`: blocks the connection; emulated by the proxy (polling) with a per-connection barrier.
 * - `refused`: answered with an error (`proxyRefusalText`), never sent upstream.
 */
export type Route = 'forward' | 'local' | 'transaction' | 'stream' | 'blocking' | 'refused';

export interface RouteNote {
  route: Route;
  /** Why, in words a user can act on; for `refused` it is the second half of the error text. */
  reason?: string;
  /** For `refused`: the exact error text when it is not the standard `proxyRefusalText` shape. */
  error?: string;
}

const forward = (reason?: string): RouteNote => ({ route: 'forward', reason });
const local = (reason?: string): RouteNote => ({ route: 'local', reason });
const transaction = (reason?: string): RouteNote => ({ route: 'transaction', reason });
const stream = (reason?: string): RouteNote => ({ route: 'stream', reason });
const blocking = (reason?: string): RouteNote => ({ route: 'blocking', reason });
const refused = (reason: string, error?: string): RouteNote => ({ route: 'refused', reason, error });

/** What standalone Redis 7.0 answers to CLUSTER, READONLY, READWRITE and ASKING; the proxy answers the same. */
export const CLUSTER_DISABLED_ERROR = 'ERR This instance has cluster support disabled';
const clusterDisabled = (what: string) =>
  refused(`${what}; respgate is a standalone (non-cluster) endpoint, so it replies like a standalone Redis`, CLUSTER_DISABLED_ERROR);

/** The standard text of a proxy refusal: `ERR command 'config|set' is not supported by respgate: <reason>`. */
export function proxyRefusalText(fullname: string, reason: string): string {
  return `ERR command '${fullname}' is not supported by respgate: ${reason}`;
}

const ONE_DB =
  'it moves data between databases, and each database behind the proxy is a separate REST database (SELECT n reaches --database n): one REST call reaches only one';
const MANAGED_CONFIG = "the upstream's configuration is managed by the service; configure respgate with its flags";
const MANAGED_PERSISTENCE = 'persistence is managed by the upstream service';
const REPLICATION = 'replication is managed by the upstream service; respgate cannot act as a replica or a master';
const TRACKING = 'client-side caching needs invalidation messages, which the REST upstream does not send';

export const proxyRoutes: Readonly<Record<string, RouteNote>> = {
  // Connection: the proxy owns the client connection, so its state lives in the proxy.
  auth: local("checked by the proxy against its own password (--requirepass, user 'default'); never sent upstream"),
  hello: local('protocol 2 or 3 and AUTH/SETNAME are connection state kept by the proxy'),
  ping: local(),
  echo: local(),
  quit: local(),
  reset: local('resets the proxy connection: MULTI, subscriptions, MONITOR, protocol, name, auth'),
  select: local(
    'SELECT 0 is the upstream; SELECT n a database configured with --database n (the dev stack has 16); other numbers fail with ERR DB index is out of range',
  ),
  client: local("about the proxy's own client connections"),
  'client|kill': local(
    'closes matching connections of this proxy (its own clients, as CLIENT LIST shows them): ip:port, or ID, TYPE, USER, ADDR, LADDR, SKIPME',
  ),
  'client|pause': local(
    "pauses this proxy's own clients (WRITE or ALL, with the timeout) as Redis pauses its own; other clients of the upstream go on",
  ),
  'client|unpause': local('resumes the clients of this proxy that CLIENT PAUSE holds'),
  'client|unblock': local('unblocks a blocking command emulated by this proxy'),
  'client|reply': local('ON, OFF and SKIP act on the replies this proxy writes to the client'),
  'client|tracking': refused(TRACKING),
  'client|caching': refused(TRACKING),
  readonly: clusterDisabled('READONLY is a cluster command'),
  readwrite: clusterDisabled('READWRITE is a cluster command'),
  asking: clusterDisabled('ASKING is a cluster command'),

  // Introspection: answered from this command table and the proxy's own state.
  slowlog: local("the proxy's own record of slow commands (--slowlog-log-slower-than or CONFIG SET, µs from read to reply)"),
  info: local('emulated: redis_version 7.0.15, redis_mode standalone, loading:0, maxmemory_policy:noeviction'),
  command: local(
    "answered from the command table: Redis 8.8.0's core commands, JSON.* (module ReJSON) and SEARCH.* (module upstash-search); GETKEYS from their key specs",
  ),
  config: refused(MANAGED_CONFIG),
  'config|get': local(
    "emulated for the keys clients read (save, appendonly, maxmemory-policy, databases, ...); the proxy's own (slowlog-*, timeout, maxclients) are live; notify-keyspace-events is the upstream's value",
  ),
  'config|help': local(),
  module: refused('modules cannot be loaded into the upstream service'),
  'module|list': local('an empty list: no modules are visible through the proxy'),
  'module|help': local(),

  // Transactions: queued by the proxy, sent as one /multi-exec call.
  multi: transaction('the queued commands are sent as one atomic /multi-exec request'),
  exec: transaction('sends the queued commands as one /multi-exec request'),
  discard: transaction('drops the queue held by the proxy'),
  watch: transaction('emulated: WATCH reads a fingerprint of each key, and EXEC runs as one script that checks them first (docs/proxy.md)'),
  unwatch: transaction('forgets the watched keys (emulated WATCH)'),

  // Pub/sub and MONITOR: server-sent-event streams of the upstream, turned back into RESP.
  subscribe: stream('one /subscribe/{channel} event stream per channel'),
  psubscribe: stream('one /psubscribe/{pattern} event stream per pattern'),
  ssubscribe: stream(
    'one /ssubscribe/{shardchannel} event stream per shard channel (a respgate extension of the local platform; an upstream without it refuses SSUBSCRIBE)',
  ),
  unsubscribe: stream(),
  punsubscribe: stream(),
  sunsubscribe: stream(),
  monitor: stream(
    "the commands of this proxy's clients, as redis-server prints them; the upstream's /monitor stream checks the permission and supplies the [db lua] lines of clients' scripts",
  ),

  // Blocking: the upstream answers at once, so the proxy polls the non-blocking form until the timeout.
  blpop: blocking('emulated by polling LPOP'),
  brpop: blocking('emulated by polling RPOP'),
  brpoplpush: blocking('emulated by polling RPOPLPUSH'),
  blmove: blocking('emulated by polling LMOVE'),
  blmpop: blocking('emulated by polling LMPOP'),
  bzpopmin: blocking('emulated by polling ZPOPMIN'),
  bzpopmax: blocking('emulated by polling ZPOPMAX'),
  bzmpop: blocking('emulated by polling ZMPOP'),
  xread: forward('blocking (emulated by polling) when a BLOCK argument is present'),
  xreadgroup: forward('blocking (emulated by polling) when a BLOCK argument is present'),
  wait: local(
    'answers 0 at once: no replica acknowledgement is observable through REST (a standalone Redis answers WAIT 0 … with 0 too; with numreplicas > 0 it would wait for the timeout)',
  ),

  // Refused: administration of a Redis process, replication, other databases.
  cluster: clusterDisabled('cluster commands'),
  trimslots: clusterDisabled('TRIMSLOTS (Redis 8) trims cluster slots'),
  hotkeys: refused('HOTKEYS (Redis 8.6) tracks the hot keys of one Redis process; the service has no REST form of it'),
  sync: refused(REPLICATION),
  psync: refused(REPLICATION),
  replconf: refused(REPLICATION),
  replicaof: refused(REPLICATION),
  slaveof: refused(REPLICATION),
  failover: refused(REPLICATION),
  shutdown: refused('it would stop the upstream database; stop respgate itself with SIGTERM'),
  debug: refused('DEBUG administers a Redis process, which the proxy does not expose'),
  migrate: refused('the upstream cannot connect to another Redis instance; copy keys with DUMP and RESTORE instead'),
  swapdb: refused(ONE_DB),
  move: refused(ONE_DB),
  'config|set': local(
    "the proxy's own parameters (slowlog-log-slower-than, slowlog-max-len, timeout, maxclients) change live; parameters that only tune encodings (hash-max-listpack-entries, …) are accepted and change no reply; notify-keyspace-events goes to the upstream (the service documents it: keyspace notifications then arrive over SUBSCRIBE/PSUBSCRIBE); every other parameter is refused: the upstream's configuration is managed by the service",
  ),
  'config|rewrite': refused(MANAGED_CONFIG),
  'config|resetstat': local(
    "resets the proxy's own statistics (INFO commandstats, errorstats, total_commands_processed, total_connections_received, net bytes)",
  ),
  save: refused(MANAGED_PERSISTENCE),
  bgsave: refused(MANAGED_PERSISTENCE),
  bgrewriteaof: refused(MANAGED_PERSISTENCE),
  'script|debug': refused('the Lua debugger needs a dedicated server connection, which REST requests do not have'),
};

// ---------------------------------------------------------------------------------------------------------------
// The REST platform's refusal policy (spec 4.2 "Command support" plus operator commands).

export type PlatformRefusalKind =
  'blocking' | 'transaction' | 'connection' | 'cluster' | 'pubsub' | 'monitor' | 'operator' | 'database' | 'debugger';

/**
 * When a rule applies: always, or only when the command has a given argument; `not-notify`: unless
 * every parameter it sets is `notify-keyspace-events`, the one the service lets CONFIG SET change.
 */
export type PlatformCondition = 'always' | 'block-option' | 'db-option' | 'not-notify';

export interface PlatformRule {
  kind: PlatformRefusalKind;
  when: PlatformCondition;
}

/** Why each kind is refused: the second half of the refusal text (for `blocking`, only the docs show it). */
export const PLATFORM_REFUSAL_REASONS: Readonly<Record<PlatformRefusalKind, string>> = {
  blocking: 'it would hold a server connection until its timeout',
  transaction: 'send the whole transaction as one /multi-exec request',
  connection: 'REST requests have no connection state (only PING and ECHO are supported)',
  cluster: 'the database is not a cluster',
  pubsub: 'use the /subscribe/{channel} or /psubscribe/{pattern} event stream and /publish',
  monitor: 'use the /monitor event stream',
  operator: 'it administers the server behind the database',
  database: 'only database 0 exists',
  debugger: 'the Lua debugger needs a dedicated connection',
};

/**
 * The exact texts the platform answers (HTTP 400, `{"error": text}`):
 * - blocking: `ERR blocking command 'blpop' is not supported over REST` (XREAD/XREADGROUP only with BLOCK)
 * - others: `ERR command 'watch' is not supported over REST: send the whole transaction as one /multi-exec request`
 * `fullname` is lowercase, `container|sub` for a refused subcommand (like Redis' arity error).
 */
export function platformRefusalText(kind: PlatformRefusalKind, fullname: string): string {
  if (kind === 'blocking') return `ERR blocking command '${fullname}' is not supported over REST`;
  return `ERR command '${fullname}' is not supported over REST: ${PLATFORM_REFUSAL_REASONS[kind]}`;
}

const rule = (kind: PlatformRefusalKind, when: PlatformCondition = 'always'): PlatformRule => ({ kind, when });

/** Keys as in `proxyRoutes` (a container line covers its subcommands; a subcommand line wins). */
export const platformRules: Readonly<Record<string, PlatformRule>> = {
  // Blocking commands would hold a server connection for the length of the timeout.
  blpop: rule('blocking'),
  brpop: rule('blocking'),
  brpoplpush: rule('blocking'),
  blmove: rule('blocking'),
  blmpop: rule('blocking'),
  bzpopmin: rule('blocking'),
  bzpopmax: rule('blocking'),
  bzmpop: rule('blocking'),
  xread: rule('blocking', 'block-option'),
  xreadgroup: rule('blocking', 'block-option'),
  wait: rule('blocking'),

  // Transactions: MULTI and EXEC are accepted (in a pipeline); the rest needs a connection of its own.
  watch: rule('transaction'),
  unwatch: rule('transaction'),
  discard: rule('transaction'),

  // Connection: only PING and ECHO.
  auth: rule('connection'),
  hello: rule('connection'),
  select: rule('connection'),
  client: rule('connection'),
  quit: rule('connection'),
  reset: rule('connection'),
  readonly: rule('connection'),
  readwrite: rule('connection'),
  asking: rule('connection'),

  cluster: rule('cluster'),

  // Streams of replies have their own endpoints.
  subscribe: rule('pubsub'),
  psubscribe: rule('pubsub'),
  ssubscribe: rule('pubsub'),
  unsubscribe: rule('pubsub'),
  punsubscribe: rule('pubsub'),
  sunsubscribe: rule('pubsub'),
  monitor: rule('monitor'),

  // Operator commands: they would let a database user stop, reconfigure or escape the server.
  shutdown: rule('operator'),
  debug: rule('operator'),
  module: rule('operator'),
  replicaof: rule('operator'),
  slaveof: rule('operator'),
  failover: rule('operator'),
  sync: rule('operator'),
  psync: rule('operator'),
  replconf: rule('operator'),
  migrate: rule('operator'),
  'config|set': rule('operator', 'not-notify'),
  'config|rewrite': rule('operator'),
  'config|resetstat': rule('operator'),
  save: rule('operator'),
  bgsave: rule('operator'),
  bgrewriteaof: rule('operator'),
  'acl|load': rule('operator'),
  'acl|save': rule('operator'),
  'script|debug': rule('debugger'),

  // Other databases: the database is database 0 only (and the platform's own data must stay out of reach).
  swapdb: rule('database'),
  move: rule('database'),
  copy: rule('database', 'db-option'),
};
