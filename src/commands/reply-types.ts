/**
 * Reply types of Redis 7.0.15 commands, as data: for each command, the shape of its reply (reply-shape.ts)
 * that tells how Redis sends it in RESP3 (maps, sets, doubles, [member, score] pairs, verbatim text) and,
 * for transactions, what the JSON of /multi-exec lost (status vs bulk strings, `$-1` vs `*-1`).
 *
 * Redis 7.0 has no reply schemas (they came with 7.2), so these were read off redis-server 7.0.15
 * itself: test/proxy/resp3-reply-types.test.ts runs the differential scenarios and more on a real
 * redis-server in RESP2 and after HELLO 3 and checks, for every reply, that converting the RESP2 bytes
 * with this table gives the RESP3 bytes, and that the /multi-exec JSON of the reply gives both back.
 *
 * A command not listed here replies the same in both protocols except for nulls (`$-1`/`*-1` → `_`),
 * and its strings are bulk strings (shape `any`). Shapes that depend on arguments (WITHSCORES,
 * WITHVALUES, COUNT, WITHCOORD, FULL, JUSTID…) are functions of the arguments. Redis 7.0 sends no RESP3
 * booleans and no big numbers for any command (only Lua scripts using redis.setresp(3) can).
 */
import type { ReplyShape } from '../resp/reply-shape.js';
import { arrayOf, mapOf, pairsOf, setOf, tupleOf } from '../resp/reply-shape.js';
import type { CommandSpec } from './table.js';

type Args = readonly (string | Buffer)[];
type ShapeRule = ReplyShape | ((args: Args) => ReplyShape);

// ---------------------------------------------------------------------------------------------------------------
// Argument helpers (case-insensitive ASCII tokens).

function isToken(arg: string | Buffer | undefined, upper: string): boolean {
  if (arg === undefined || arg.length !== upper.length) return false;
  const s = typeof arg === 'string' ? arg : arg.toString('latin1');
  return s.toUpperCase() === upper;
}

/** Whether one of args[from…] is `token`. */
function hasToken(args: Args, from: number, token: string): boolean {
  for (let i = from; i < args.length; i++) if (isToken(args[i], token)) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Shapes shared by several commands.

const strings = arrayOf('bulk');
/** A stream entry: [id, [field, value, …]]. */
const entry = tupleOf(['bulk', strings]);
const entries = arrayOf(entry);
/** A sorted-set range WITHSCORES: flat member, score… in RESP2; [member, double] pairs in RESP3. */
const withScores = pairsOf('bulk', 'double');
/** A cursor and a page of strings (SCAN, SSCAN, HSCAN, ZSCAN: ZSCAN's scores stay strings in RESP3). */
const scanPage = tupleOf(['bulk', strings]);
/** GEOPOS coordinates (and WITHCOORD): doubles in RESP3, with Redis' "human" long-double text. */
const coordinates = tupleOf(['double', 'double']);
const help = arrayOf('status');

/** ZRANGE-like replies: plain members, or member/score pairs WITHSCORES (options from args[from]). */
const scoresFrom = (args: Args, from: number): ReplyShape => (hasToken(args, from, 'WITHSCORES') ? withScores : strings);
const rangeWithScores =
  (from: number) =>
  (args: Args): ReplyShape =>
    scoresFrom(args, from);

/** GEORADIUS/GEOSEARCH: members, or [member, dist?, hash?, [lon, lat]?] items in this fixed order. */
function geoSearch(args: Args): ReplyShape {
  let dist = false;
  let hash = false;
  let coord = false;
  for (let i = 2; i < args.length; i++) {
    if (isToken(args[i], 'FROMMEMBER'))
      i++; // the member is not an option
    else if (isToken(args[i], 'WITHDIST')) dist = true;
    else if (isToken(args[i], 'WITHHASH')) hash = true;
    else if (isToken(args[i], 'WITHCOORD')) coord = true;
  }
  if (!dist && !hash && !coord) return strings;
  const items: ReplyShape[] = ['bulk'];
  if (dist) items.push('bulk'); // distances are strings in RESP3 too (addReplyDoubleDistance)
  if (hash) items.push('int');
  if (coord) items.push(coordinates);
  return arrayOf(tupleOf(items));
}

/** ZADD with the INCR option answers a double (or null); otherwise a count. Options come before the scores. */
function zadd(args: Args): ReplyShape {
  for (let i = 2; i < args.length; i++) {
    if (isToken(args[i], 'INCR')) return 'double';
    if (!['NX', 'XX', 'GT', 'LT', 'CH'].some((t) => isToken(args[i], t))) break;
  }
  return 'int';
}

/** ZUNION/ZINTER/ZDIFF numkeys key… [options]: options start after the keys. */
const zsetAlgebra = (args: Args): ReplyShape => {
  const numkeys = Number((args[1] ?? '').toString());
  return scoresFrom(args, Number.isInteger(numkeys) && numkeys > 0 ? 2 + numkeys : 2);
};

const xinfoStreamBrief = mapOf('any', {
  'first-entry': tupleOf(['bulk', strings], { nil: 'bulk' }),
  'last-entry': tupleOf(['bulk', strings], { nil: 'bulk' }),
});
const xinfoStreamFull = mapOf('any', {
  entries,
  groups: arrayOf(
    mapOf('any', {
      name: 'bulk',
      'last-delivered-id': 'bulk',
      pending: arrayOf(tupleOf(['bulk', 'bulk', 'int', 'int'])),
      consumers: arrayOf(mapOf('any', { name: 'bulk', pending: arrayOf(tupleOf(['bulk', 'int', 'int'])) })),
    }),
  ),
});

// ---------------------------------------------------------------------------------------------------------------
// The table. Keys are full command names (`xinfo|stream`); every `<container>|help` is an array of status lines.

const rules: Readonly<Record<string, ShapeRule>> = {
  // Strings
  get: 'bulk',
  getdel: 'bulk',
  getex: 'bulk',
  getset: 'bulk',
  getrange: 'bulk',
  substr: 'bulk',
  mget: strings,
  incrbyfloat: 'bulk',
  lcs: (args) => (hasToken(args, 3, 'IDX') ? mapOf('any', { matches: 'any', len: 'int' }) : 'any'),
  type: 'status',

  // Hashes
  hgetall: mapOf('bulk'),
  hget: 'bulk',
  hmget: strings,
  hkeys: strings,
  hvals: strings,
  hincrbyfloat: 'bulk',
  hscan: scanPage,
  hrandfield: (args) => (args.length >= 4 ? pairsOf('bulk', 'bulk') : args.length === 3 ? strings : 'bulk'),

  // Sets: whole-set replies are RESP3 sets; SRANDMEMBER with a count stays an array, SPOP with a count is a set.
  smembers: setOf('bulk'),
  sinter: setOf('bulk'),
  sunion: setOf('bulk'),
  sdiff: setOf('bulk'),
  spop: (args) => (args.length >= 3 ? setOf('bulk') : 'bulk'),
  srandmember: (args) => (args.length >= 3 ? strings : 'bulk'),
  smismember: arrayOf('int'),
  sscan: scanPage,

  // Sorted sets
  zscore: 'double',
  zincrby: 'double',
  zmscore: arrayOf('double'),
  zadd,
  zrange: rangeWithScores(4),
  zrangebyscore: rangeWithScores(4),
  zrevrange: rangeWithScores(4),
  zrevrangebyscore: rangeWithScores(4),
  zrangebylex: strings,
  zrevrangebylex: strings,
  zunion: zsetAlgebra,
  zinter: zsetAlgebra,
  zdiff: zsetAlgebra,
  // Without a count, one flat [member, score]; with a count, pairs in RESP3 (t_zset.c zpopMinMaxCommand).
  zpopmin: (args) => (args.length >= 3 ? withScores : tupleOf(['bulk', 'double'])),
  zpopmax: (args) => (args.length >= 3 ? withScores : tupleOf(['bulk', 'double'])),
  zmpop: tupleOf(['bulk', arrayOf(tupleOf(['bulk', 'double']))]),
  // Redis 7.2+ (the table takes ZRANK's newer arity): WITHSCORE answers [rank, score], a null array
  // for a missing member (t_zset.c zrankGenericCommand); without it, an integer or a null.
  zrank: (args) => (args.length >= 4 ? tupleOf(['int', 'double']) : 'any'),
  zrevrank: (args) => (args.length >= 4 ? tupleOf(['int', 'double']) : 'any'),
  zrandmember: (args) => (args.length >= 4 && isToken(args[3], 'WITHSCORES') ? withScores : args.length >= 3 ? strings : 'bulk'),
  zscan: scanPage,
  bzpopmin: tupleOf(['bulk', 'bulk', 'double']),
  bzpopmax: tupleOf(['bulk', 'bulk', 'double']),
  bzmpop: tupleOf(['bulk', arrayOf(tupleOf(['bulk', 'double']))]),

  // Lists
  lrange: strings,
  lindex: 'bulk',
  lpop: (args) => (args.length >= 3 ? strings : 'bulk'),
  rpop: (args) => (args.length >= 3 ? strings : 'bulk'),
  lmove: 'bulk',
  rpoplpush: 'bulk',
  lmpop: tupleOf(['bulk', strings]),
  lpos: (args) => (hasToken(args, 3, 'COUNT') ? arrayOf('int') : 'int'),
  blpop: tupleOf(['bulk', 'bulk']),
  brpop: tupleOf(['bulk', 'bulk']),
  blmpop: tupleOf(['bulk', strings]),
  blmove: 'bulk',
  brpoplpush: 'bulk',

  // Geo
  geopos: arrayOf(coordinates),
  geodist: 'bulk',
  geohash: strings,
  georadius: geoSearch,
  georadius_ro: geoSearch,
  georadiusbymember: geoSearch,
  georadiusbymember_ro: geoSearch,
  geosearch: geoSearch,

  // Streams
  xadd: 'bulk',
  xrange: entries,
  xrevrange: entries,
  xread: mapOf(entries, undefined, { resp2: 'nested' }),
  xreadgroup: mapOf(entries, undefined, { resp2: 'nested' }),
  xclaim: (args) => (hasToken(args, 6, 'JUSTID') ? strings : entries),
  xautoclaim: (args) => tupleOf(['bulk', hasToken(args, 6, 'JUSTID') ? strings : entries, strings]),
  xpending: (args) =>
    args.length > 3
      ? arrayOf(tupleOf(['bulk', 'bulk', 'int', 'int']))
      : tupleOf(['int', 'bulk', 'bulk', arrayOf(tupleOf(['bulk', 'bulk']))]),
  'xinfo|stream': (args) => (isToken(args[3], 'FULL') ? xinfoStreamFull : xinfoStreamBrief),
  'xinfo|groups': arrayOf(mapOf('any', { name: 'bulk', 'last-delivered-id': 'bulk' })),
  'xinfo|consumers': arrayOf(mapOf('any', { name: 'bulk' })),

  // Keyspace
  keys: strings,
  scan: scanPage,
  randomkey: 'bulk',
  dump: 'bulk',
  sort: strings,
  sort_ro: strings,
  'object|encoding': 'bulk',

  // Server and scripting
  time: strings,
  role: tupleOf(['bulk', 'int', arrayOf('any')]),
  lolwut: 'verbatim',
  'memory|doctor': 'verbatim',
  'memory|malloc-stats': 'verbatim',
  'memory|stats': mapOf('any', {
    'db.0': mapOf('int'),
    'dataset.percentage': 'double',
    'peak.percentage': 'double',
    'allocator-fragmentation.ratio': 'double',
    'allocator-rss.ratio': 'double',
    'rss-overhead.ratio': 'double',
    fragmentation: 'double',
  }),
  'latency|doctor': 'verbatim',
  'latency|graph': 'verbatim',
  'latency|histogram': mapOf(mapOf('any', { calls: 'int', histogram_usec: mapOf('int', undefined, { key: 'int' }) })),
  'slowlog|get': arrayOf(tupleOf(['int', 'int', 'int', strings, 'bulk', 'bulk'])),
  'acl|getuser': mapOf(
    'any',
    { flags: setOf('bulk'), passwords: strings, commands: 'bulk', keys: 'bulk', channels: 'bulk', selectors: arrayOf(mapOf('bulk')) },
    { nil: 'bulk' },
  ),
  'acl|log': (args) =>
    args.length >= 3 && isToken(args[2], 'RESET') ? 'any' : arrayOf(mapOf('any', { count: 'int', 'age-seconds': 'double' })),
  'acl|cat': strings,
  'acl|list': strings,
  'acl|users': strings,
  'acl|whoami': 'bulk',
  'acl|genpass': 'bulk',
  'command|getkeys': strings,
  'command|getkeysandflags': arrayOf(tupleOf(['bulk', setOf('status')])),
  'function|list': arrayOf(
    mapOf('any', {
      library_name: 'bulk',
      engine: 'bulk',
      library_code: 'bulk',
      functions: arrayOf(mapOf('any', { name: 'bulk', description: 'bulk', flags: setOf('status') })),
    }),
  ),
  'function|stats': mapOf('any', {
    running_script: mapOf('any', { name: 'bulk', command: strings, duration_ms: 'int' }, { nil: 'bulk' }),
    engines: mapOf(mapOf('int')),
  }),
  'function|dump': 'bulk',
  'script|exists': arrayOf('int'),
  'pubsub|channels': strings,
  'pubsub|shardchannels': strings,
  pfdebug: (args) => (isToken(args[1], 'ENCODING') ? 'status' : isToken(args[1], 'GETREG') ? arrayOf('int') : 'any'),

  // Answered by the proxy itself (listed for completeness; its replies are written in the session's protocol).
  'config|get': mapOf('bulk'),
  info: 'verbatim',
  'client|info': 'verbatim',
  'client|list': 'verbatim',
};

/** The reply shape of a command called with these arguments (`spec` = resolveCommand(args)). */
export function replyShape(spec: CommandSpec, args: Args): ReplyShape {
  const rule = rules[spec.name];
  if (rule !== undefined) return typeof rule === 'function' ? rule(args) : rule;
  if (spec.container !== undefined && spec.name.endsWith('|help')) return help;
  return 'any';
}

/** Full names with a reply type of their own (the others are `any`, apart from `…|help`). */
export function commandsWithReplyTypes(): string[] {
  return Object.keys(rules);
}
