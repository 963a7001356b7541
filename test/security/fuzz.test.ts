// Fuzzing with fast-check (a sample; scripts/fuzz-proxy.ts runs a million frames and more):
//  - the request reader: valid frames cut at random places come back as the same arguments, and
//    random or mutated bytes never throw;
//  - a live proxy connection: the same random, mutated and valid frames go to the proxy and to a real
//    redis-server, and the bytes that come back (and whether the connection closes) are the same;
//    the proxy never crashes or hangs;
//  - the platform's HTTP endpoints: random methods, paths, headers and bodies never get a 5xx, and
//    the platform keeps answering.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestReader } from '../../src/resp/request-reader.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { anyFrame, exchangeAll, validCommand } from '../helpers/fuzz-frames.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('the request reader', () => {
  it('valid frames, cut at random places, come back as the same arguments', () => {
    fc.assert(
      fc.property(fc.array(validCommand, { minLength: 1, maxLength: 10 }), fc.array(fc.nat(), { maxLength: 6 }), (commands, cuts) => {
        const bytes = encodeCommands(commands);
        const reader = new RequestReader();
        const got: Buffer[][] = [];
        let from = 0;
        for (const cut of [...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length]) {
          reader.push(bytes.subarray(from, Math.max(from, cut)));
          from = Math.max(from, cut);
          for (let r = reader.read(); r; r = reader.read()) {
            expect(r.kind).toBe('command');
            if (r.kind === 'command') got.push(r.args.map((a) => Buffer.from(a)));
          }
        }
        expect(got).toEqual(commands.map((c) => c.map((a) => Buffer.from(a))));
      }),
      { numRuns: 500 },
    );
  });

  it('random and mutated bytes never throw; after a protocol error nothing more is read', () => {
    fc.assert(
      fc.property(fc.array(anyFrame, { maxLength: 8 }), fc.boolean(), (frames, authenticated) => {
        const reader = new RequestReader({ maxBulkLength: 1024 * 1024 });
        reader.authenticated = authenticated;
        for (const f of frames) {
          reader.push(f);
          for (let r = reader.read(); r; r = reader.read()) {
            if (r.kind === 'protocol-error') {
              expect(r.reply.toString('latin1')).toMatch(/^-ERR Protocol error: [^\r\n]+\r\n$/);
              expect(reader.read()).toBeUndefined();
              return;
            }
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('a live proxy connection, against a real redis-server', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('cases the million-frame run found: a NUL where a bulk length line starts waits for more, as Redis does', async () => {
    for (const frame of [
      '*3\r\n$4\r\nECHO\r\n$1\r\nx\r\n\x001\r\ny\r\n',
      '*2\r\n$4\r\nECHO\r\n\x00',
      '*3\r\n$4\r\nECHO\r\n$1\r\nx\r\n#1\r\ny\r\n',
    ]) {
      const bytes = Buffer.from(frame, 'latin1');
      const [proxy, redis] = await Promise.all([exchangeAll(stack.proxy.port, bytes), exchangeAll(stack.oracle.endpoint.port, bytes)]);
      expect(proxy.data.toString('latin1'), JSON.stringify(frame)).toBe(redis.data.toString('latin1'));
    }
  });

  it('answers random, mutated and valid frames byte for byte as Redis does, and keeps serving', async () => {
    let frames = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(anyFrame, { minLength: 1, maxLength: 6 }), async (list) => {
        frames += list.length;
        const bytes = Buffer.concat(list);
        const [proxy, redis] = await Promise.all([exchangeAll(stack.proxy.port, bytes), exchangeAll(stack.oracle.endpoint.port, bytes)]);
        expect(proxy.closed).toBe(true); // never hangs: it answers and closes after the client's end
        expect(proxy.data.toString('latin1')).toBe(redis.data.toString('latin1'));
      }),
      { numRuns: 150 },
    );
    expect(frames).toBeGreaterThan(150);
    const alive = await exchangeAll(stack.proxy.port, encodeCommands([['PING']]));
    expect(alive.data.toString()).toBe('+PONG\r\n');
  }, 60_000);

  it("the platform's HTTP endpoints: random requests never get a 5xx, and it keeps answering", async () => {
    const p = stack.platform;
    const segment = fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.constantFrom(
        '..',
        '.',
        '%',
        '%zz',
        '%00',
        'set',
        'get',
        'pipeline',
        'multi-exec',
        'ACL',
        'vector',
        'queue',
        'account',
        'v2',
        'dense',
        'upsert',
        'query',
        'publish',
        'messages',
        'https:',
        '\u00e9',
      ),
    );
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
      segments: fc.array(segment, { maxLength: 5 }),
      auth: fc.constantFrom('standard', 'readonly', 'junk', 'none', 'basic'),
      contentType: fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/octet-stream', 'multipart/form-data', ';;;'),
      body: fc.oneof(
        fc.constant(undefined),
        fc.json(),
        fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
        fc.constantFrom('[', '[["SET"]]', '[[]]', '{"vector":[1,2]}', '[["GET",{}]]', 'null'),
      ),
      headerName: fc.constantFrom(
        'upstash-encoding',
        'upstash-response-format',
        'upstash-delay',
        'upstash-retries',
        'upstash-forward-x',
        'x-junk',
      ),
      headerValue: fc.stringMatching(/^[\x20-\x7e]{0,20}$/),
    });
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const path = '/' + r.segments.map((s) => encodeURIComponent(s)).join('/');
        const headers: Record<string, string> = { [r.headerName]: r.headerValue };
        if (r.auth === 'standard') headers.authorization = `Bearer ${p.token}`;
        if (r.auth === 'readonly') headers.authorization = `Bearer ${p.readonlyToken}`;
        if (r.auth === 'junk') headers.authorization = 'Bearer \u0001junk';
        if (r.auth === 'basic') headers.authorization = 'Basic ' + Buffer.from('dev@respgate.local:x').toString('base64');
        if (r.contentType) headers['content-type'] = r.contentType;
        const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
        const body = hasBody ? (Buffer.isBuffer(r.body) ? new Uint8Array(r.body) : JSON.stringify(r.body)) : undefined;
        const res = await fetch(p.url + path, {
          method: r.method,
          headers: Object.fromEntries(Object.entries(headers).filter(([, v]) => /^[\x20-\x7e]*$/.test(v))),
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status, `${r.method} ${path}`).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
    expect(statuses.size).toBeGreaterThan(2); // the requests reached different outcomes
    const ping = await fetch(`${p.url}/ping`, { headers: { authorization: `Bearer ${p.token}` } });
    expect(await ping.json()).toEqual({ result: 'PONG' });
  }, 60_000);
});
