// Area B request forms, status codes and error bodies (spec 4.2, 5, 7) against the real platform.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

describe('command in the path', () => {
  it('runs a command with its arguments as path segments, in any case', async () => {
    expect((await kv(p, '/set/forms:a/bar')).json).toEqual({ result: 'OK' });
    expect((await kv(p, '/GET/forms:a')).json).toEqual({ result: 'bar' });
    expect((await kv(p, '/gEt/forms:a')).json).toEqual({ result: 'bar' });
  });

  it('percent-decodes each segment', async () => {
    expect((await kv(p, '/set/forms%3Ab/a%2Fb%20c')).json).toEqual({ result: 'OK' });
    expect((await kv(p, '/get/forms:b')).json).toEqual({ result: 'a/b c' });
  });

  it('accepts arguments after the value: /set/k/v/EX/100', async () => {
    await kv(p, '/set/forms:ttl/v/EX/100');
    const ttl = (await kv(p, '/ttl/forms:ttl')).json.result;
    expect(ttl).toBeGreaterThan(90);
    expect(ttl).toBeLessThanOrEqual(100);
  });

  it('answers integers as numbers, nil as null and arrays as arrays', async () => {
    await kv(p, '/del/forms:l');
    expect((await kv(p, '/rpush/forms:l/a/b/c')).json).toEqual({ result: 3 });
    expect((await kv(p, '/lrange/forms:l/0/-1')).json).toEqual({ result: ['a', 'b', 'c'] });
    expect((await kv(p, '/get/forms:missing')).json).toEqual({ result: null });
    expect((await kv(p, '/mget/forms:a/forms:missing')).json).toEqual({ result: ['bar', null] });
  });

  it('keeps nested arrays (SCAN cursor is a string)', async () => {
    const r = (await kv(p, '/scan/0/MATCH/forms:a/COUNT/1000')).json;
    expect(r.result[0]).toBeTypeOf('string');
    expect(r.result[1]).toContain('forms:a');
  });

  it('publishes with /publish/{channel}/{message}', async () => {
    expect((await kv(p, '/publish/forms-ch/hello', { method: 'POST' })).json).toEqual({ result: 0 });
  });
});

describe('value in the body', () => {
  it('appends the raw body as the last argument', async () => {
    const body = '{"json":"is not parsed","n":[1,2]}';
    expect((await kv(p, '/set/forms:body', { method: 'POST', body })).json).toEqual({ result: 'OK' });
    expect((await kv(p, '/get/forms:body')).json).toEqual({ result: body });
  });

  it('adds query parameters after the body: ?EX=100 and valueless ?GET', async () => {
    await kv(p, '/set/forms:q', { method: 'POST', body: 'old' });
    expect((await kv(p, '/set/forms:q?EX=100&GET', { method: 'POST', body: 'new' })).json).toEqual({ result: 'old' });
    expect((await kv(p, '/ttl/forms:q')).json.result).toBeGreaterThan(90);
  });

  it('does not treat _token as an argument', async () => {
    const r = await kv(p, `/set/forms:t?_token=${p.token}`, { method: 'POST', body: 'v', token: null });
    expect(r.json).toEqual({ result: 'OK' });
  });

  it('works with PUT too', async () => {
    expect((await kv(p, '/set/forms:put', { method: 'PUT', body: 'x' })).json).toEqual({ result: 'OK' });
  });
});

describe('JSON command at the root', () => {
  it('runs ["SET", k, v, "EX", 100] with numbers', async () => {
    expect((await command(p, ['SET', 'forms:j', 'v', 'EX', 100])).json).toEqual({ result: 'OK' });
    expect((await command(p, ['INCRBY', 'forms:n', 5])).json).toEqual({ result: 5 });
  });

  it('refuses bodies that are not a command array with 400 and a clear error', async () => {
    for (const body of ['{"cmd":"get"}', '[]', '[["get","a"]]', '[null]', 'not json']) {
      const r = await kv(p, '/', { method: 'POST', body });
      expect(r.status, body).toBe(400);
      expect(Object.keys(r.json), body).toEqual(['error']);
      expect(r.json.error, body).toMatch(/^ERR /);
    }
  });

  it('answers an empty request with 400', async () => {
    const r = await kv(p, '/', { method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^ERR empty request/);
  });
});

describe('errors and status codes', () => {
  it('answers a failing command with 400 and the single field error, in Redis words', async () => {
    const r = await kv(p, '/get');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: "ERR wrong number of arguments for 'get' command" });
    await kv(p, '/set/forms:str/x');
    const w = await kv(p, '/lpush/forms:str/x');
    expect(w.status).toBe(400);
    expect(w.json.error).toMatch(/^WRONGTYPE /);
    const u = await kv(p, '/nosuchcommand/a');
    expect(u.status).toBe(400);
    expect(u.json.error).toBe("ERR unknown command 'nosuchcommand', with args beginning with: 'a' ");
    // Names of JavaScript object properties are unknown commands too, not JSON commands (was a 500).
    const c = await kv(p, '/constructor/a');
    expect(c.status).toBe(400);
    expect(c.json.error).toBe("ERR unknown command 'constructor', with args beginning with: 'a' ");
  });

  it('answers 401 with the WRONGPASS text for a missing or wrong token', async () => {
    for (const token of [null, 'wrong-token']) {
      const r = await kv(p, '/get/forms:a', { token });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ error: expect.stringMatching(/^WRONGPASS invalid or missing auth token/) });
    }
    const r = await kv(p, '/get/forms:a', { token: null, headers: { Authorization: 'Basic abc' } });
    expect(r.status).toBe(401);
  });

  it('accepts the token as the _token query parameter', async () => {
    const r = await kv(p, `/get/forms:a?_token=${encodeURIComponent(p.token)}`, { token: null });
    expect(r.json).toEqual({ result: 'bar' });
  });

  it('answers HEAD like GET without a body, and 405 for other methods', async () => {
    const head = await kv(p, '/get/forms:a', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    for (const method of ['DELETE', 'PATCH', 'OPTIONS']) {
      const r = await kv(p, '/get/forms:a', { method });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toBe('HEAD, GET, POST, PUT');
      expect(r.json.error, method).toMatch(/not allowed/);
    }
  });

  it('refuses commands the REST service does not offer, with 400 naming the command', async () => {
    for (const cmd of [
      ['BLPOP', 'k', '1'],
      ['WATCH', 'k'],
      ['SELECT', '1'],
      ['CLIENT', 'LIST'],
      ['SUBSCRIBE', 'ch'],
      ['SHUTDOWN'],
      ['XREAD', 'BLOCK', '10', 'STREAMS', 's', '$'],
    ]) {
      const r = await command(p, cmd);
      expect(r.status, cmd.join(' ')).toBe(400);
      expect(r.json.error, cmd.join(' ')).toMatch(/^ERR /);
      expect(r.json.error.toLowerCase(), cmd.join(' ')).toContain(cmd[0].toLowerCase());
    }
    // XREAD without BLOCK is an ordinary read
    expect((await command(p, ['XREAD', 'STREAMS', 'forms:nostream', '0'])).json).toEqual({ result: null });
  });
});

describe('pipeline', () => {
  it('answers one object per command in order, errors in place, others still run', async () => {
    const r = await kv(p, '/pipeline', {
      body: JSON.stringify([
        ['SET', 'forms:p', 'a'],
        ['INCR', 'forms:p'],
        ['SET', 'forms:p2', 2],
        ['INCR', 'forms:p2'],
        ['BLPOP', 'x', 1],
        ['GET', 'forms:p'],
      ]),
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      { result: 'OK' },
      { error: 'ERR value is not an integer or out of range' },
      { result: 'OK' },
      { result: 3 },
      { error: expect.stringMatching(/^ERR .*blpop/i) },
      { result: 'a' },
    ]);
  });

  it('refuses a body that is not an array of command arrays', async () => {
    for (const body of ['{}', '[1]', '[["get",{"a":1}]]', 'x']) {
      const r = await kv(p, '/pipeline', { body });
      expect(r.status, body).toBe(400);
      expect(r.json.error, body).toMatch(/^ERR /);
    }
  });

  it('runs MULTI/EXEC inside a pipeline on a connection of its own', async () => {
    const r = await kv(p, '/pipeline', { body: JSON.stringify([['MULTI'], ['SET', 'forms:m', '1'], ['INCR', 'forms:m'], ['EXEC']]) });
    expect(r.json).toEqual([{ result: 'OK' }, { result: 'QUEUED' }, { result: 'QUEUED' }, { result: ['OK', 2] }]);
    // An unterminated MULTI is discarded at the end of the request, not left on a shared connection.
    await kv(p, '/pipeline', { body: JSON.stringify([['MULTI'], ['SET', 'forms:m', 'left-open']]) });
    expect((await kv(p, '/get/forms:m')).json).toEqual({ result: '2' });
  });
});

describe('multi-exec', () => {
  it('runs atomically and answers one object per command, runtime errors in place', async () => {
    await kv(p, '/set/forms:tx/abc');
    const r = await kv(p, '/multi-exec', {
      body: JSON.stringify([
        ['SET', 'forms:tx2', '5'],
        ['INCR', 'forms:tx'],
        ['INCR', 'forms:tx2'],
      ]),
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([{ result: 'OK' }, { error: 'ERR value is not an integer or out of range' }, { result: 6 }]);
  });

  it('discards the whole transaction with a single error when a command is unsupported or malformed', async () => {
    await kv(p, '/set/forms:untouched/1');
    const unsupported = await kv(p, '/multi-exec', {
      body: JSON.stringify([
        ['INCR', 'forms:untouched'],
        ['BRPOP', 'q', 1],
      ]),
    });
    expect(unsupported.status).toBe(400);
    expect(unsupported.json).toEqual({ error: expect.stringMatching(/^ERR .*brpop/i) });
    const arity = await kv(p, '/multi-exec', { body: JSON.stringify([['INCR', 'forms:untouched'], ['GET']]) });
    expect(arity.status).toBe(400);
    expect(arity.json).toEqual({ error: "ERR wrong number of arguments for 'get' command" });
    expect((await kv(p, '/get/forms:untouched')).json).toEqual({ result: '1' });
  });

  it('always answers JSON, even when resp2 is asked for', async () => {
    const r = await kv(p, '/multi-exec', { body: JSON.stringify([['PING']]), headers: { 'Upstash-Response-Format': 'resp2' } });
    expect(r.headers.get('content-type')).toContain('application/json');
    expect(r.json).toEqual([{ result: 'PONG' }]);
  });
});

describe('Upstash-Encoding: base64', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  it('encodes every string at any depth except the OK reply; numbers and null stay', async () => {
    const h = { 'Upstash-Encoding': 'base64' };
    expect((await kv(p, '/set/forms:e/bar', { headers: h })).json).toEqual({ result: 'OK' });
    expect((await kv(p, '/get/forms:e', { headers: h })).json).toEqual({ result: b64('bar') });
    expect((await kv(p, '/ping', { headers: h })).json).toEqual({ result: b64('PONG') });
    expect((await kv(p, '/type/forms:e', { headers: h })).json).toEqual({ result: b64('string') });
    expect((await kv(p, '/mget/forms:e/forms:none', { headers: h })).json).toEqual({ result: [b64('bar'), null] });
    expect((await kv(p, '/strlen/forms:e', { headers: h })).json).toEqual({ result: 3 });
    const scan = (await kv(p, '/scan/0/MATCH/forms:e/COUNT/1000', { headers: h })).json.result;
    expect(scan[1]).toContain(b64('forms:e'));
  });

  it('does not encode errors, and applies per item in pipelines and transactions', async () => {
    const h = { 'Service-Encoding': 'base64' };
    expect((await kv(p, '/get', { headers: h })).json).toEqual({ error: "ERR wrong number of arguments for 'get' command" });
    const pipe = await kv(p, '/pipeline', {
      headers: h,
      body: JSON.stringify([
        ['SET', 'forms:e2', 'x'],
        ['GET', 'forms:e2'],
        ['INCR', 'forms:e2'],
      ]),
    });
    expect(pipe.json).toEqual([{ result: 'OK' }, { result: b64('x') }, { error: 'ERR value is not an integer or out of range' }]);
    const tx = await kv(p, '/multi-exec', {
      headers: h,
      body: JSON.stringify([
        ['GET', 'forms:e2'],
        ['ECHO', 'OK'],
      ]),
    });
    expect(tx.json).toEqual([{ result: b64('x') }, { result: b64('OK') }]);
  });

  it('replaces invalid UTF-8 with U+FFFD without base64', async () => {
    await kv(p, '/set/forms:bin/%FF%FEab');
    expect((await kv(p, '/get/forms:bin')).json).toEqual({ result: '\uFFFD\uFFFDab' });
    expect((await kv(p, '/get/forms:bin', { headers: { 'Upstash-Encoding': 'base64' } })).json).toEqual({
      result: Buffer.from([0xff, 0xfe, 0x61, 0x62]).toString('base64'),
    });
  });

  it('refuses an unknown encoding with 400', async () => {
    const r = await kv(p, '/ping', { headers: { 'Upstash-Encoding': 'hex' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/base64/);
  });
});

describe('Upstash-Response-Format: resp2', () => {
  const h = { 'Upstash-Response-Format': 'resp2' };
  it('answers the raw reply bytes as application/octet-stream', async () => {
    const set = await kv(p, '/set/forms:r/bar', { headers: h });
    expect(set.headers.get('content-type')).toBe('application/octet-stream');
    expect(set.text).toBe('+OK\r\n');
    expect((await kv(p, '/get/forms:r', { headers: h })).text).toBe('$3\r\nbar\r\n');
    expect((await kv(p, '/get/forms:none', { headers: h })).text).toBe('$-1\r\n');
    expect((await kv(p, '/incr/forms:rn', { headers: { 'Service-Response-Format': 'RESP2' } })).text).toBe(':1\r\n');
  });

  it('answers a failing command with 400 and the RESP error line', async () => {
    const r = await kv(p, '/get', { headers: h });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    expect(r.text).toBe("-ERR wrong number of arguments for 'get' command\r\n");
  });

  it('answers a pipeline as the concatenated replies, errors in place', async () => {
    const r = await kv(p, '/pipeline', {
      headers: h,
      body: JSON.stringify([
        ['SET', 'forms:r2', 'v'],
        ['GET', 'forms:r2'],
        ['INCR', 'forms:r2'],
        ['MGET', 'forms:r2', 'forms:none'],
      ]),
    });
    expect(r.status).toBe(200);
    expect(r.text).toBe('+OK\r\n$1\r\nv\r\n-ERR value is not an integer or out of range\r\n*2\r\n$1\r\nv\r\n$-1\r\n');
  });

  it('refuses other values and the combination with base64 with 400', async () => {
    const bad = await kv(p, '/ping', { headers: { 'Upstash-Response-Format': 'xml' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/json or resp2/);
    const both = await kv(p, '/ping', { headers: { ...h, 'Upstash-Encoding': 'base64' } });
    expect(both.status).toBe(400);
    expect(both.json.error).toMatch(/base64/);
  });
});

describe('SDK headers and the sync token', () => {
  it('accepts the headers the official SDK sends', async () => {
    const r = await command(p, ['PING'], {
      headers: {
        'Content-Type': 'application/json',
        'Upstash-Telemetry-Runtime': 'node@v20',
        'Upstash-Telemetry-Platform': 'unknown',
        'Upstash-Telemetry-Sdk': '@upstash/redis@1.39.0',
        'upstash-sync-token': '',
        'Cache-Control': 'no-cache',
      },
    });
    expect(r.json).toEqual({ result: 'PONG' });
  });

  it('answers upstash-sync-token and changes it after every write, not after reads', async () => {
    const t0 = (await kv(p, '/get/forms:a')).headers.get('upstash-sync-token');
    expect(t0).toBeTruthy();
    const t1 = (await kv(p, '/get/forms:a')).headers.get('upstash-sync-token');
    expect(t1).toBe(t0);
    const t2 = (await kv(p, '/set/forms:sync/1')).headers.get('upstash-sync-token');
    expect(t2).not.toBe(t1);
    const t3 = (
      await kv(p, '/pipeline', {
        body: JSON.stringify([
          ['GET', 'a'],
          ['INCR', 'forms:sync'],
        ]),
      })
    ).headers.get('upstash-sync-token');
    expect(t3).not.toBe(t2);
  });
});
