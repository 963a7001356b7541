// Upstream faults: the platform stopped mid-run and started again, an upstream that never answers,
// HTTP errors and malformed answers, a wrong token, a connection dropped after the command ran.
// Every affected command gets a clear -ERR in bounded time, the proxy keeps serving (PING, other
// connections), replies stay in order, and it recovers by itself. Faults a real platform cannot
// produce come from a small fault-injecting HTTP server in front of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { ProxyConfig } from '../../src/config.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { encodeCommands } from '../../src/resp/request-writer.js';
import { startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';
import { restartablePort } from '../helpers/ports.js';
import { deferred, until } from '../helpers/wait.js';
import { startFaultServer, type FaultServer } from './faults-server.js';

let platform: RunningPlatform;
let fault: FaultServer;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  platform = await startTestPlatform();
  fault = await startFaultServer(platform.url);
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await fault?.stop();
  await platform?.stop();
});

async function proxyTo(upstream: { url: string; token: string }, overrides: Partial<ProxyConfig> = {}): Promise<RunningProxy> {
  // resp2 mode: a JSON answer is a fault here (test/proxy/json-upstream.test.ts covers the JSON modes).
  const proxy = await startTestProxy(upstream, { upstreamFormat: 'resp2', ...overrides });
  cleanups.push(() => proxy.stop());
  return proxy;
}

async function connect(proxy: RunningProxy): Promise<RawClient> {
  const c = await RawClient.connect(proxy.port);
  cleanups.push(async () => c.close());
  return c;
}

const text = (r: Buffer) => r.toString('latin1');
const texts = (rs: Buffer[]) => rs.map(text);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends commands in one write; returns the replies and how long they took. */
async function timed(c: RawClient, commands: string[][]): Promise<{ replies: string[]; elapsed: number }> {
  const started = Date.now();
  const replies = await c.call(...commands).then(texts);
  return { replies, elapsed: Date.now() - started };
}

const UNKNOWN = 'the outcome of this command is unknown';
const NOT_EXECUTED = 'the command was not executed';

describe('upstream stopped mid-run, then started again on the same port', () => {
  it('every command gets an -ERR in bounded time, PING keeps answering, and commands work again without restarting the proxy', async () => {
    const TIMEOUT = 1000;
    const MARGIN = 2000;
    // Restarted on the same port: one no other test's port-0 bind can take meanwhile.
    const port = await restartablePort();
    let own = await startTestPlatform({ httpPort: port });
    cleanups.push(() => own.stop());
    const proxy = await proxyTo(own, { upstreamTimeoutMs: TIMEOUT });
    const clients = await Promise.all(Array.from({ length: 4 }, () => connect(proxy)));

    let phase: 'up' | 'down' | 'restarted' = 'up';
    let stop = false;
    const errorsSeen: string[] = [];
    let slowest = 0;
    let okAfterRestart = 0;
    let roundsUp = 0;
    const loops = clients.map(async (c, i) => {
      let rounds = 0;
      while (!stop) {
        const at = phase;
        const started = Date.now();
        const replies = texts(await c.call(['INCR', `fault:run:${i}`], ['PING'], ['GET', `fault:run:${i}`], ['ECHO', `r${rounds}`]));
        slowest = Math.max(slowest, Date.now() - started);
        // Local commands answer whatever the upstream does, in their place.
        expect(replies[1]).toBe('+PONG\r\n');
        expect(replies[3]).toBe(`$${`r${rounds}`.length}\r\nr${rounds}\r\n`);
        for (const r of [replies[0], replies[2]]) {
          if (r.startsWith('-')) {
            expect(r).toMatch(
              /^-ERR upstream (unavailable|connection failed|timed out)[^\r\n]*; (the outcome of this command is unknown|the command was not executed)\r\n$/,
            );
            expect(r).not.toContain(own.token);
            errorsSeen.push(r);
          } else if (at === 'restarted' && phase === 'restarted') {
            okAfterRestart++;
          }
        }
        rounds++;
        if (at === 'up' && phase === 'up') roundsUp++;
        await sleep(5);
      }
      return rounds;
    });

    await until(() => roundsUp >= 8, 'rounds while the upstream is up');
    const token = own.token;
    phase = 'down';
    await own.stop();
    await until(() => errorsSeen.length >= 8, 'errors while the upstream is down'); // commands keep failing

    // Still serving: every connection open, PING answers on a new one.
    expect(proxy.connections()).toBe(4);
    const fresh = await connect(proxy);
    expect(texts(await fresh.call(['PING']))).toEqual(['+PONG\r\n']);
    expect(texts(await fresh.call(['GET', 'x']))[0]).toMatch(
      /^-ERR upstream unavailable: connect ECONNREFUSED 127\.0\.0\.1:\d+; the command was not executed\r\n$/,
    );

    own = await startTestPlatform({ httpPort: port, token });
    phase = 'restarted';
    await until(() => okAfterRestart >= 20, 'successes after the restart');
    stop = true;
    const rounds = await Promise.all(loops);
    expect(rounds.every((n) => n > 5)).toBe(true);
    expect(okAfterRestart).toBeGreaterThanOrEqual(20);
    expect(slowest).toBeLessThan(TIMEOUT + MARGIN);

    // The new platform starts empty; counters restart and are exact.
    const [incr, get] = texts(await fresh.call(['INCR', 'fault:after'], ['GET', 'fault:after']));
    expect([incr, get]).toEqual([':1\r\n', '$1\r\n1\r\n']);
  }, 60_000);
});

describe('an upstream that never answers', () => {
  it('errors within upstreamTimeoutMs saying the outcome is unknown; other connections are not held up; recovery', async () => {
    fault.decide = () => ({ kind: 'hang' });
    const proxy = await proxyTo({ url: fault.url, token: platform.token }, { upstreamTimeoutMs: 500 });
    const c = await connect(proxy);
    const other = await connect(proxy);

    const seenBefore = fault.seen.length;
    const pending = timed(c, [['SET', 'slow:a', '1'], ['PING'], ['GET', 'slow:a'], ['INCR', 'slow:n']]);
    let answered = false;
    void pending.then(() => (answered = true));
    await until(() => fault.seen.length > seenBefore, 'the hanging call at the upstream');
    // Another connection is served while that call hangs.
    expect(texts(await other.call(['PING'], ['ECHO', 'meanwhile']))).toEqual(['+PONG\r\n', '$9\r\nmeanwhile\r\n']);
    expect(answered).toBe(false);

    const { replies, elapsed } = await pending;
    const timedOut = `-ERR upstream timed out after 500 ms; ${UNKNOWN}\r\n`;
    expect(replies).toEqual([timedOut, '+PONG\r\n', timedOut, timedOut]);
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(500 + 1500);

    // Many connections at once, more calls than the pool has connections: all bounded.
    const many = await Promise.all(Array.from({ length: 30 }, () => connect(proxy)));
    const started = Date.now();
    const all = await Promise.all(many.map((m, i) => m.call(['GET', `slow:${i}`])));
    expect(
      all.every(([r]) =>
        /^-ERR upstream timed out after 500 ms; (the outcome of this command is unknown|the command was not executed)\r\n$/.test(text(r)),
      ),
    ).toBe(true);
    expect(Date.now() - started).toBeLessThan(3 * 500 + 1500);

    // The upstream recovers: the same connection works again.
    fault.decide = () => ({ kind: 'forward' });
    expect(texts(await c.call(['SET', 'slow:b', 'ok'], ['GET', 'slow:b']))).toEqual(['+OK\r\n', '$2\r\nok\r\n']);
  }, 30_000);
});

describe('HTTP errors and malformed answers', () => {
  let proxy: RunningProxy;
  let c: RawClient;

  beforeAll(async () => {
    proxy = await proxyTo({ url: fault.url, token: platform.token }, { upstreamTimeoutMs: 2000 });
    c = await connect(proxy);
  });

  const cases: Array<{
    name: string;
    answer: { status: number; contentType?: string; body: string };
    commands: number;
    reply: string | RegExp;
  }> = [
    {
      name: '500 with a JSON error',
      answer: { status: 500, body: '{"error":"ERR boom"}' },
      commands: 2,
      reply: `-ERR upstream failed (HTTP 500: ERR boom); ${UNKNOWN}\r\n`,
    },
    {
      name: '500 with an HTML page',
      answer: { status: 500, contentType: 'text/html', body: '<html><body>Internal\nServer Error</body></html>' },
      commands: 1,
      reply: `-ERR upstream failed (HTTP 500: <html><body>Internal Server Error</body></html>); ${UNKNOWN}\r\n`,
    },
    {
      name: '503 with an empty body',
      answer: { status: 503, contentType: 'text/plain', body: '' },
      commands: 3,
      reply: `-ERR upstream failed (HTTP 503); ${UNKNOWN}\r\n`,
    },
    {
      name: '404 (wrong URL)',
      answer: { status: 404, contentType: 'text/plain', body: 'Not Found' },
      commands: 1,
      reply: `-ERR upstream refused the request (HTTP 404: Not Found) (check the upstream URL, --upstream-url); ${NOT_EXECUTED}\r\n`,
    },
    {
      name: '200 resp2 with fewer replies than commands',
      answer: { status: 200, contentType: 'application/octet-stream', body: '+OK\r\n' },
      commands: 2,
      reply: `-ERR upstream sent a malformed answer (1 replies for 2 commands); ${UNKNOWN}\r\n`,
    },
    {
      name: '200 resp2 cut in the middle of a reply',
      answer: { status: 200, contentType: 'application/octet-stream', body: '+OK\r\n$10\r\nabc' },
      commands: 2,
      reply: `-ERR upstream sent a malformed answer (1 complete replies then an incomplete one, for 2 commands); ${UNKNOWN}\r\n`,
    },
    {
      name: '200 resp2 with more replies than commands',
      answer: { status: 200, contentType: 'application/octet-stream', body: '+OK\r\n+OK\r\n:1\r\n' },
      commands: 2,
      reply: /^-ERR upstream sent a malformed answer \([^\r\n]*\); the outcome of this command is unknown\r\n$/,
    },
    {
      name: '200 with garbage bytes',
      answer: { status: 200, contentType: 'application/octet-stream', body: 'hello world' },
      commands: 1,
      reply: /^-ERR upstream sent a malformed answer \([^\r\n]*\); the outcome of this command is unknown\r\n$/,
    },
    {
      name: '200 with JSON instead of resp2',
      answer: { status: 200, body: '[{"result":"OK"}]' },
      commands: 1,
      reply: `-ERR upstream sent a malformed answer (HTTP 200 with JSON instead of resp2 bytes: the upstream ignores Upstash-Response-Format: resp2 (start the proxy with --upstream-format auto or json to convert JSON answers)); ${UNKNOWN}\r\n`,
    },
    {
      name: '200 with an HTML page',
      answer: { status: 200, contentType: 'text/html', body: '<html></html>' },
      commands: 1,
      reply: `-ERR upstream sent a malformed answer (HTTP 200 with content-type 'text/html'); ${UNKNOWN}\r\n`,
    },
  ];

  for (const { name, answer, commands, reply } of cases) {
    it(`${name}: a clear -ERR per command, then recovery`, async () => {
      fault.decide = () => ({ kind: 'answer', ...answer });
      const sent = Array.from({ length: commands }, (_, i) => ['SET', `http:${i}`, 'x']);
      // A local command in the middle keeps its own reply and place.
      const replies = texts(await c.call(...sent.slice(0, 1), ['PING'], ...sent.slice(1)));
      expect(replies[1]).toBe('+PONG\r\n');
      const errors = [replies[0], ...replies.slice(2)];
      expect(errors.length).toBe(commands);
      for (const r of errors) {
        if (typeof reply === 'string') expect(r).toBe(reply);
        else expect(r).toMatch(reply);
      }
      fault.decide = () => ({ kind: 'forward' });
      expect(texts(await c.call(['SET', 'http:ok', name], ['GET', 'http:ok']))).toEqual(['+OK\r\n', `$${name.length}\r\n${name}\r\n`]);
    });
  }

  it('a wrong token (the real platform answers 401): a clear -ERR that does not show the token', async () => {
    const wrongToken = 'not-the-token-0123456789';
    const bad = await proxyTo({ url: platform.url, token: wrongToken }, { upstreamTimeoutMs: 2000 });
    const b = await connect(bad);
    const replies = texts(await b.call(['SET', 'auth:a', '1'], ['PING'], ['GET', 'auth:a']));
    const auth = '-ERR upstream authentication failed (HTTP 401): check the upstream token (--upstream-token)\r\n';
    expect(replies).toEqual([auth, '+PONG\r\n', auth]);
    expect(replies.join('')).not.toContain(wrongToken);
    expect(replies.join('')).not.toContain(platform.token);
  });

  it('nothing listening on the upstream port: -ERR at once, the command was not executed', async () => {
    // A port no port-0 bind of another test can take while this one counts on it being closed.
    const port = await restartablePort();
    const down = await proxyTo({ url: `http://127.0.0.1:${port}`, token: platform.token }, { upstreamTimeoutMs: 2000 });
    const d = await connect(down);
    // The text says ECONNREFUSED and "not executed": the error came from the refused connection, not a timeout.
    const replies = texts(await d.call(['SET', 'refused', '1'], ['ECHO', 'still here']));
    expect(replies).toEqual([
      `-ERR upstream unavailable: connect ECONNREFUSED 127.0.0.1:${port}; ${NOT_EXECUTED}\r\n`,
      '$10\r\nstill here\r\n',
    ]);
  });
});

describe("failures in the middle of one client's pipeline", () => {
  let proxy: RunningProxy;

  beforeAll(async () => {
    proxy = await proxyTo({ url: fault.url, token: platform.token }, { upstreamTimeoutMs: 2000 });
  });

  it('commands pipelined after a failed call still get their own replies, in order', async () => {
    const c = await connect(proxy);
    fault.decide = () => ({ kind: 'forward' });
    await c.call(['DEL', 'mid:a', 'mid:c']);
    // Calls whose body names a key `mid:fail` fail, when the test opens their gate: so it knows which
    // call is in flight while it sends the next commands.
    const gates = [deferred(), deferred()];
    let failing = 0;
    fault.decide = (req) =>
      req.body.includes('mid:fail')
        ? { kind: 'answer', status: 500, body: '{"error":"ERR injected"}', after: gates[failing++].promise }
        : { kind: 'forward' };
    const failed = `-ERR upstream failed (HTTP 500: ERR injected); ${UNKNOWN}\r\n`;
    const seen = () => fault.seen.filter((r) => r.body.includes('mid:')).length;
    const before = seen();

    // Call 1 fails with write 2 queued behind it; write 2 goes next.
    c.write(
      encodeCommands([
        ['SET', 'mid:a', '1'],
        ['GET', 'mid:fail'],
      ]),
    );
    await until(() => seen() === before + 1, 'call 1 at the upstream');
    c.write(encodeCommands([['GET', 'mid:a'], ['INCR', 'mid:c'], ['PING'], ['ECHO', 'z']]));
    gates[0].resolve();
    const early = texts(await c.replies(6, 10_000));
    // Write 3 is one call and fails whole, with write 4 queued behind it; write 4 goes last.
    c.write(
      encodeCommands([
        ['INCR', 'mid:c'],
        ['GET', 'mid:fail'],
        ['INCR', 'mid:c'],
      ]),
    );
    await until(() => seen() === before + 3, 'call 3 at the upstream');
    c.write(
      encodeCommands([
        ['INCR', 'mid:c'],
        ['GET', 'mid:c'],
      ]),
    );
    gates[1].resolve();
    const replies = [...early, ...texts(await c.replies(5, 10_000))];
    // Commands that shared a call with `mid:fail` failed with it (the upstream rejected the call).
    // The SET failed in the first call, so GET mid:a finds nothing.
    expect(replies.slice(0, 6)).toEqual([failed, failed, '$-1\r\n', ':1\r\n', '+PONG\r\n', '$1\r\nz\r\n']);
    // The third write was one call, which failed whole; the last one ran after it.
    expect(replies.slice(6, 9)).toEqual([failed, failed, failed]);
    expect(replies.slice(9)).toEqual([':2\r\n', '$1\r\n2\r\n']);
  });

  it('a connection dropped after the upstream ran the command: -ERR outcome unknown, and it is not retried', async () => {
    const c = await connect(proxy);
    fault.decide = () => ({ kind: 'forward' });
    await c.call(['DEL', 'drop:n']);
    const before = fault.seen.length;
    fault.decide = () => ({ kind: 'forward-then-drop' });
    const [reply] = texts(await c.call(['INCR', 'drop:n']));
    expect(reply).toMatch(/^-ERR upstream connection failed: [^\r\n]+; the outcome of this command is unknown\r\n$/);
    expect(fault.seen.length - before).toBe(1); // sent once, never retried
    fault.decide = () => ({ kind: 'forward' });
    // It did run: the write was not lost, and not doubled.
    expect(texts(await c.call(['GET', 'drop:n']))).toEqual(['$1\r\n1\r\n']);

    // Dropped before the upstream ran it: still reported as unknown (the proxy cannot tell).
    fault.decide = () => ({ kind: 'drop' });
    const [dropped] = texts(await c.call(['INCR', 'drop:n']));
    expect(dropped).toMatch(/^-ERR upstream connection failed: [^\r\n]+; the outcome of this command is unknown\r\n$/);
    fault.decide = () => ({ kind: 'forward' });
    expect(texts(await c.call(['GET', 'drop:n']))).toEqual(['$1\r\n1\r\n']);
  });
});
