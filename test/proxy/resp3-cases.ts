// Scenarios for the RESP3 tests, added to those of differential-cases.ts: the replies whose RESP3 form
// depends on arguments (WITHSCORES, WITHVALUES, COUNT, WITHCOORD, FULL, JUSTID, INCR…), and the
// forwarded commands the RESP2 scenarios do not run. Same conventions as differential-cases.ts: plain
// arrays are compared byte for byte, `u`/`m`/`shape`/… through the normalizer of that name
// (resp3-compare.ts), `known` are documented differences whose proxy reply is checked.
import type { CompareMode } from './differential-compare.js';
import type { Arg, Scenario, Step } from './differential-cases.js';

/** Comparison modes of the RESP3 tests: those of the RESP2 suite, plus `topType`. */
export type Mode3 = CompareMode | 'topType';

export interface Step3 extends Omit<Step, 'compare'> {
  compare?: Mode3;
}
export interface Scenario3 extends Omit<Scenario, 'commands'> {
  commands: (Arg[] | Step3)[];
}

export interface KnownDifference3 {
  why: string;
  /** The proxy's exact reply (latin1), or a check of it. */
  proxy: string | ((reply: string) => boolean);
}

/**
 * RESP3-only differences (the RESP2 ones are KNOWN_DIFFERENCES of differential-cases.ts, and apply here
 * too, converted to RESP3 where their reply has a RESP3 form).
 */
export const KNOWN_DIFFERENCES_3: Record<string, KnownDifference3> = {
  'acl-list-platform-users': {
    why: "as the RESP2 suite's acl-platform-users: the REST platform's read-only token is the ACL user default_ro of the data store, so ACL LIST shows it (with password hashes) where the oracle has only default",
    proxy: (reply) => reply.startsWith('*2\r\n') && reply.includes('user default_ro '),
  },
  'script-resp3-types': {
    why: "a script's RESP3-only reply types (redis.setresp(3) then a map, set or double; a {double=…} table) reach the proxy through the upstream's RESP2 bytes, where they are flat arrays and bulk strings; the proxy cannot know what the script built, so EVAL/FCALL replies are converted as `any` (nulls only)",
    proxy: (reply) => reply.startsWith('*') || reply.startsWith('$'),
  },
};

const step =
  (compare: Mode3) =>
  (...args: Arg[]): Step3 => ({ args, compare });
const u = step('unordered');
const m = step('maskIntegers');
const shape = step('shape');
const top = step('topType');
const known = (id: string, ...args: Arg[]): Step3 => ({ args, known: id });

const LIB =
  "#!lua name=lib3\nredis.register_function{function_name='f3', callback=function(keys, args) return 1 end, description='a description', flags={'no-writes','allow-stale'}}\nredis.register_function('g3', function(keys, args) return {1, false, 'x'} end)";
const DUMP_STRING = Buffer.from('0003666f6f0a00734939db4dc1ba97', 'hex');

export const resp3Scenarios: Scenario3[] = [
  {
    name: 'RESP3: sorted sets, hashes and sets with the arguments that change their reply',
    commands: [
      ['ZADD', 'z', '1', 'a', '2', 'b', '3', 'c', '4', 'd'],
      ['ZADD', 'z', 'NX', 'INCR', '1', 'a'],
      ['ZADD', 'z', 'XX', 'INCR', '1', 'zz'],
      ['ZADD', 'z', 'GT', 'INCR', '-1', 'a'],
      ['ZADD', 'z', 'INCR', '1.5', 'a'],
      ['ZADD', 'z', 'CH', '5', 'e'],
      ['ZADD', 'z', '1', 'INCR'],
      ['ZREM', 'z', 'INCR'],
      ['ZRANDMEMBER', 'z', '0', 'WITHSCORES'],
      u('ZRANDMEMBER', 'z', '10'),
      u('ZRANDMEMBER', 'z', '10', 'WITHSCORES'),
      shape('ZRANDMEMBER', 'z', '-3', 'WITHSCORES'),
      shape('ZRANDMEMBER', 'z', '2'),
      shape('ZRANDMEMBER', 'z'),
      ['ZRANDMEMBER', 'nosuch', '2', 'WITHSCORES'],
      ['ZPOPMIN', 'z', '0'],
      ['ZPOPMIN', 'z', '1'],
      ['ZPOPMAX', 'z'],
      ['ZPOPMIN', 'nosuch'],
      ['ZPOPMIN', 'nosuch', '2'],
      ['ZADD', 'z', '1', 'a', '7', 'f', '8', 'g'],
      ['ZMPOP', '1', 'z', 'MAX', 'COUNT', '2'],
      ['ZMPOP', '2', 'nosuch', 'z', 'MIN'],
      ['ZRANGE', 'z', '0', '-1', 'withscores'],
      ['ZRANGE', 'z', '0', '-1', 'REV', 'WITHSCORES'],
      ['ZRANGE', 'z', '(1', '+inf', 'BYSCORE', 'LIMIT', '0', '2', 'WITHSCORES'],
      ['ZREVRANGEBYSCORE', 'z', '+inf', '-inf', 'WITHSCORES'],
      ['ZRANGEBYSCORE', 'z', '-inf', '+inf', 'WITHSCORES'],
      ['ZREVRANGE', 'z', '0', '0', 'WITHSCORES'],
      ['ZRANGEBYLEX', 'z', '-', '+'],
      ['ZINTER', '1', 'z', 'WITHSCORES'],
      ['ZDIFF', '1', 'z', 'WITHSCORES'],
      ['ZUNION', '1', 'z', 'WITHSCORES'],
      ['ZUNION', '1', 'z'],
      ['ZSCAN', 'z', '0'],
      ['ZMSCORE', 'z', 'a', 'nosuch'],
      ['ZMSCORE', 'nosuch', 'a'],
      ['ZINCRBY', 'z', '0.1', 'a'],
      ['ZSCORE', 'z', 'a'],
      ['ZADD', 'inf', '+inf', 'x', '-inf', 'y', '1e-7', 'z'],
      ['ZRANGE', 'inf', '0', '-1', 'WITHSCORES'],
      ['ZSCORE', 'inf', 'z'],
      ['HSET', 'hh', 'a', '1', 'b', '2', 'c', '3'],
      ['HGETALL', 'hh'],
      ['HRANDFIELD', 'hh', '0', 'WITHVALUES'],
      u('HRANDFIELD', 'hh', '5', 'WITHVALUES'),
      shape('HRANDFIELD', 'hh', '-2', 'WITHVALUES'),
      shape('HRANDFIELD', 'hh', '2'),
      shape('HRANDFIELD', 'hh'),
      ['HRANDFIELD', 'nosuch', '2', 'WITHVALUES'],
      ['HRANDFIELD', 'nosuch', '2'],
      ['HSCAN', 'hh', '0'],
      ['HMGET', 'hh', 'a', 'nosuch'],
      ['HINCRBYFLOAT', 'hh', 'a', '0.5'],
      ['SADD', 'big', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
      shape('SPOP', 'big', '2'),
      ['SPOP', 'big', '0'],
      shape('SRANDMEMBER', 'big', '2'),
      shape('SRANDMEMBER', 'big', '100'),
      ['SRANDMEMBER', 'big', '0'],
      ['SMISMEMBER', 'big', 'zz', 'nope'],
      shape('SMEMBERS', 'big'),
      shape('SINTER', 'big', 'big'),
      ['SCARD', 'big'],
      ['SADD', 'ints', '3', '1', '2'],
      ['SMEMBERS', 'ints'],
      u('SUNION', 'ints', 'nosuch'),
      u('SDIFF', 'ints', 'nosuch'),
      ['SINTER', 'ints', 'nosuch'],
      ['SPOP', 'nosuch', '3'],
      ['SSCAN', 'ints', '0'],
    ],
  },
  {
    name: 'RESP3: geo and streams',
    commands: [
      ['GEOADD', 'Sicily', '13.361389', '38.115556', 'Palermo', '15.087269', '37.502669', 'Catania'],
      ['GEORADIUSBYMEMBER_RO', 'Sicily', 'Palermo', '300', 'km', 'WITHCOORD', 'WITHDIST', 'ASC'],
      ['GEORADIUSBYMEMBER', 'Sicily', 'Palermo', '300', 'km', 'WITHCOORD', 'ASC'],
      ['GEOSEARCH', 'Sicily', 'FROMMEMBER', 'Palermo', 'BYRADIUS', '300', 'km', 'WITHCOORD', 'ASC'],
      ['GEOSEARCH', 'Sicily', 'FROMLONLAT', '15', '37', 'BYRADIUS', '200', 'km', 'WITHHASH', 'ASC'],
      ['GEORADIUS', 'Sicily', '15', '37', '200', 'km', 'WITHHASH', 'WITHCOORD', 'ASC'],
      ['GEORADIUS_RO', 'Sicily', '15', '37', '200', 'km', 'WITHCOORD', 'DESC'],
      ['GEORADIUS', 'Sicily', '15', '37', '200', 'km', 'STORE', 'gst'],
      ['GEORADIUS', 'Sicily', '15', '37', '200', 'km', 'WITHDIST', 'STOREDIST', 'gst2'],
      ['GEOPOS', 'Sicily', 'Palermo', 'nosuch'],
      ['GEODIST', 'Sicily', 'Palermo', 'Catania', 'mi'],
      ['XADD', 'es', '1-1', 'f', 'v'],
      ['XDEL', 'es', '1-1'],
      ['XINFO', 'STREAM', 'es'],
      ['XINFO', 'STREAM', 'es', 'FULL'],
      ['XGROUP', 'CREATE', 'es', 'g', '0'],
      ['XADD', 'es', '2-1', 'f', 'v'],
      ['XADD', 'es', '3-1', 'f', 'w', 'g', 'x'],
      ['XINFO', 'STREAM', 'es'],
      ['XREADGROUP', 'GROUP', 'g', 'c1', 'COUNT', '1', 'STREAMS', 'es', '>'],
      ['XREADGROUP', 'GROUP', 'g', 'c1', 'STREAMS', 'es', '>'],
      ['XREADGROUP', 'GROUP', 'g', 'c1', 'STREAMS', 'es', '>'],
      m('XINFO', 'STREAM', 'es', 'FULL', 'COUNT', '1'),
      ['XPENDING', 'es', 'g'],
      ['XPENDING', 'es', 'nosuchgroup'],
      m('XPENDING', 'es', 'g', '-', '+', '5'),
      ['XAUTOCLAIM', 'es', 'g', 'c2', '0', '0', 'COUNT', '1'],
      ['XAUTOCLAIM', 'es', 'g', 'c3', '0', '0', 'COUNT', '1', 'JUSTID'],
      ['XCLAIM', 'es', 'g', 'c3', '0', '2-1', 'JUSTID'],
      ['XCLAIM', 'es', 'g', 'c2', '0', '2-1', '3-1'],
      m('XINFO', 'CONSUMERS', 'es', 'g'),
      ['XINFO', 'GROUPS', 'es'],
      ['XREAD', 'STREAMS', 'es', '0'],
      ['XREAD', 'COUNT', '1', 'STREAMS', 'es', 'nosuch', '0', '0'],
      ['XREAD', 'STREAMS', 'nosuch', '0'],
      ['XRANGE', 'es', '-', '+'],
      ['XREVRANGE', 'es', '+', '-', 'COUNT', '1'],
      ['XINFO', 'HELP'],
      ['XGROUP', 'HELP'],
    ],
  },
  {
    name: 'RESP3: server, scripting and introspection commands forwarded upstream',
    commands: [
      ['SET', 'k', 'v'],
      ['ACL', 'SETUSER', 'resp3-alice', 'on', '>pw', '~k*', '+get', '&ch*'],
      ['ACL', 'GETUSER', 'resp3-alice'],
      ['ACL', 'GETUSER', 'nosuch'],
      ['ACL', 'SETUSER', 'resp3-bob', 'on', '>pw', '~k*', '+get', '(~x* +set)'],
      ['ACL', 'GETUSER', 'resp3-bob'],
      ['ACL', 'DELUSER', 'resp3-alice', 'resp3-bob', 'nosuch'],
      ['ACL', 'HELP'],
      ['ACL', 'LOG', 'RESET'],
      ['ACL', 'LOG'],
      ['ACL', 'WHOAMI'],
      known('acl-list-platform-users', 'ACL', 'LIST'),
      ['FUNCTION', 'KILL'],
      ['SCRIPT', 'KILL'],
      ['FUNCTION', 'LOAD', LIB],
      step('functionList')('FUNCTION', 'LIST'),
      step('functionList')('FUNCTION', 'LIST', 'WITHCODE'),
      ['FUNCTION', 'STATS'],
      ['FCALL', 'g3', '0'],
      ['FUNCTION', 'HELP'],
      ['LATENCY', 'DOCTOR'],
      ['LATENCY', 'GRAPH', 'command'],
      ['LATENCY', 'HELP'],
      top('LATENCY', 'HISTOGRAM', 'set'),
      ['LATENCY', 'HISTOGRAM', 'nosuchcommand'],
      ['LATENCY', 'RESET'],
      shape('MEMORY', 'DOCTOR'),
      shape('MEMORY', 'MALLOC-STATS'),
      ['MEMORY', 'PURGE'],
      top('MEMORY', 'STATS'),
      ['MEMORY', 'HELP'],
      ['PFADD', 'hll', 'a'],
      ['PFDEBUG', 'ENCODING', 'hll'],
      ['PFDEBUG', 'DECODE', 'hll'],
      ['PFDEBUG', 'GETREG', 'hll'],
      ['PFDEBUG', 'TODENSE', 'hll'],
      ['PFDEBUG', 'ENCODING', 'hll'],
      ['PFSELFTEST'],
      ['PUBSUB', 'HELP'],
      ['PUBSUB', 'SHARDNUMSUB', 'a', 'b'],
      ['PUBSUB', 'NUMSUB', 'a', 'b'],
      ['RESTORE-ASKING', 'r', '0', DUMP_STRING],
      ['GET', 'r'],
      ['SLOWLOG', 'RESET'],
      top('SLOWLOG', 'GET'),
      ['SLOWLOG', 'HELP'],
      ['LOLWUT', 'VERSION', '5', '1', '1', '1'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'SET', 'a', 'b'],
      ['COMMAND', 'GETKEYSANDFLAGS', 'LMOVE', 'a', 'b', 'LEFT', 'RIGHT'],
      ['COMMAND', 'GETKEYS', 'SET', 'a', 'b'],
      ['SCRIPT', 'EXISTS', 'abc'],
      ['OBJECT', 'FREQ', 'k'],
      ['OBJECT', 'HELP'],
      ['TYPE', 'k'],
      ['TYPE', 'nosuch'],
      shape('TIME'),
      shape('LASTSAVE'),
      ['ROLE'],
      ['SET', 'a', 'ohmytext'],
      ['SET', 'b', 'mynewtext'],
      ['LCS', 'a', 'b', 'IDX'],
      ['LCS', 'a', 'b', 'IDX', 'WITHMATCHLEN'],
      ['LCS', 'a', 'b', 'LEN'],
      ['LCS', 'a', 'b'],
      ['LPOS', 'nol', 'a', 'COUNT', '2'],
      ['RPUSH', 'l', 'a', 'b', 'a'],
      ['LPOS', 'l', 'a', 'COUNT', '0'],
      ['LMPOP', '1', 'l', 'LEFT', 'COUNT', '2'],
      ['LPOP', 'l', '5'],
      ['LPOP', 'l', '5'],
      ['EVAL', "return {1.5, false, true, 'x', {}}", '0'],
      ['EVAL', "return redis.call('HGETALL', KEYS[1])", '1', 'nosuch'],
      known('script-resp3-types', 'EVAL', "redis.setresp(3); return redis.call('HGETALL', KEYS[1])", '1', 'hh'),
      ['HSET', 'hh', 'f', 'v'],
      known('script-resp3-types', 'EVAL', "redis.setresp(3); return redis.call('HGETALL', KEYS[1])", '1', 'hh'),
      known('script-resp3-types', 'EVAL', 'return {double=3.5}', '0'),
      ['SORT', 'l'],
      ['MGET', 'a', 'nosuch'],
      ['BITFIELD', 'bf', 'OVERFLOW', 'FAIL', 'INCRBY', 'u8', '0', '300'],
      known('redis-7.2-client-subcommands', 'CLIENT', 'NO-TOUCH', 'on'),
    ],
  },
];
