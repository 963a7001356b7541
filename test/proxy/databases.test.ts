// Several databases behind one proxy (SELECT n), as the dev stack serves them: the platform's
// databases 1-15 at /db/<n>, each the proxy's database n. Redis is the oracle: a redis-server with 16
// databases gets the same commands, and the replies are compared byte for byte; where the proxy must
// differ (a transaction across databases, MOVE, SWAPDB, COPY … DB to another database) the test pins
// its error and checks that nothing ran.
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';
import { RawClient, replayOnBoth, startStack, startTestProxy, type DifferentialSide, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';

let stack: Stack;
let side: DifferentialSide;
const opened: RawClient[] = [];

async function connectBoth(): Promise<DifferentialSide> {
  const s = { oracle: await RawClient.connect(stack.oracle.endpoint.port), proxy: await RawClient.connect(stack.proxy.port) };
  opened.push(s.oracle, s.proxy);
  return s;
}

beforeAll(async () => {
  stack = await startStack({}, { databases: 16 });
  side = await connectBoth();
});

afterAll(async () => {
  for (const c of opened) c.close();
  await stack?.stop();
});

beforeEach(async () => {
  // FLUSHALL empties every database on both sides (the platform's /db/<n> share one redis-server).
  await replayOnBoth(side, [['SELECT', '0'], ['FLUSHALL']], false);
});

const text = (replies: Buffer[]) => replies.map((r) => r.toString('latin1'));

/** The same commands on both sides, as one burst and one at a time: the replies must be the same bytes. */
async function same(commands: string[][]): Promise<string[]> {
  for (const burst of [true, false]) {
    await replayOnBoth(side, [['SELECT', '0'], ['FLUSHALL']], false);
    const [o, p] = await replayOnBoth(side, commands, burst);
    expect({ burst, replies: text(p) }).toEqual({ burst, replies: text(o) });
  }
  return text((await replayOnBoth(side, [['SELECT', '0']], false))[1]);
}

/** CLIENT INFO's `db=` of a connection. */
async function dbOf(c: RawClient): Promise<string> {
  const [info] = await c.call(['CLIENT', 'INFO']);
  return /\bdb=(\d+)/.exec(info.toString())![1];
}

describe('SELECT', () => {
  it('keeps the keys of each database apart, as redis-server does', async () => {
    await same([
      ['SELECT', '3'],
      ['SET', 'k', 'three'],
      ['GET', 'k'],
      ['SELECT', '0'],
      ['GET', 'k'],
      ['SET', 'k', 'zero'],
      ['SELECT', '15'],
      ['EXISTS', 'k'],
      ['SELECT', '3'],
      ['GET', 'k'],
      ['DBSIZE'],
      ['KEYS', '*'],
      ['SELECT', '0'],
      ['GET', 'k'],
      ['DBSIZE'],
    ]);
  });

  it('answers out-of-range and malformed numbers as redis-server does, and stays on its database', async () => {
    await same([
      ['SELECT', '2'],
      ['SET', 'x', '1'],
      ['SELECT', '16'],
      ['SELECT', '-1'],
      ['SELECT', 'abc'],
      ['SELECT', '99999999999'],
      ['SELECT', '1.5'],
      ['SELECT'],
      ['SELECT', '1', '2'],
      ['GET', 'x'],
    ]);
  });

  it('keeps each connection on its own database and replies in order across switches', async () => {
    // A burst that switches back and forth: every command must reach its database, in order.
    const commands: string[][] = [];
    for (let i = 0; i < 20; i++) commands.push(['SELECT', String(i % 4)], ['INCR', 'n'], ['RPUSH', 'l', String(i)]);
    commands.push(['SELECT', '1'], ['LRANGE', 'l', '0', '-1'], ['SELECT', '3'], ['GET', 'n']);
    await same(commands);
    const other = await connectBoth();
    const [o, p] = await replayOnBoth(
      other,
      [
        ['GET', 'n'],
        ['SELECT', '2'],
        ['GET', 'n'],
      ],
      true,
    );
    expect(text(p)).toEqual(text(o));
  });

  it('shows the database in CLIENT LIST and CLIENT INFO (db=); RESET goes back to 0, HELLO and AUTH keep it', async () => {
    const s = await connectBoth();
    for (const c of [s.oracle, s.proxy]) {
      await c.call(['SELECT', '7']);
      expect(await dbOf(c)).toBe('7');
      await c.call(['HELLO', '3']);
      expect(await dbOf(c)).toBe('7');
      await c.call(['AUTH', 'default', 'any']);
      expect(await dbOf(c)).toBe('7');
      await c.call(['RESET']);
      expect(await dbOf(c)).toBe('0');
    }
    await s.proxy.call(['SELECT', '4']);
    const [list] = await side.proxy.call(['CLIENT', 'LIST']);
    expect(list.toString()).toMatch(/ db=4 /);
  });

  it('switches databases under CLIENT REPLY OFF and SKIP as redis-server does', async () => {
    // Only the replies after CLIENT REPLY ON are written, and SKIP silences the SELECT after it.
    const commands = [
      ['CLIENT', 'REPLY', 'OFF'],
      ['SET', 'r', '0'],
      ['SELECT', '1'],
      ['SET', 'r', '1'],
      ['CLIENT', 'REPLY', 'ON'],
      ['SELECT', '2'],
      ['CLIENT', 'REPLY', 'SKIP'],
      ['SET', 'r', '2'],
      ['GET', 'r'],
      ['SELECT', '1'],
      ['GET', 'r'],
      ['SELECT', '0'],
      ['GET', 'r'],
      // SKIP, then a command that waits (PUBLISH goes to database 0's upstream, after database 1's SET).
      ['SELECT', '1'],
      ['SET', 'r', 'x'],
      ['CLIENT', 'REPLY', 'SKIP'],
      ['PUBLISH', 'ch', 'm'],
      ['GET', 'r'],
    ];
    const bytes = encodeCommands(commands);
    for (const c of [side.oracle, side.proxy]) c.write(bytes);
    const [o, p] = await Promise.all([side.oracle.replies(10), side.proxy.replies(10)]);
    expect(text(p)).toEqual(text(o));
    // ON's +OK, SELECT 2, then SKIP silences SET r 2 (which waits for database 1's SET): GET r (2), SELECT 1, GET r (1), SELECT 0, GET r (0).
    expect(text(p)).toEqual([
      ...['+OK\r\n', '+OK\r\n', '$1\r\n2\r\n', '+OK\r\n', '$1\r\n1\r\n', '+OK\r\n', '$1\r\n0\r\n'],
      ...['+OK\r\n', '+OK\r\n', '$1\r\nx\r\n'],
    ]);
  });

  it('CONFIG GET databases counts them as redis-server does', async () => {
    const [o, p] = await replayOnBoth(side, [['CONFIG', 'GET', 'databases']], false);
    expect(text(p)).toEqual(text(o));
  });

  it('INFO keyspace lists every database with keys, after the connection’s earlier commands', async () => {
    const commands = [
      ['SET', 'a', '1'],
      ['SELECT', '2'],
      ['SET', 'b', '1'],
      ['SET', 'c', '1'],
      ['SELECT', '9'],
      ['SET', 'd', '1'],
      ['SELECT', '0'],
    ];
    await replayOnBoth(side, commands, true);
    const [o, p] = await replayOnBoth(side, [['INFO', 'keyspace']], true);
    expect(text(p)).toEqual(text(o));
    expect(text(p)[0]).toMatch(/db0:keys=1.*\r\ndb2:keys=2.*\r\ndb9:keys=1/s);
    // Written and asked in one burst: the count includes the writes before INFO.
    const [o2, p2] = await replayOnBoth(
      side,
      [
        ['SELECT', '5'],
        ['SET', 'e', '1'],
        ['INFO', 'keyspace'],
        ['SELECT', '0'],
      ],
      true,
    );
    expect(text(p2)).toEqual(text(o2));
  });
});

describe('transactions in a database', () => {
  it('MULTI … EXEC runs in the selected database, and a SELECT queued in MULTI moves it, as in redis-server', async () => {
    await same([
      ['SELECT', '4'],
      ['MULTI'],
      ['SET', 't', '1'],
      ['INCR', 't'],
      ['EXEC'],
      ['GET', 't'],
      ['MULTI'],
      ['SELECT', '6'],
      ['SET', 'u', 'x'],
      ['GET', 'u'],
      ['EXEC'],
      ['GET', 'u'],
      ['DBSIZE'],
      ['SELECT', '4'],
      ['EXISTS', 'u'],
      ['MULTI'],
      ['SELECT', '99'],
      ['GET', 't'],
      ['EXEC'],
    ]);
  });

  it('refuses a transaction across databases as a whole: nothing runs and the connection stays where it was', async () => {
    const c = side.proxy;
    const replies = await c.call(['SELECT', '1'], ['MULTI'], ['SET', 'p', '1'], ['SELECT', '2'], ['SET', 'q', '1'], ['EXEC']);
    expect(text(replies)).toEqual([
      '+OK\r\n',
      '+OK\r\n',
      '+QUEUED\r\n',
      '+QUEUED\r\n',
      '+QUEUED\r\n',
      '-EXECABORT Transaction discarded because of: respgate cannot run one transaction in several databases (SELECT between its commands, or WATCH in another database): each database is a separate REST database\r\n',
    ]);
    expect(await dbOf(c)).toBe('1');
    expect(text(await c.call(['EXISTS', 'p'], ['SELECT', '2'], ['EXISTS', 'q'], ['SELECT', '0']))).toEqual([
      ':0\r\n',
      '+OK\r\n',
      ':0\r\n',
      '+OK\r\n',
    ]);
  });

  it('WATCH watches the key of its database: a change there aborts EXEC, the same name in another database does not', async () => {
    const writer = new IORedis({ port: stack.proxy.port, db: 8, lazyConnect: true });
    const writer0 = new IORedis({ port: stack.proxy.port, lazyConnect: true });
    await writer.connect();
    await writer0.connect();
    try {
      for (const c of [side.proxy]) {
        await c.call(['SELECT', '8']);
        await c.call(['WATCH', 'w']);
        await writer0.set('w', 'db0'); // another database: not a change of the watched key
        expect(text(await c.call(['MULTI'], ['SET', 'w', 'mine'], ['EXEC']))).toEqual(['+OK\r\n', '+QUEUED\r\n', '*1\r\n+OK\r\n']);
        await c.call(['WATCH', 'w']);
        await writer.set('w', 'theirs');
        expect(text(await c.call(['MULTI'], ['SET', 'w', 'mine'], ['EXEC']))).toEqual(['+OK\r\n', '+QUEUED\r\n', '*-1\r\n']);
        expect(await writer.get('w')).toBe('theirs');
        expect(await writer0.get('w')).toBe('db0');
        // WATCH in one database and EXEC in another cannot be checked by one upstream: refused as a whole.
        await c.call(['WATCH', 'w']);
        const r = text(await c.call(['SELECT', '0'], ['MULTI'], ['SET', 'w', 'x'], ['EXEC']));
        expect(r[3]).toMatch(/^-EXECABORT .*several databases/);
        expect(await writer0.get('w')).toBe('db0');
      }
    } finally {
      writer.disconnect();
      writer0.disconnect();
    }
  });
});

describe('commands across databases', () => {
  it('MOVE and SWAPDB answer that they cannot be done over REST; COPY … DB copies in place or answers as redis-server does', async () => {
    const c = side.proxy;
    await c.call(['SET', 'a', '1']);
    const [move, swap] = text(await c.call(['MOVE', 'a', '1'], ['SWAPDB', '0', '1']));
    expect(move).toMatch(/^-ERR command 'move' is not supported by respgate: .*separate REST database/);
    expect(swap).toMatch(/^-ERR command 'swapdb' is not supported by respgate: .*separate REST database/);
    expect(text(await c.call(['COPY', 'a', 'b', 'DB', '2']))).toEqual([
      '-ERR COPY to another database is not supported by respgate: databases 0 and 2 are separate REST databases, and one REST call reaches only one (copy with DUMP and RESTORE through two connections instead)\r\n',
    ]);
    // In place (DB of the selected database), out of range and not a number: as redis-server.
    const [o, p] = await replayOnBoth(
      side,
      [
        ['SET', 'a', '1'],
        ['COPY', 'a', 'b', 'DB', '0'],
        ['COPY', 'a', 'b', 'DB', '0', 'REPLACE'],
        ['SELECT', '3'],
        ['SET', 'a', '3'],
        ['COPY', 'a', 'c', 'REPLACE', 'DB', '3'],
        ['GET', 'c'],
        ['COPY', 'a', 'c', 'DB', '16'],
        ['COPY', 'a', 'c', 'DB', 'x'],
        ['SELECT', '0'],
      ],
      false,
    );
    expect(text(p)).toEqual(text(o));
  });
});

describe('pub/sub and blocking', () => {
  it('pub/sub is global, as in Redis: a PUBLISH from database 5 reaches a subscriber on database 0 and on 3', async () => {
    const sub0 = new IORedis({ port: stack.proxy.port, lazyConnect: true });
    const sub3 = new IORedis({ port: stack.proxy.port, db: 3, lazyConnect: true });
    const pub = new IORedis({ port: stack.proxy.port, db: 5, lazyConnect: true });
    await Promise.all([sub0.connect(), sub3.connect(), pub.connect()]);
    try {
      const got: string[] = [];
      sub0.on('message', (ch, m) => got.push(`0:${ch}:${m}`));
      sub3.on('message', (ch, m) => got.push(`3:${ch}:${m}`));
      await sub0.subscribe('news');
      await sub3.subscribe('news');
      expect(await pub.publish('news', 'hi')).toBe(2);
      await until(() => got.length === 2);
      expect(got.sort()).toEqual(['0:news:hi', '3:news:hi']);
      const numsub = await pub.pubsub('NUMSUB', 'news');
      expect(numsub).toEqual(['news', 2]);
    } finally {
      for (const c of [sub0, sub3, pub]) c.disconnect();
    }
  });

  it('BLPOP waits on the key of its database: a push to the same name in another database does not wake it', async () => {
    const blocked = new IORedis({ port: stack.proxy.port, db: 4, lazyConnect: true });
    const pusher = new IORedis({ port: stack.proxy.port, lazyConnect: true });
    await Promise.all([blocked.connect(), pusher.connect()]);
    try {
      const popped = blocked.blpop('jobs', 5);
      await new Promise((r) => setTimeout(r, 100));
      await pusher.rpush('jobs', 'in-db0');
      await new Promise((r) => setTimeout(r, 300));
      await pusher.select(4);
      await pusher.rpush('jobs', 'in-db4');
      expect(await popped).toEqual(['jobs', 'in-db4']);
      await pusher.select(0);
      expect(await pusher.lrange('jobs', 0, -1)).toEqual(['in-db0']);
    } finally {
      blocked.disconnect();
      pusher.disconnect();
    }
  });

  it('MONITOR shows each command with its database, [db addr], as redis-server does', async () => {
    const monitor = await RawClient.connect(stack.proxy.port);
    opened.push(monitor);
    expect(text(await monitor.call(['MONITOR']))).toEqual(['+OK\r\n']);
    const c = await RawClient.connect(stack.proxy.port);
    opened.push(c);
    await c.call(['SELECT', '6'], ['SET', 'm', '1'], ['SELECT', '0'], ['GET', 'm']);
    await until(() => (monitor.peek().match(/\r\n/g)?.length ?? 0) >= 4, `MONITOR lines: ${JSON.stringify(monitor.peek())}`);
    const lines = monitor.peek().split('\r\n').slice(0, 4);
    const addr = lines[0].match(/\[\d+ ([^\]]+)\]/)![1];
    expect(lines.map((l) => l.replace(/^\+[\d.]+ /, ''))).toEqual([
      `[6 ${addr}] "SELECT" "6"`,
      `[6 ${addr}] "SET" "m" "1"`,
      `[0 ${addr}] "SELECT" "0"`,
      `[0 ${addr}] "GET" "m"`,
    ]);
  });
});

describe('a raw burst with every kind of item across databases', () => {
  it('keeps replies in order when transactions, blocking commands and plain commands of several databases are pipelined', async () => {
    const commands = [
      ['SELECT', '1'],
      ['RPUSH', 'q', 'a'],
      ['BLPOP', 'q', '1'],
      ['SELECT', '2'],
      ['MULTI'],
      ['INCR', 'z'],
      ['EXEC'],
      ['SELECT', '1'],
      ['LLEN', 'q'],
      ['SELECT', '2'],
      ['GET', 'z'],
      ['SELECT', '0'],
    ];
    const [o, p] = await replayOnBoth(side, commands, true);
    expect(text(p)).toEqual(text(o));
  });
});

describe('databases that are separate REST databases (--database N=URL,TOKEN)', () => {
  it('sends each database to its own upstream with its token, lists both in INFO keyspace, and keeps pub/sub on database 0', async () => {
    const other = await startTestPlatform();
    const proxy = await startTestProxy(stack.platform, { databases: [{ index: 1, url: other.url, token: other.token }] });
    const c = await RawClient.connect(proxy.port);
    opened.push(c);
    try {
      expect(
        text(await c.call(['SELECT', '0'], ['SET', 'where', 'main'], ['SELECT', '1'], ['SET', 'where', 'other'], ['SET', 'more', '1'])),
      ).toEqual(Array(5).fill('+OK\r\n'));
      // Each upstream has its own keys (its database 0).
      expect((await command(stack.platform, ['GET', 'where'])).json).toEqual({ result: 'main' });
      expect((await command(other, ['GET', 'where'])).json).toEqual({ result: 'other' });
      expect((await command(other, ['DBSIZE'])).json).toEqual({ result: 2 });
      const [info] = await c.call(['INFO', 'keyspace']);
      expect(info.toString()).toMatch(/# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\ndb1:keys=2,expires=0,avg_ttl=0\r\n/);
      expect(text(await c.call(['SELECT', '2'], ['CONFIG', 'GET', 'databases']))).toEqual([
        '-ERR DB index is out of range\r\n',
        '*2\r\n$9\r\ndatabases\r\n$1\r\n2\r\n',
      ]);
      // PUBLISH on database 1 goes to database 0's upstream, where the subscriptions are (pub/sub is global in Redis).
      const sub = new IORedis({ port: proxy.port, lazyConnect: true });
      await sub.connect();
      const got: string[] = [];
      sub.on('message', (_ch, m) => got.push(m));
      await sub.subscribe('events');
      expect(text(await c.call(['PUBLISH', 'events', 'from-db1']))).toEqual([':1\r\n']);
      await until(() => got.length === 1);
      expect(got).toEqual(['from-db1']);
      sub.disconnect();
    } finally {
      await proxy.stop();
      await other.stop();
    }
  });
});

describe("the local platform's databases (/db/<n>)", () => {
  it('serves database n as a complete Area B at <base>/db/<n>, the root staying database 0; other numbers answer 404', async () => {
    const p = stack.platform;
    const post = (path: string, args: string[], token?: string) =>
      kv(p, path, { method: 'POST', body: JSON.stringify(args), ...(token === undefined ? {} : { token }) });
    expect((await post('/db/3', ['SET', 'rest', 'three'])).json).toEqual({ result: 'OK' });
    expect((await post('/db/3/', ['GET', 'rest'])).json).toEqual({ result: 'three' });
    expect((await post('/', ['GET', 'rest'])).json).toEqual({ result: null });
    // The path forms and /pipeline work under the prefix, with the same tokens (Read Only included).
    expect((await kv(p, '/db/3/get/rest')).json).toEqual({ result: 'three' });
    expect((await kv(p, '/db/3/get/rest', { token: p.readonlyToken })).json).toEqual({ result: 'three' });
    expect(
      (
        await post('/db/3/pipeline', [
          ['INCR', 'n'],
          ['INCR', 'n'],
        ] as unknown as string[])
      ).json,
    ).toEqual([{ result: 1 }, { result: 2 }]);
    expect((await kv(p, '/db/3/get/rest', { token: 'wrong' })).status).toBe(401);
    // Through the proxy: the same keys on SELECT 3.
    const [, value] = await side.proxy.call(['SELECT', '3'], ['GET', 'rest']);
    await side.proxy.call(['SELECT', '0']);
    expect(value.toString()).toBe('$5\r\nthree\r\n');
    const out = await post('/db/16', ['PING']);
    expect(out.status).toBe(404);
    expect(out.json.error).toMatch(/^ERR DB index is out of range: this platform has databases 0 to 15/);
  });
});

describe('keyspace notifications (CONFIG SET notify-keyspace-events, which the service allows)', () => {
  it('turns them on upstream; a subscriber gets the events of its database as from redis-server; other parameters stay refused', async () => {
    const events: Record<'oracle' | 'proxy', string[]> = { oracle: [], proxy: [] };
    const subs: IORedis[] = [];
    try {
      for (const [name, port] of [
        ['oracle', stack.oracle.endpoint.port],
        ['proxy', stack.proxy.port],
      ] as const) {
        const sub = new IORedis({ port, lazyConnect: true });
        subs.push(sub);
        await sub.connect();
        sub.on('pmessage', (_p, ch, m) => events[name].push(`${ch} ${m}`));
        await sub.psubscribe('__key*@9__:*');
      }
      const [o, p] = await replayOnBoth(
        side,
        [
          ['CONFIG', 'SET', 'notify-keyspace-events', 'KEA'],
          ['CONFIG', 'GET', 'notify-keyspace-events'],
          ['CONFIG', 'GET', 'notify-*'],
          ['SELECT', '9'],
          ['SET', 'nk', '1'],
          ['LPUSH', 'nl', 'a'],
          ['DEL', 'nk'],
          ['SELECT', '0'],
          ['SET', 'elsewhere', '1'],
          ['CONFIG', 'SET', 'notify-keyspace-events', ''],
          ['CONFIG', 'GET', 'notify-keyspace-events'],
        ],
        false,
      );
      expect(text(p)).toEqual(text(o));
      await until(() => events.proxy.length >= 6 && events.oracle.length >= 6);
      await new Promise((r) => setTimeout(r, 100));
      expect(events.proxy).toEqual(events.oracle);
      expect(events.proxy).toContain('__keyevent@9__:lpush nl');
      const [refused] = text(await side.proxy.call(['CONFIG', 'SET', 'notify-keyspace-events', 'KEA', 'maxmemory', '1']));
      expect(refused).toMatch(/^-ERR command 'config\|set' is not supported by respgate/);
    } finally {
      for (const s of subs) s.disconnect();
      await replayOnBoth(side, [['CONFIG', 'SET', 'notify-keyspace-events', '']], false);
    }
  });
});
