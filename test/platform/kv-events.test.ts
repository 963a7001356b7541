// Server-sent event streams: /subscribe, /psubscribe, /monitor (spec 6.1), clean-up on disconnect.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { openStreams } from '../../src/platform/kv/events.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';
import { openEventStream } from '../helpers/sse.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

async function until(cond: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('/subscribe/{channel}', () => {
  it('streams subscribe,ch,1 then message,ch,text to every subscriber', async () => {
    const a = await openEventStream(`${p.url}/subscribe/chat`, p.token);
    const b = await openEventStream(`${p.url}/subscribe/chat`, p.token);
    expect(a.status).toBe(200);
    expect(await a.waitFor(1)).toEqual(['subscribe,chat,1']);
    await b.waitFor(1);
    expect((await kv(p, '/publish/chat/hello', { method: 'POST' })).json).toEqual({ result: 2 });
    expect((await command(p, ['PUBLISH', 'chat', 'how are you today?'])).json).toEqual({ result: 2 });
    expect(await a.waitFor(3)).toEqual(['subscribe,chat,1', 'message,chat,hello', 'message,chat,how are you today?']);
    expect(await b.waitFor(3)).toEqual(a.events);
    expect(a.body.startsWith('data: subscribe,chat,1\n\n')).toBe(true);
    a.close();
    b.close();
  });

  it('closes the Redis subscription when the client disconnects', async () => {
    await until(() => openStreams.count === 0); // streams of the previous test are gone
    const s = await openEventStream(`${p.url}/subscribe/leaving`, p.token);
    await s.waitFor(1);
    expect((await command(p, ['PUBSUB', 'NUMSUB', 'leaving'])).json).toEqual({ result: ['leaving', 1] });
    s.close();
    await until(async () => (await command(p, ['PUBSUB', 'NUMSUB', 'leaving'])).json.result[1] === 0);
    await until(() => openStreams.count === 0);
  });

  it('refuses without a valid token', async () => {
    const s = await openEventStream(`${p.url}/subscribe/chat`, 'bad');
    expect(s.status).toBe(401);
  });
});

describe('/psubscribe/{pattern}', () => {
  it('streams psubscribe,pat,1 then pmessage,pat,channel,text', async () => {
    const s = await openEventStream(`${p.url}/psubscribe/news:*`, p.token);
    expect(await s.waitFor(1)).toEqual(['psubscribe,news:*,1']);
    await command(p, ['PUBLISH', 'news:1', 'first']);
    await command(p, ['PUBLISH', 'other', 'ignored']);
    await command(p, ['PUBLISH', 'news:2', 'a,b,c']);
    expect(await s.waitFor(3)).toEqual(['psubscribe,news:*,1', 'pmessage,news:*,news:1,first', 'pmessage,news:*,news:2,a,b,c']);
    s.close();
  });
});

describe('/ssubscribe/{channel} (respgate extension: sharded pub/sub)', () => {
  it('streams ssubscribe,ch,1 then smessage,ch,text; SPUBLISH reaches it, PUBLISH does not; the Read Only token may subscribe', async () => {
    const s = await openEventStream(`${p.url}/ssubscribe/orders`, p.token);
    const ro = await openEventStream(`${p.url}/ssubscribe/orders`, p.readonlyToken);
    expect(await s.waitFor(1)).toEqual(['ssubscribe,orders,1']);
    expect(await ro.waitFor(1)).toEqual(['ssubscribe,orders,1']);
    expect((await command(p, ['PUBLISH', 'orders', 'plain'])).json).toEqual({ result: 0 });
    expect((await kv(p, '/spublish/orders/first', { method: 'POST' })).json).toEqual({ result: 2 });
    expect((await command(p, ['PUBSUB', 'SHARDNUMSUB', 'orders'])).json).toEqual({ result: ['orders', 2] });
    expect(await s.waitFor(2)).toEqual(['ssubscribe,orders,1', 'smessage,orders,first']);
    expect(await ro.waitFor(2)).toEqual(s.events);
    s.close();
    ro.close();
    await until(async () => (await command(p, ['PUBSUB', 'SHARDNUMSUB', 'orders'])).json.result[1] === 0);
  });
});

describe('/monitor', () => {
  it('streams OK, then one line per command executed', async () => {
    const m = await openEventStream(`${p.url}/monitor`, p.token);
    expect(await m.waitFor(1)).toEqual(['OK']);
    await kv(p, '/set/mon:k/v');
    await kv(p, '/get/mon:k');
    const events = await m.waitFor(3);
    expect(events[1]).toMatch(/^\d+\.\d{6} \[0 [\d.:]+\] "set" "mon:k" "v"$/);
    expect(events[2]).toMatch(/^\d+\.\d{6} \[0 [\d.:]+\] "get" "mon:k"$/);
    m.close();
  });

  it('is refused for the Read Only token with a NOPERM error', async () => {
    const r = await kv(p, '/monitor', { method: 'POST', token: p.readonlyToken });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^NOPERM /);
  });
});

// ---- respgate extension: Respgate-Event-Encoding: base64 ----

/** Opens a stream with extra request headers; keeps the raw body and the response headers. */
async function openRaw(path: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const res = await request(`${p.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${p.token}`, Accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const state = { body: '', status: res.statusCode, headers: res.headers };
  res.body.on('data', (c: Buffer) => (state.body += c.toString('latin1')));
  res.body.on('error', () => undefined);
  const events = () =>
    state.body
      .split('\n\n')
      .slice(0, -1)
      .map((block) =>
        block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n'),
      )
      .filter((e) => e !== '');
  return {
    ...state,
    get body() {
      return state.body;
    },
    events,
    waitFor: async (n: number) => {
      await until(() => events().length >= n);
      return events();
    },
    close: () => controller.abort(),
  };
}

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const enc = (b: Buffer | string) => Buffer.from(b).toString('base64');

/** Publishes raw bytes through the path form: channel percent-encoded, message as the raw body. */
async function publishBytes(channel: Buffer, message: Buffer) {
  const seg = [...channel].map((b) => '%' + b.toString(16).padStart(2, '0')).join('');
  return kv(p, `/publish/${seg}`, { method: 'POST', body: message });
}

describe('Respgate-Event-Encoding: base64 (respgate extension)', () => {
  it('encodes channel and message in base64 and echoes the header', async () => {
    const s = await openRaw('/subscribe/chat', { 'Respgate-Event-Encoding': 'base64' });
    expect(s.status).toBe(200);
    expect(s.headers['respgate-event-encoding']).toBe('base64');
    expect(await s.waitFor(1)).toEqual([`subscribe,${enc('chat')},1`]);
    await command(p, ['PUBLISH', 'chat', 'a,b\nc\r\nd']);
    expect(await s.waitFor(2)).toEqual([`subscribe,${enc('chat')},1`, `message,${enc('chat')},${enc('a,b\nc\r\nd')}`]);
    s.close();
  });

  it('carries all 256 byte values in channels, patterns and messages', async () => {
    const channel = Buffer.concat([Buffer.from('bin:'), ALL_BYTES]);
    const seg = [...channel].map((b) => '%' + b.toString(16).padStart(2, '0')).join('');
    const s = await openRaw(`/subscribe/${seg}`, { 'respgate-event-encoding': 'BASE64' });
    const ps = await openRaw(`/psubscribe/bin:*`, { 'Respgate-Event-Encoding': 'base64' });
    expect(await s.waitFor(1)).toEqual([`subscribe,${enc(channel)},1`]);
    expect(await ps.waitFor(1)).toEqual([`psubscribe,${enc('bin:*')},1`]);
    expect((await publishBytes(channel, ALL_BYTES)).json).toEqual({ result: 2 });
    const [, message] = await s.waitFor(2);
    const [type, ch, payload] = message.split(',');
    expect(type).toBe('message');
    expect(Buffer.from(ch, 'base64').equals(channel)).toBe(true);
    expect(Buffer.from(payload, 'base64').equals(ALL_BYTES)).toBe(true);
    const [, pmessage] = await ps.waitFor(2);
    expect(pmessage).toBe(`pmessage,${enc('bin:*')},${enc(channel)},${enc(ALL_BYTES)}`);
    s.close();
    ps.close();
  });

  it('without the header, events stay plain text exactly as before', async () => {
    const s = await openRaw('/subscribe/plain', {});
    expect(s.headers['respgate-event-encoding']).toBeUndefined();
    await s.waitFor(1);
    await command(p, ['PUBLISH', 'plain', 'x,y']);
    await s.waitFor(2);
    expect(s.body).toBe('data: subscribe,plain,1\n\ndata: message,plain,x,y\n\n');
    s.close();
  });

  it('leaves /monitor unchanged (its lines are ASCII already) and does not echo the header there', async () => {
    const m = await openRaw('/monitor', { 'Respgate-Event-Encoding': 'base64' });
    expect(m.headers['respgate-event-encoding']).toBeUndefined();
    expect(await m.waitFor(1)).toEqual(['OK']);
    await publishBytes(Buffer.from('mon'), Buffer.from([0, 0xff, 0x22]));
    const events = await m.waitFor(2);
    expect(events[1]).toMatch(/"publish" "mon" "\\x00\\xff\\""$/);
    m.close();
  });

  it('refuses any other value with 400', async () => {
    const r = await kv(p, '/subscribe/chat', { method: 'POST', headers: { 'Respgate-Event-Encoding': 'hex' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^ERR Respgate-Event-Encoding must be 'base64'/);
    await until(() => openStreams.count === 0);
  });
});

describe('stream connections', () => {
  it('serves more streams per token than the 64 exclusive connections of its pool, and transactions still run', async () => {
    await until(() => openStreams.count === 0);
    const streams = await Promise.all(Array.from({ length: 100 }, (_, i) => openEventStream(`${p.url}/subscribe/many:${i}`, p.token)));
    await Promise.all(streams.map((s) => s.waitFor(1)));
    expect(openStreams.count).toBe(100);
    const tx = await kv(p, '/multi-exec', {
      method: 'POST',
      body: JSON.stringify([
        ['SET', 'many:k', '1'],
        ['INCR', 'many:k'],
      ]),
    });
    expect(tx.json).toEqual([{ result: 'OK' }, { result: 2 }]);
    for (const s of streams) s.close();
    await until(() => openStreams.count === 0);
  });

  it('a client that leaves while its stream is being opened leaves nothing behind', async () => {
    await until(() => openStreams.count === 0);
    for (let i = 0; i < 30; i++) {
      const controller = new AbortController();
      const pending = request(`${p.url}/subscribe/leaving:${i}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${p.token}` },
        signal: controller.signal,
      }).catch(() => undefined);
      setTimeout(() => controller.abort(), i % 5);
      await pending;
    }
    await until(() => openStreams.count === 0);
    await until(
      async () =>
        (await command(p, ['PUBSUB', 'NUMPAT'])).json.result === 0 &&
        (await command(p, ['PUBSUB', 'CHANNELS', 'leaving:*'])).json.result.length === 0,
    );
  });
});
