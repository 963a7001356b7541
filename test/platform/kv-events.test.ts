// Server-sent event streams: /subscribe, /psubscribe, /monitor (spec 6.1), clean-up on disconnect.
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
