/**
 * Sanity of the command table: it holds Redis 8.8.0's core commands (every command a real redis-server
 * 7.0.15, the one CI has, lists among them), JSON.* and SEARCH.*; every command has a route, the
 * hand-written annotations name real commands, and the REST platform's refusal policy (including the
 * argument-dependent cases) gives the documented texts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawRedis, startRedisServer, type RedisServer } from '../../scripts/gen-command-data.js';
import { CLUSTER_DISABLED_ERROR, platformRules, proxyRoutes } from '../../src/commands/routes.js';
import {
  allCommands,
  allCommandsAndSubcommands,
  checkCommand,
  isWriteCommand,
  lookupCommand,
  lookupFullName,
  platformRefusal,
  resolveCommand,
  routeOf,
  type CommandSpec,
  type Route,
} from '../../src/commands/table.js';

let server: RedisServer;
let conn: RawRedis;

beforeAll(async () => {
  server = await startRedisServer();
  conn = await RawRedis.connect(server.port);
}, 30_000);

afterAll(async () => {
  conn?.close();
  await server?.stop();
});

const spec = (name: string): CommandSpec => {
  const s = lookupFullName(name);
  if (!s) throw new Error(`no command ${name}`);
  return s;
};

describe('the table holds Redis 8.8.0', () => {
  it('builds every spec, subcommands included, with the same fields in the same order (one hidden class for the hot path)', () => {
    const shapes = new Set(allCommandsAndSubcommands().map((spec) => Object.keys(spec).join(',')));
    expect([...shapes]).toHaveLength(1);
  });

  it('has every command and subcommand redis-server 7.0.15 lists, and the newer ones of Redis 8.8', async () => {
    const list = await conn.call('COMMAND', 'LIST');
    if (list.type !== 'array' || !list.items) throw new Error('COMMAND LIST failed');
    const theirs = list.items.map((r) => (r.type === 'bulk' ? r.text : '')).sort();
    const ours = allCommandsAndSubcommands().map((s) => s.name);
    expect(theirs.filter((n) => !ours.includes(n))).toEqual([]);
    expect(theirs.length).toBe(366);
    expect(allCommands().length).toBe(282 + 24 + 12);
    expect(allCommandsAndSubcommands().length).toBe(419 + 26 + 12);
    for (const n of ['client|setinfo', 'waitaof', 'hexpire', 'hgetdel', 'hsetex', 'msetex', 'delex', 'digest', 'xackdel', 'arset'])
      expect(ours, n).toContain(n);
  });

  it('routes the commands newer than 7.0.15 by their Redis 8.8 flags', () => {
    expect(spec('hgetex')).toMatchObject({
      arity: -5,
      firstKey: 1,
      lastKey: 1,
      keyStep: 1,
      group: 'hash',
      since: '8.0.0',
      route: 'forward',
    });
    expect([...spec('hgetex').flags]).toEqual(['write', 'fast']);
    expect([...spec('waitaof').flags]).toEqual(['blocking']);
    expect(spec('waitaof').route).toBe('forward');
    expect([...spec('msetex').flags]).toContain('movablekeys');
    expect(isWriteCommand(spec('msetex'))).toBe(true);
    expect(isWriteCommand(spec('digest'))).toBe(false);
    expect(spec('client|setinfo')).toMatchObject({ arity: 4, container: 'client', route: 'local' });
    expect(spec('hotkeys').route).toBe('refused');
    expect(spec('cluster|myshardid').refusal).toBe(CLUSTER_DISABLED_ERROR);
    expect(spec('trimslots').refusal).toBe(CLUSTER_DISABLED_ERROR);
    expect(spec('json.set')).toMatchObject({ module: 'ReJSON', group: 'module', route: 'forward' });
    expect(spec('search.query')).toMatchObject({ module: 'upstash-search', firstKey: 0, route: 'forward' });
    // Redis 8 lets scripts call blocking commands (no noscript flag); they keep their blocking route.
    expect(spec('blpop').flags.has('noscript')).toBe(false);
    expect(spec('blpop').route).toBe('blocking');
  });

  it('keeps commands it lacks unknown, as Redis does: module commands of others, vector sets', () => {
    expect(checkCommand(['FT.SEARCH', 'idx', '*'])).toMatchObject({
      ok: false,
      error: "ERR unknown command 'FT.SEARCH', with args beginning with: 'idx' '*' ",
    });
    expect(checkCommand(['VADD', 'v', 'VALUES', '1', '0.5', 'e'])).toMatchObject({ ok: false });
    expect(checkCommand(['SEARCH.NOSUCH'])).toMatchObject({ ok: false });
  });

  it('has arity, flags and key positions as COMMAND INFO gives them', () => {
    expect(spec('get')).toMatchObject({ arity: 2, firstKey: 1, lastKey: 1, keyStep: 1, group: 'string', since: '1.0.0', route: 'forward' });
    expect([...spec('get').flags]).toEqual(['readonly', 'fast']);
    expect([...spec('set').aclCategories]).toEqual(['@write', '@string', '@slow']);
    expect(spec('mset')).toMatchObject({ arity: -3, firstKey: 1, lastKey: -1, keyStep: 2 });
    expect(spec('client|setname')).toMatchObject({ arity: 3, container: 'client', group: 'connection' });
    expect(spec('client').subcommands?.get('setname')).toBe(spec('client|setname'));
    expect(spec('xread').flags.has('movablekeys')).toBe(true);
  });

  it('marks writes by the write flag', () => {
    for (const n of ['set', 'del', 'lpush', 'xadd', 'flushall', 'copy', 'setex']) {
      expect(isWriteCommand(spec(n))).toBe(true);
    }
    for (const n of ['get', 'mget', 'ping', 'client|setname', 'config|set', 'eval', 'xread']) expect(isWriteCommand(spec(n))).toBe(false);
    expect(isWriteCommand(spec('xreadgroup'))).toBe(true);
  });
});

describe('lookups', () => {
  it('finds top-level commands case-insensitively, from strings and Buffers', () => {
    expect(lookupCommand('GET')?.name).toBe('get');
    expect(lookupCommand('gEt')?.name).toBe('get');
    expect(lookupCommand(Buffer.from('HGETALL'))?.name).toBe('hgetall');
    expect(lookupCommand('client|list')).toBeUndefined();
    expect(lookupCommand('nosuch')).toBeUndefined();
    expect(lookupCommand('')).toBeUndefined();
    expect(lookupCommand('\u212Aeys')).toBeUndefined(); // Kelvin sign lowercases to "k" in JS, not in Redis
    expect(lookupCommand(Buffer.from([0x67, 0x65, 0x74, 0x00]))).toBeUndefined();
    expect(lookupCommand('x'.repeat(10_000))).toBeUndefined();
  });

  it('resolves subcommands of containers', () => {
    expect(resolveCommand(['CLIENT', 'SETNAME', 'x'])?.name).toBe('client|setname');
    expect(resolveCommand([Buffer.from('config'), Buffer.from('GET'), Buffer.from('save')])?.name).toBe('config|get');
    expect(resolveCommand(['client'])?.name).toBe('client');
    expect(resolveCommand(['command'])?.name).toBe('command');
    expect(resolveCommand(['client', 'nosuch'])).toBeUndefined();
    expect(resolveCommand(['get', 'k'])?.name).toBe('get');
    expect(resolveCommand([])).toBeUndefined();
  });
});

describe('proxy routes', () => {
  it('gives every command and subcommand a route, and refused ones a text', () => {
    const routes = new Set<Route>(['forward', 'local', 'transaction', 'stream', 'blocking', 'refused']);
    for (const s of allCommandsAndSubcommands()) {
      expect(routes.has(s.route), s.name).toBe(true);
      if (s.route === 'refused') {
        expect(s.refusal, s.name).toMatch(/^ERR /);
        expect(s.reason, s.name).toBeTruthy();
      } else expect(s.refusal, s.name).toBeUndefined();
    }
  });

  it('only annotates real commands', () => {
    for (const key of [...Object.keys(proxyRoutes), ...Object.keys(platformRules)]) {
      expect(lookupFullName(key)?.name, key).toBe(key);
    }
  });

  it('routes the commands of the brief', () => {
    const expectRoute = (route: Route, names: string[]) => {
      for (const n of names) expect(spec(n).route, n).toBe(route);
    };
    expectRoute('local', [
      'ping',
      'echo',
      'quit',
      'reset',
      'select',
      'hello',
      'auth',
      'info',
      'command',
      'command|docs',
      'command|info',
      'command|count',
      'command|list',
      'config|get',
      'config|set',
      'config|resetstat',
    ]);
    expectRoute('local', [
      'client|setname',
      'client|getname',
      'client|id',
      'client|list',
      'client|info',
      'client|kill',
      'client|reply',
      'client|no-evict',
      'client|pause',
      'client|unpause',
      'slowlog|get',
      'slowlog|len',
      'slowlog|reset',
      'wait',
    ]);
    expectRoute('transaction', ['multi', 'exec', 'discard', 'watch', 'unwatch']);
    expectRoute('stream', ['subscribe', 'psubscribe', 'unsubscribe', 'punsubscribe', 'ssubscribe', 'sunsubscribe', 'monitor']);
    expectRoute('blocking', ['blpop', 'brpop', 'brpoplpush', 'blmove', 'blmpop', 'bzpopmin', 'bzpopmax', 'bzmpop']);
    expectRoute('refused', [
      'sync',
      'psync',
      'replconf',
      'shutdown',
      'debug',
      'module|load',
      'replicaof',
      'slaveof',
      'failover',
      'migrate',
      'swapdb',
      'move',
    ]);
    expectRoute('refused', ['config|rewrite', 'save', 'bgsave', 'bgrewriteaof', 'client|tracking', 'script|debug']);
    expectRoute('refused', ['cluster|info', 'cluster|slots', 'cluster|help', 'readonly', 'readwrite', 'asking']);
    expectRoute('forward', [
      'get',
      'set',
      'eval',
      'publish',
      'spublish',
      'pubsub|channels',
      'xread',
      'xreadgroup',
      'keys',
      'scan',
      'acl|whoami',
      'time',
      'dbsize',
      'flushall',
    ]);
    expect(spec('cluster|info').refusal).toBe(CLUSTER_DISABLED_ERROR);
    expect(spec('readonly').refusal).toBe(CLUSTER_DISABLED_ERROR);
    expect(spec('swapdb').refusal).toBe(
      "ERR command 'swapdb' is not supported by respgate: it moves data between databases, and each database behind the proxy is a separate REST database (SELECT n reaches --database n): one REST call reaches only one",
    );
  });

  it('answers like standalone Redis for the cluster commands', async () => {
    for (const args of [['CLUSTER', 'INFO'], ['cluster', 'slots'], ['READONLY'], ['READWRITE'], ['ASKING']]) {
      const r = await conn.call(...args);
      expect(r.type === 'error' && r.text).toBe(resolveCommand(args)!.refusal);
    }
  });

  it('routes XREAD and XREADGROUP as blocking only with a BLOCK option', () => {
    const route = (...args: string[]) => routeOf(resolveCommand(args)!, args);
    expect(route('XREAD', 'STREAMS', 's', '0')).toBe('forward');
    expect(route('XREAD', 'COUNT', '1', 'STREAMS', 's', '0')).toBe('forward');
    expect(route('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$')).toBe('blocking');
    expect(route('xread', 'count', '5', 'block', '100', 'streams', 's', '$')).toBe('blocking');
    expect(route('XREAD', 'STREAMS', 'block', '0')).toBe('forward'); // a stream named "block"
    expect(route('XREAD', 'STREAMS', 'BLOCK', '0', 'x', 'y')).toBe('forward');
    expect(route('XREAD', 'BLOCK')).toBe('forward'); // no value: a syntax error in Redis, never blocks
    expect(route('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '10', 'STREAMS', 's', '>')).toBe('blocking');
    expect(route('XREADGROUP', 'GROUP', 'block', 'block', 'STREAMS', 's', '>')).toBe('forward'); // group and consumer "block"
    expect(route('XREADGROUP', 'GROUP', 'g', 'c', 'NOACK', 'BLOCK', '10', 'STREAMS', 's', '>')).toBe('blocking');
    expect(route('GET', 'BLOCK')).toBe('forward');
    // CLAIM min-idle-time (Redis 8.4) is an option of XREADGROUP with a value; XREAD with it is an error.
    expect(route('XREADGROUP', 'GROUP', 'g', 'c', 'CLAIM', '100', 'BLOCK', '10', 'STREAMS', 's', '>')).toBe('blocking');
    expect(route('XREADGROUP', 'GROUP', 'g', 'c', 'CLAIM', 'block', 'STREAMS', 's', '>')).toBe('forward');
    expect(route('XREAD', 'CLAIM', '100', 'BLOCK', '10', 'STREAMS', 's', '$')).toBe('forward');
  });
});

describe('REST platform refusals', () => {
  it('refuses blocking commands, XREAD/XREADGROUP only with BLOCK', () => {
    expect(platformRefusal(['BLPOP', 'q', '0'])).toBe("ERR blocking command 'blpop' is not supported over REST");
    for (const n of ['brpop', 'brpoplpush', 'blmove', 'blmpop', 'bzpopmin', 'bzpopmax', 'bzmpop', 'wait']) {
      expect(platformRefusal([n, 'a', 'b'])).toBe(`ERR blocking command '${n}' is not supported over REST`);
    }
    expect(platformRefusal(['xread', 'BLOCK', '0', 'STREAMS', 's', '$'])).toBe("ERR blocking command 'xread' is not supported over REST");
    expect(platformRefusal(['XREADGROUP', 'GROUP', 'g', 'c', 'block', '5', 'STREAMS', 's', '>'])).toBe(
      "ERR blocking command 'xreadgroup' is not supported over REST",
    );
    expect(platformRefusal(['XREAD', 'COUNT', '2', 'STREAMS', 'block', '0'])).toBeUndefined();
    expect(platformRefusal(['XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', 's', '>'])).toBeUndefined();
  });

  it('refuses WATCH, UNWATCH and DISCARD but runs MULTI and EXEC', () => {
    expect(platformRefusal(['WATCH', 'k'])).toBe(
      "ERR command 'watch' is not supported over REST: send the whole transaction as one /multi-exec request",
    );
    expect(platformRefusal(['unwatch'])).toMatch(/^ERR command 'unwatch' is not supported over REST/);
    expect(platformRefusal(['discard'])).toMatch(/^ERR command 'discard' is not supported over REST/);
    expect(platformRefusal(['MULTI'])).toBeUndefined();
    expect(platformRefusal(['EXEC'])).toBeUndefined();
  });

  it('refuses connection commands other than PING and ECHO', () => {
    for (const args of [
      ['AUTH', 'p'],
      ['HELLO', '3'],
      ['SELECT', '0'],
      ['QUIT'],
      ['RESET'],
      ['READONLY'],
      ['READWRITE'],
      ['ASKING'],
      ['CLIENT', 'SETNAME', 'x'],
      ['client', 'list'],
      ['CLIENT'],
    ]) {
      const name = resolveCommand(args)!.name;
      expect(platformRefusal(args), args.join(' ')).toBe(
        `ERR command '${name}' is not supported over REST: REST requests have no connection state (only PING and ECHO are supported)`,
      );
    }
    expect(platformRefusal(['PING'])).toBeUndefined();
    expect(platformRefusal(['ECHO', 'x'])).toBeUndefined();
    expect(platformRefusal(['client', 'setname', 'x'])).toContain("'client|setname'");
  });

  it('refuses cluster commands, pub/sub and MONITOR', () => {
    expect(platformRefusal(['CLUSTER', 'INFO'])).toBe(
      "ERR command 'cluster|info' is not supported over REST: the database is not a cluster",
    );
    for (const n of ['subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe']) {
      expect(platformRefusal([n, 'ch'])).toBe(
        `ERR command '${n}' is not supported over REST: use the /subscribe/{channel} or /psubscribe/{pattern} event stream and /publish`,
      );
    }
    expect(platformRefusal(['MONITOR'])).toBe("ERR command 'monitor' is not supported over REST: use the /monitor event stream");
    expect(platformRefusal(['PUBLISH', 'ch', 'm'])).toBeUndefined();
    expect(platformRefusal(['PUBSUB', 'CHANNELS'])).toBeUndefined();
  });

  it('refuses operator commands and other databases', () => {
    const operator = [
      ['SHUTDOWN'],
      ['DEBUG', 'SLEEP', '0'],
      ['MODULE', 'LIST'],
      ['MODULE', 'LOAD', 'x'],
      ['REPLICAOF', 'h', '1'],
      ['SLAVEOF', 'NO', 'ONE'],
      ['FAILOVER'],
      ['SYNC'],
      ['PSYNC', '?', '-1'],
      ['REPLCONF', 'x', 'y'],
      ['MIGRATE', 'h', '1', 'k', '0', '1'],
      ['CONFIG', 'SET', 'x', 'y'],
      ['config', 'rewrite'],
      ['CONFIG', 'RESETSTAT'],
      ['SAVE'],
      ['BGSAVE'],
      ['BGREWRITEAOF'],
      ['ACL', 'LOAD'],
      ['acl', 'save'],
    ];
    for (const args of operator) {
      expect(platformRefusal(args), args.join(' ')).toBe(
        `ERR command '${resolveCommand(args)!.name}' is not supported over REST: it administers the server behind the database`,
      );
    }
    expect(platformRefusal(['SWAPDB', '0', '1'])).toBe("ERR command 'swapdb' is not supported over REST: only database 0 exists");
    expect(platformRefusal(['MOVE', 'k', '1'])).toBe("ERR command 'move' is not supported over REST: only database 0 exists");
    expect(platformRefusal(['COPY', 'a', 'b', 'DB', '1'])).toBe("ERR command 'copy' is not supported over REST: only database 0 exists");
    expect(platformRefusal(['COPY', 'a', 'b', 'REPLACE', 'db', '2'])).toMatch(/only database 0 exists/);
    expect(platformRefusal(['COPY', 'a', 'b'])).toBeUndefined();
    expect(platformRefusal(['COPY', 'a', 'b', 'DB', '0', 'REPLACE'])).toBeUndefined();
    expect(platformRefusal(['COPY', 'a', 'b', 'DB', 'notanumber'])).toBeUndefined(); // Redis' own parse error
    expect(platformRefusal(['SCRIPT', 'DEBUG', 'YES'])).toBe(
      "ERR command 'script|debug' is not supported over REST: the Lua debugger needs a dedicated connection",
    );
  });

  it('allows data, scripting and server commands, and leaves unknown commands to Redis', () => {
    for (const args of [
      ['GET', 'k'],
      ['SET', 'k', 'v'],
      ['EVAL', 'return 1', '0'],
      ['FUNCTION', 'LIST'],
      ['CONFIG', 'GET', 'maxmemory'],
      ['ACL', 'WHOAMI'],
      ['ACL', 'SETUSER', 'u'],
      ['INFO'],
      ['DBSIZE'],
      ['FLUSHDB'],
      ['KEYS', '*'],
      ['SCAN', '0'],
      ['LPOP', 'q'],
      ['ZPOPMIN', 'z'],
      ['COMMAND'],
      ['nosuch', 'x'],
      ['client', 'nosuch'],
      [],
    ]) {
      expect(platformRefusal(args), args.join(' ')).toBeUndefined();
    }
  });

  it('is consistent with checkCommand for every refused spec', () => {
    for (const s of allCommandsAndSubcommands()) {
      if (!s.platform || s.platform.when !== 'always' || s.subcommands) continue;
      const args = s.container ? [s.container, s.name.slice(s.container.length + 1)] : [s.name];
      while (args.length < Math.abs(s.arity)) args.push('x');
      expect(checkCommand(args).ok, s.name).toBe(true);
      expect(platformRefusal(args), s.name).toContain(`'${s.name}'`);
    }
  });
});
