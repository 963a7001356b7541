// The queue side port end to end: RESP clients (ioredis RESP2, node-redis RESP3, redis-cli) → side port
// → the real local platform's Area D over HTTP → real HTTP destinations on free ports.
import { Redis as IORedis } from 'ioredis';
import { createClient, RESP_TYPES } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import { startTestPlatform } from '../helpers/platform.js';
import { queuePort, rawText, redisCli } from './harness.js';

let platform: RunningPlatform;
let port: RunningSideport;
let io: IORedis;
let nr: ReturnType<typeof createClient>;
let dest: Destination;
let other: Destination;

/** A RESP2 flat map reply as an object. */
function obj(flat: unknown): Record<string, any> {
  const a = flat as unknown[];
  const o: Record<string, any> = {};
  for (let i = 0; i < a.length; i += 2) o[a[i] as string] = a[i + 1];
  return o;
}

/** Waits for a condition checked through the side port (bounded). */
async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const ACCOUNT = { email: 'ops@example.com', key: 'account-key-for-tests' };

beforeAll(async () => {
  platform = await startTestPlatform({ queueBackoffScale: 0.001, accountEmail: ACCOUNT.email, accountKey: ACCOUNT.key });
  port = await queuePort({ url: `${platform.url}/queue`, token: platform.token });
  io = new IORedis({ port: port.port });
  nr = createClient({ socket: { port: port.port }, RESP: 3 });
  await nr.connect();
});
afterAll(async () => {
  io?.disconnect();
  await nr?.quit();
  await port?.stop();
  await platform?.stop();
});
beforeEach(async () => {
  await dest?.close();
  await other?.close();
  [dest, other] = await Promise.all([startDestination(), startDestination()]);
});

describe('QPUBLISH', () => {
  it('publishes to a URL with options as arguments; the destination gets body, method and headers', async () => {
    const reply = obj(
      await io.call(
        'QPUBLISH',
        `${dest.url}/hook`,
        '{"a":1}',
        'METHOD',
        'PUT',
        'CONTENT-TYPE',
        'application/json',
        'HEADER',
        'X-Trace',
        't-1',
        'RETRIES',
        '2',
      ),
    );
    expect(reply.messageId).toMatch(/^msg_/);
    const [got] = await dest.waitFor(1);
    expect(got.method).toBe('PUT');
    expect(got.path).toBe('/hook');
    expect(got.body.toString()).toBe('{"a":1}');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-trace']).toBe('t-1');
    expect(got.headers['upstash-message-id']).toBe(reply.messageId);
  });

  it('answers a RESP3 map to node-redis, and binary bodies arrive byte for byte', async () => {
    const bytes = Buffer.from([0, 1, 2, 254, 255, 13, 10]);
    const m = (await nr
      .withTypeMapping({ [RESP_TYPES.MAP]: Map })
      .sendCommand(['QPUBLISH', dest.url, bytes, 'CONTENT-TYPE', 'application/octet-stream'])) as Map<string, unknown>;
    expect(m).toBeInstanceOf(Map);
    expect(String(m.get('messageId'))).toMatch(/^msg_/);
    const [got] = await dest.waitFor(1);
    expect(got.body.equals(bytes)).toBe(true);
  });

  it('retries a failing destination and calls the failure callback, then the DLQ has it: LIST, GET, RETRY, DEL', async () => {
    dest.respond = (_r, i) => (i < 2 ? { status: 500, body: 'down' } : { status: 200, body: 'ok' });
    const { messageId } = obj(await io.call('QPUBLISH', dest.url, 'job', 'RETRIES', '1', 'FAILURE-CALLBACK', `${other.url}/failed`));
    await dest.waitFor(2);
    const [failure] = await other.waitFor(1);
    const callbackBody = JSON.parse(failure.body.toString());
    expect(callbackBody.sourceMessageId).toBe(messageId);
    const list = await until(
      async () => obj(await io.call('QDLQ', 'LIST', 'URL', dest.url)),
      (l) => (l.messages as unknown[]).length > 0,
    );
    const entry = obj((list.messages as unknown[])[0]);
    expect(entry.messageId).toBe(messageId);
    expect(entry.dlqId).toBe(callbackBody.dlqId);
    expect(obj(await io.call('QDLQ', 'GET', entry.dlqId)).responseStatus).toBe(500);
    await io.call('QDLQ', 'RETRY', entry.dlqId);
    const third = await dest.waitFor(3);
    expect(third[2].body.toString()).toBe('job');
    // A retried entry leaves the DLQ (as on the service); a second delete finds nothing.
    await until(
      async () => obj(await io.call('QDLQ', 'LIST', 'URL', dest.url)),
      (l) => (l.messages as unknown[]).length === 0,
    );
    await expect(io.call('QDLQ', 'DEL', entry.dlqId)).rejects.toThrow(/queue service error \(HTTP 404\)/);
  });

  it('refuses bad option values with texts that name the fix', async () => {
    const replies = await rawText(port.port, [
      ['QPUBLISH', dest.url, 'x', 'DELAY', '10 minutes'],
      ['QPUBLISH', dest.url, 'x', 'RETRIES', 'many'],
      ['QPUBLISH', dest.url, 'x', 'CALLBACK', 'ftp://x'],
      ['QPUBLISH', dest.url, 'x', 'METHOD', 'FETCH'],
      ['QPUBLISH', dest.url, 'x', 'BOGUS', '1'],
      ['QPUBLISH', dest.url, 'x', 'RETRIES'],
      ['QPUBLISH', dest.url],
      ['QPUBLISH', 'not a url', 'x'],
      ['QPUBLISH', 'no-such-group', 'x'],
    ]);
    expect(replies[8]).toMatch(/^-ERR queue service error \(HTTP 404\): /);
    expect(replies[0]).toMatch(/^-ERR DELAY must be a duration such as 30s, 10m, 2h, 1d or 1d10h30m/);
    expect(replies[1]).toBe('-ERR RETRIES is not an integer or out of range\r\n');
    expect(replies[2]).toMatch(/^-ERR CALLBACK must be a URL starting with http:\/\/ or https:\/\//);
    expect(replies[3]).toBe('-ERR METHOD must be one of GET, POST, PUT, PATCH, DELETE\r\n');
    expect(replies[4]).toMatch(/^-ERR syntax error: unknown option 'BOGUS' for QPUBLISH/);
    expect(replies[5]).toBe('-ERR syntax error\r\n');
    expect(replies[6]).toBe("-ERR wrong number of arguments for 'qpublish' command\r\n");
    expect(replies[7]).toMatch(/^-ERR the destination must be an http:\/\/ or https:\/\/ URL or a URL group name/);
    expect(dest.received).toHaveLength(0);
  });
});

describe('QMESSAGE', () => {
  it('GET shows a delayed message, CANCEL removes it, GET then fails with the service text', async () => {
    const { messageId } = obj(await io.call('QPUBLISH', dest.url, 'later', 'DELAY', '1h', 'LABEL', 'slow'));
    const m = obj(await io.call('QMESSAGE', 'GET', messageId));
    expect(m.messageId).toBe(messageId);
    expect(m.url).toBe(dest.url);
    expect(Number(m.notBefore)).toBeGreaterThan(Date.now() + 3_000_000);
    await io.call('QMESSAGE', 'CANCEL', messageId);
    await expect(io.call('QMESSAGE', 'GET', messageId)).rejects.toThrow(/HTTP 404/);
  });

  it('CANCELALL with a filter cancels the matching messages only', async () => {
    await io.call('QPUBLISH', dest.url, 'a', 'DELAY', '1h');
    await io.call('QPUBLISH', dest.url, 'b', 'DELAY', '1h');
    const keep = obj(await io.call('QPUBLISH', other.url, 'c', 'DELAY', '1h'));
    expect(obj(await io.call('QMESSAGE', 'CANCELALL', 'URL', dest.url)).cancelled).toBe(2);
    expect(obj(await io.call('QMESSAGE', 'GET', keep.messageId)).messageId).toBe(keep.messageId);
    await expect(io.call('QMESSAGE', 'CANCELALL', 'COLOR', 'red')).rejects.toThrow(/unknown option 'COLOR'/);
  });

  it('FLOW-CONTROL holds messages to the key limits; GET shows the key; CANCELALL FLOW-CONTROL-KEY filters by it', async () => {
    const key = `sideport-fc-${Date.now()}`;
    // A slow destination: with parallelism 1 the second message waits for the first answer.
    let inFlight = 0;
    let maxInFlight = 0;
    dest.respond = async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 100));
      inFlight--;
      return { status: 200 };
    };
    await io.call('QPUBLISH', `${dest.url}/fc`, 'a', 'FLOW-CONTROL', key, 'parallelism=1, rate=10, period=1m');
    const second = obj(await io.call('QPUBLISH', `${dest.url}/fc`, 'b', 'FLOW-CONTROL', key, 'parallelism=1, rate=10, period=1m'));
    await dest.waitFor(2);
    expect(maxInFlight).toBe(1);
    // Until its answer is in, the second is still pending (a cancel would count it).
    await until(
      () =>
        io.call('QMESSAGE', 'GET', second.messageId).then(
          () => 'pending',
          () => 'done',
        ),
      (state) => state === 'done',
    );
    // Delayed messages of the key (and one without it) are cancelled by the key only.
    const later = obj(await io.call('QPUBLISH', dest.url, 'c', 'DELAY', '1h', 'FLOW-CONTROL', key, 'parallelism=1'));
    expect(obj(await io.call('QMESSAGE', 'GET', later.messageId))).toMatchObject({ flowControlKey: key });
    const keep = obj(await io.call('QPUBLISH', dest.url, 'd', 'DELAY', '1h'));
    expect(obj(await io.call('QMESSAGE', 'CANCELALL', 'FLOW-CONTROL-KEY', key)).cancelled).toBe(1);
    await io.call('QMESSAGE', 'CANCEL', keep.messageId);
    await expect(io.call('QPUBLISH', dest.url, 'x', 'FLOW-CONTROL', key, 'parallelism=0')).rejects.toThrow(
      /HTTP 400.*parallelism must be a whole number >= 1/,
    );
  });
});

describe('QGROUP', () => {
  it('ADD, GET, LIST, publish fans out to every endpoint, REMOVE, DEL', async () => {
    expect(await io.call('QGROUP', 'ADD', 'team', `${dest.url}/a`, `${other.url}/b`)).toBeDefined();
    const g = obj(await io.call('QGROUP', 'GET', 'team'));
    expect(g.name).toBe('team');
    expect((g.endpoints as unknown[]).map((e) => obj(e).url).sort()).toEqual([`${dest.url}/a`, `${other.url}/b`].sort());
    expect(((await io.call('QGROUP', 'LIST')) as unknown[]).map((x) => obj(x).name)).toContain('team');
    const fan = (await io.call('QPUBLISH', 'team', 'hello all')) as unknown[];
    expect(fan).toHaveLength(2);
    expect(fan.map((x) => obj(x).messageId).every((id) => /^msg_/.test(id))).toBe(true);
    const [[a], [b]] = await Promise.all([dest.waitFor(1), other.waitFor(1)]);
    expect(a.body.toString()).toBe('hello all');
    expect(b.headers['upstash-topic-name']).toBe('team');
    await io.call('QGROUP', 'REMOVE', 'team', `${dest.url}/a`);
    expect(obj(await io.call('QGROUP', 'GET', 'team')).endpoints as unknown[]).toHaveLength(1);
    await io.call('QGROUP', 'DEL', 'team');
    await expect(io.call('QGROUP', 'GET', 'team')).rejects.toThrow(/queue service error \(HTTP 404\)/);
  });

  it('ADDNAMED names endpoints; HEADERS sets group defaults; bad input is refused', async () => {
    await io.call('QGROUP', 'ADDNAMED', 'named', 'first', dest.url);
    const g = obj(await io.call('QGROUP', 'GET', 'named'));
    expect(obj((g.endpoints as unknown[])[0])).toMatchObject({ name: 'first', url: dest.url });
    expect(await io.call('QGROUP', 'HEADERS', 'named', 'Upstash-Forward-X-Team', 'blue')).toBeDefined();
    await io.call('QPUBLISH', 'named', 'hi');
    const [got] = await dest.waitFor(1);
    expect(got.headers['x-team']).toBe('blue');
    await expect(io.call('QGROUP', 'ADDNAMED', 'named', 'odd')).rejects.toThrow(/wrong number of arguments for 'qgroup\|addnamed'/);
    await expect(io.call('QGROUP', 'ADDNAMED', 'named', 'a', dest.url, 'b')).rejects.toThrow(/name url pairs/);
    await expect(io.call('QGROUP', 'ADD', 'named', 'example.com')).rejects.toThrow(/must be a URL starting with http/);
  });
});

describe('QSCHEDULE', () => {
  it('CREATE, GET, LIST, PAUSE, RESUME, DEL', async () => {
    const { scheduleId } = obj(
      await io.call('QSCHEDULE', 'CREATE', dest.url, '*/5 * * * *', 'tick', 'RETRIES', '1', 'HEADER', 'X-Kind', 'cron'),
    );
    expect(scheduleId).toMatch(/^scd_/);
    const s = obj(await io.call('QSCHEDULE', 'GET', scheduleId));
    expect(s).toMatchObject({ scheduleId, cron: '*/5 * * * *', destination: dest.url });
    expect(((await io.call('QSCHEDULE', 'LIST')) as unknown[]).map((x) => obj(x).scheduleId)).toContain(scheduleId);
    await io.call('QSCHEDULE', 'PAUSE', scheduleId);
    expect(obj(await io.call('QSCHEDULE', 'GET', scheduleId)).isPaused).toBe(1);
    await io.call('QSCHEDULE', 'RESUME', scheduleId);
    expect(obj(await io.call('QSCHEDULE', 'GET', scheduleId)).isPaused).toBe(0);
    // ID updates the schedule in place.
    const again = obj(await io.call('QSCHEDULE', 'CREATE', dest.url, '0 * * * *', 'tock', 'ID', scheduleId));
    expect(again.scheduleId).toBe(scheduleId);
    expect(obj(await io.call('QSCHEDULE', 'GET', scheduleId)).cron).toBe('0 * * * *');
    await io.call('QSCHEDULE', 'DEL', scheduleId);
    await expect(io.call('QSCHEDULE', 'GET', scheduleId)).rejects.toThrow(/HTTP 404/);
    await expect(io.call('QSCHEDULE', 'CREATE', dest.url, 'every minute', 'x')).rejects.toThrow(/queue service error \(HTTP 400\)/);
  });
});

describe('QQUEUE and QENQUEUE', () => {
  it('UPSERT with PARALLELISM, GET, LIST, enqueue delivers, PAUSE/RESUME, DEL', async () => {
    await io.call('QQUEUE', 'UPSERT', 'orders', 'PARALLELISM', '2');
    expect(obj(await io.call('QQUEUE', 'GET', 'orders'))).toMatchObject({ name: 'orders', parallelism: 2 });
    expect(((await io.call('QQUEUE', 'LIST')) as unknown[]).map((x) => obj(x).name)).toContain('orders');
    const r = obj(await io.call('QENQUEUE', 'orders', dest.url, 'order-1'));
    expect(r.messageId).toMatch(/^msg_/);
    const [got] = await dest.waitFor(1);
    expect(got.body.toString()).toBe('order-1');
    await io.call('QQUEUE', 'PAUSE', 'orders');
    expect(obj(await io.call('QQUEUE', 'GET', 'orders')).paused).toBe(1);
    await io.call('QQUEUE', 'RESUME', 'orders');
    expect(obj(await io.call('QQUEUE', 'GET', 'orders')).paused).toBe(0);
    await io.call('QQUEUE', 'DEL', 'orders');
    await expect(io.call('QQUEUE', 'GET', 'orders')).rejects.toThrow(/HTTP 404/);
    await expect(io.call('QQUEUE', 'UPSERT', 'q', 'PARALLELISM', '0')).rejects.toThrow(/PARALLELISM must be a whole number from 1 to 1000/);
  });
});

describe('QKEYS and QEVENTS', () => {
  it('GET shows the signing keys and ROTATE moves next to current', async () => {
    const before = obj(await io.call('QKEYS', 'GET'));
    expect(before.current).toMatch(/^sig_/);
    const after = obj(await io.call('QKEYS', 'ROTATE'));
    expect(after.current).toBe(before.next);
    expect(after.next).not.toBe(before.next);
  });

  it('QEVENTS lists the log of a message', async () => {
    const { messageId } = obj(await io.call('QPUBLISH', dest.url, 'logged'));
    await dest.waitFor(1);
    const log = await until(
      async () => obj(await io.call('QEVENTS', 'MESSAGE', messageId)),
      (l) => (l.events as unknown[]).some((e) => obj(e).state === 'DELIVERED'),
    );
    expect((log.events as unknown[]).every((e) => obj(e).messageId === messageId)).toBe(true);
  });
});

describe('ACCOUNT (no account API configured)', () => {
  it('names the flags to set, and checks the budget range locally first', async () => {
    await expect(io.call('ACCOUNT', 'DISABLE-PRODPACK', 'u1')).rejects.toThrow(
      /ACCOUNT commands need the account API: give --account-url, --account-email and --account-key/,
    );
    await expect(io.call('ACCOUNT', 'BUDGET', 'u1', '5')).rejects.toThrow(
      /budget must be 0 \(no limit\) or from 20 to 10000 dollars, got 5/,
    );
    await expect(io.call('ACCOUNT', 'BUDGET', 'u1', 'ten')).rejects.toThrow(/budget is not an integer/);
  });
});

describe('ACCOUNT against the local account API', () => {
  it('USERS/USER read the instance; DISABLE-PRODPACK, ENABLE-PRODPACK and BUDGET change it (+OK)', async () => {
    const acct = await queuePort({
      url: `${platform.url}/queue`,
      token: platform.token,
      account: { url: `${platform.url}/account/v2`, email: ACCOUNT.email, apiKey: ACCOUNT.key },
    });
    const a = new IORedis({ port: acct.port });
    try {
      const [first] = (await a.call('ACCOUNT', 'USERS')) as unknown[];
      const id = obj(first).id as string;
      expect(await a.call('ACCOUNT', 'DISABLE-PRODPACK', id)).toBe('OK');
      expect(obj(await a.call('ACCOUNT', 'USER', id)).prod_pack_enabled).toBe(0);
      expect(await a.call('ACCOUNT', 'ENABLE-PRODPACK', id)).toBe('OK');
      expect(obj(await a.call('ACCOUNT', 'USER', id)).prod_pack_enabled).toBe(1);
      expect(await a.call('ACCOUNT', 'BUDGET', id, '120')).toBe('OK');
      expect(obj(await a.call('ACCOUNT', 'USER', id)).budget).toBe(120);
      expect(await a.call('ACCOUNT', 'BUDGET', id, '0')).toBe('OK');
      await expect(a.call('ACCOUNT', 'BUDGET', id, '10001')).rejects.toThrow(
        /budget must be 0 \(no limit\) or from 20 to 10000 dollars, got 10001/,
      );
      await expect(a.call('ACCOUNT', 'USER', 'nobody')).rejects.toThrow(
        /^ERR account service error \(HTTP 404\): queue instance nobody not found/,
      );
      await expect(a.call('ACCOUNT', 'LIMIT', id)).rejects.toThrow(/unknown subcommand 'LIMIT'. Try ACCOUNT HELP/);
    } finally {
      a.disconnect();
      await acct.stop();
    }
    const wrong = await queuePort({
      url: `${platform.url}/queue`,
      token: platform.token,
      account: { url: `${platform.url}/account/v2`, email: ACCOUNT.email, apiKey: 'wrong-key' },
    });
    const w = new IORedis({ port: wrong.port });
    try {
      const err = await w.call('ACCOUNT', 'USERS').catch((e: Error) => e.message);
      expect(err).toMatch(/^ERR account service error \(HTTP 401\): Unauthorized/);
      expect(err).not.toContain('wrong-key');
    } finally {
      w.disconnect();
      await wrong.stop();
    }
  });
});

describe('redis-cli', () => {
  it('publishes and reads a group with redis-cli', async () => {
    const out = await redisCli(port.port, ['QPUBLISH', dest.url, 'from-cli', 'HEADER', 'X-From', 'cli']);
    expect(out).toMatch(/^messageId\nmsg_/);
    const [got] = await dest.waitFor(1);
    expect(got.headers['x-from']).toBe('cli');
    const help = await redisCli(port.port, ['QDLQ', 'HELP']);
    expect(help).toContain('LIST [CURSOR cursor] [COUNT count]');
  });
});
