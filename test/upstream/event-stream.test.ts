// The upstream SSE client: paths, event decoding (plain and base64), the platform's streams, fake
// servers for the plain format and for faults, and reconnection with backoff.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStreams } from '../../src/platform/kv/events.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { decodePubsubEvent, EventStreamClient, ResilientEventStream, streamPath, type StreamEnd } from '../../src/upstream/event-stream.js';
import { command, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

async function until(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const FAKE_TOKEN = 'fake-upstream-token-0123456789';
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** Collects what a raw stream reports. */
function collect() {
  const seen = { opened: undefined as boolean | undefined, events: [] as string[], end: undefined as StreamEnd | undefined };
  return {
    seen,
    handlers: {
      onOpen: (encoded: boolean) => (seen.opened = encoded),
      onEvent: (data: string) => seen.events.push(data),
      onEnd: (end: StreamEnd) => (seen.end = end),
    },
  };
}

/** A fake upstream answering every POST with `respond`. */
async function fakeServer(respond: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer(respond);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropAll: () => sockets.forEach((s) => s.destroy()),
    stop: () =>
      new Promise<void>((r) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => r());
      }),
  };
}

describe('streamPath', () => {
  it('percent-encodes names byte for byte, including dot segments', () => {
    expect(streamPath({ kind: 'subscribe', channel: Buffer.from('news:1') })).toBe('/subscribe/news%3A1');
    expect(streamPath({ kind: 'psubscribe', pattern: Buffer.from('a/b*') })).toBe('/psubscribe/a%2Fb*');
    expect(streamPath({ kind: 'subscribe', channel: Buffer.from('..') })).toBe('/subscribe/%2E%2E');
    expect(streamPath({ kind: 'subscribe', channel: Buffer.from([0xff, 0x00, 0x41]) })).toBe('/subscribe/%FF%00A');
    expect(streamPath({ kind: 'subscribe', channel: Buffer.alloc(0) })).toBe('/subscribe/');
    expect(streamPath({ kind: 'monitor' })).toBe('/monitor');
  });
});

describe('decodePubsubEvent', () => {
  const b = (s: string) => Buffer.from(s);
  const e = (s: string | Buffer) => Buffer.from(s).toString('base64');

  it('decodes the base64 format exactly, commas and line breaks included', () => {
    expect(decodePubsubEvent(`subscribe,${e('a,b')},1`, true, b('a,b'))).toEqual({ type: 'subscribe', name: b('a,b'), count: 1 });
    expect(decodePubsubEvent(`message,${e('a,b')},${e('x,\r\ny')}`, true, b('a,b'))).toEqual({
      type: 'message',
      channel: b('a,b'),
      message: b('x,\r\ny'),
    });
    expect(decodePubsubEvent(`pmessage,${e('*')},${e('c,d')},${e(ALL_BYTES)}`, true, b('*'))).toEqual({
      type: 'pmessage',
      pattern: b('*'),
      channel: b('c,d'),
      message: ALL_BYTES,
    });
    expect(decodePubsubEvent('message,,', true, b(''))).toEqual({ type: 'message', channel: b(''), message: b('') });
  });

  it('decodes the plain format, using the known channel or pattern to find where it ends', () => {
    expect(decodePubsubEvent('subscribe,a,b,1', false, b('a,b'))).toEqual({ type: 'subscribe', name: b('a,b'), count: 1 });
    expect(decodePubsubEvent('message,a,b,x,y', false, b('a,b'))).toEqual({ type: 'message', channel: b('a,b'), message: b('x,y') });
    expect(decodePubsubEvent('pmessage,p,*,ch,x,y', false, b('p,*'))).toEqual({
      type: 'pmessage',
      pattern: b('p,*'),
      channel: b('ch'),
      message: b('x,y'),
    });
    // The documented ambiguity: a pmessage channel holding a comma is cut at its first comma.
    expect(decodePubsubEvent('pmessage,*,c,d,msg', false, b('*'))).toEqual({
      type: 'pmessage',
      pattern: b('*'),
      channel: b('c'),
      message: b('d,msg'),
    });
    expect(decodePubsubEvent('message,other,x', false, b('mine'))).toEqual({ type: 'message', channel: b('other'), message: b('x') });
    expect(decodePubsubEvent('nonsense', false, b('x'))).toBeUndefined();
    expect(decodePubsubEvent('weird,x,y', true, b('x'))).toBeUndefined();
  });
});

describe('EventStreamClient against the platform', () => {
  it('opens a subscription with the base64 encoding, reports events, and closing ends it upstream', async () => {
    const client = new EventStreamClient({ url: p.url, token: p.token, timeoutMs: 5000 });
    const channel = Buffer.concat([Buffer.from('es:'), ALL_BYTES]);
    const { seen, handlers } = collect();
    const stream = client.open({ kind: 'subscribe', channel }, handlers);
    expect(client.openCount).toBe(1);
    await until(() => seen.events.length === 1);
    expect(seen.opened).toBe(true);
    expect(decodePubsubEvent(seen.events[0], true, channel)).toEqual({ type: 'subscribe', name: channel, count: 1 });
    const seg = [...channel].map((x) => '%' + x.toString(16).padStart(2, '0')).join('');
    await fetch(`${p.url}/publish/${seg}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.token}` },
      body: new Uint8Array(ALL_BYTES),
    });
    await until(() => seen.events.length === 2);
    expect(decodePubsubEvent(seen.events[1], true, channel)).toEqual({ type: 'message', channel, message: ALL_BYTES });
    stream.close();
    expect(client.openCount).toBe(0);
    await until(() => openStreams.count === 0);
    await until(async () => (await command(p, ['PUBSUB', 'NUMSUB', 'es:x'])).json.result[1] === 0);
    expect(seen.end).toBeUndefined(); // no handler after close()
    await client.close();
  });

  it('reports a refusal with the upstream error and the status', async () => {
    const client = new EventStreamClient({ url: p.url, token: 'wrong-token', timeoutMs: 5000 });
    const { seen, handlers } = collect();
    client.open({ kind: 'monitor' }, handlers);
    await until(() => seen.end !== undefined);
    expect(seen.end).toMatchObject({ kind: 'refused', status: 401 });
    expect(JSON.stringify(seen.end)).not.toContain('wrong-token');
    const ro = new EventStreamClient({ url: p.url, token: p.readonlyToken, timeoutMs: 5000 });
    const second = collect();
    ro.open({ kind: 'monitor' }, second.handlers);
    await until(() => second.seen.end !== undefined);
    expect(second.seen.end).toMatchObject({ kind: 'refused', status: 400 });
    expect((second.seen.end as { error: string }).error).toMatch(/^NOPERM /);
    await client.close();
    await ro.close();
  });

  it('reports a refused connection as failed', async () => {
    const client = new EventStreamClient({ url: 'http://127.0.0.1:1', token: FAKE_TOKEN, timeoutMs: 2000 });
    const { seen, handlers } = collect();
    client.open({ kind: 'monitor' }, handlers);
    await until(() => seen.end !== undefined);
    expect(seen.end).toMatchObject({ kind: 'failed' });
    expect((seen.end as { problem: string }).problem).toMatch(/ECONNREFUSED/);
    await client.close();
  });
});

describe('EventStreamClient against other servers', () => {
  it('reads the plain format when the header is not echoed, with UTF-8 split across chunks and multi-line data', async () => {
    let asked: string | undefined;
    const server = await fakeServer((req, res) => {
      asked = req.headers['respgate-event-encoding'] as string;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const text = Buffer.from(
        'data: subscribe,ch,1\n\ndata: message,ch,h\u00e9llo\n\n: keepalive\n\ndata: message,ch,two\ndata: lines\n\n',
      );
      const cut = text.indexOf(0xc3) + 1; // inside the two bytes of é
      res.write(text.subarray(0, cut));
      setTimeout(() => res.write(text.subarray(cut)), 20);
    });
    const client = new EventStreamClient({ url: server.url, token: FAKE_TOKEN, timeoutMs: 2000 });
    const { seen, handlers } = collect();
    client.open({ kind: 'subscribe', channel: Buffer.from('ch') }, handlers);
    await until(() => seen.events.length === 3);
    expect(asked).toBe('base64');
    expect(seen.opened).toBe(false);
    expect(seen.events).toEqual(['subscribe,ch,1', 'message,ch,h\u00e9llo', 'message,ch,two\nlines']);
    server.dropAll();
    await until(() => seen.end !== undefined);
    expect(['failed', 'ended']).toContain(seen.end!.kind);
    await client.close();
    await server.stop();
  });

  it('fails a stream whose event exceeds the size limit', async () => {
    const server = await fakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: ' + 'x'.repeat(5000));
    });
    const client = new EventStreamClient({ url: server.url, token: FAKE_TOKEN, timeoutMs: 2000, maxEventChars: 1000 });
    const { seen, handlers } = collect();
    client.open({ kind: 'monitor' }, handlers);
    await until(() => seen.end !== undefined);
    expect(seen.end).toEqual({ kind: 'failed', problem: 'an event longer than 1000 characters' });
    await client.close();
    await server.stop();
  });
});

describe('ResilientEventStream', () => {
  function resilientLog() {
    const log: string[] = [];
    return {
      log,
      handlers: {
        onConfirmed: (again: boolean) => log.push(again ? 'confirmed again' : 'confirmed'),
        onEvent: (data: string) => log.push(`event ${data}`),
        onFailed: (error: string) => log.push(`failed ${error}`),
        onDropped: (_reason: string, attempt: number) => log.push(`dropped ${attempt}`),
        onRefused: (error: string) => log.push(`refused ${error}`),
      },
    };
  }

  it('re-opens a dropped stream with backoff and swallows its new confirmation', async () => {
    let opened = 0;
    const server = await fakeServer((_req, res) => {
      opened++;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(`data: OK\n\ndata: line ${opened}\n\n`);
    });
    const client = new EventStreamClient({ url: server.url, token: FAKE_TOKEN, timeoutMs: 2000 });
    const { log, handlers } = resilientLog();
    const stream = new ResilientEventStream(client, { kind: 'monitor' }, handlers, { confirmTimeoutMs: 2000, minDelayMs: 10 });
    await until(() => log.length === 2);
    server.dropAll();
    await until(() => log.length === 5);
    expect(log).toEqual(['confirmed', 'event line 1', 'dropped 1', 'confirmed again', 'event line 2']);
    expect(stream.confirmed).toBe(true);
    stream.close();
    await until(() => client.openCount === 0);
    await client.close();
    await server.stop();
  });

  it('keeps retrying while the upstream is unreachable, and stops on a 4xx refusal', async () => {
    let mode: 'ok' | 'down' | 'refuse' = 'ok';
    const server = await fakeServer((_req, res) => {
      if (mode === 'down') return res.socket?.destroy();
      if (mode === 'refuse') {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ error: 'NOPERM this user has no permissions to access one of the channels used as arguments' }));
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: subscribe,c,1\n\n');
    });
    const client = new EventStreamClient({ url: server.url, token: FAKE_TOKEN, timeoutMs: 2000 });
    const { log, handlers } = resilientLog();
    new ResilientEventStream(client, { kind: 'subscribe', channel: Buffer.from('c') }, handlers, {
      confirmTimeoutMs: 2000,
      minDelayMs: 5,
      maxDelayMs: 20,
    });
    await until(() => log.length === 1);
    mode = 'down';
    server.dropAll();
    await until(() => log.filter((l) => l.startsWith('dropped')).length >= 3);
    mode = 'refuse';
    await until(() => log.some((l) => l.startsWith('refused')));
    expect(log.at(-1)).toBe('refused NOPERM this user has no permissions to access one of the channels used as arguments');
    await client.close();
    await server.stop();
  });

  it('fails the first stream when it is not confirmed in time', async () => {
    const server = await fakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': nothing yet\n\n');
    });
    const client = new EventStreamClient({ url: server.url, token: FAKE_TOKEN, timeoutMs: 2000 });
    const { log, handlers } = resilientLog();
    new ResilientEventStream(client, { kind: 'monitor' }, handlers, { confirmTimeoutMs: 100 });
    await until(() => log.length === 1);
    expect(log).toEqual(['failed ERR upstream event stream failed: no confirmation from the upstream within 100 ms']);
    await until(() => client.openCount === 0);
    await client.close();
    await server.stop();
  });
});
