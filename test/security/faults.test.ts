// Upstream faults injected by the fault server in front of the real platform: reset mid-response,
// truncated body, slow body, 429 with Retry-After, 500/502/503, redirects, wrong content type,
// invalid resp2; also during MULTI/EXEC, blocking commands and subscriptions. Affected commands
// answer errors in bounded time, other connections go on, the proxy recovers. Then a chaos run:
// writes under random faults, and every SET that got +OK holds its value upstream.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { command, startTestPlatform } from '../helpers/platform.js';
import { RawClient, startTestProxy } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';
import { resetMidBody, startFaultServer, truncatedBody, type FaultAction, type FaultServer } from '../proxy/faults-server.js';

let platform: RunningPlatform;
let fault: FaultServer;
let proxy: RunningProxy;
const clients: RawClient[] = [];
const TIMEOUT_MS = 600;

beforeAll(async () => {
  platform = await startTestPlatform();
  fault = await startFaultServer(platform.url);
  proxy = await startTestProxy({ url: fault.url, token: platform.token }, { upstreamTimeoutMs: TIMEOUT_MS, blockPollIntervalMs: 50 });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await proxy?.stop();
  await fault?.stop();
  await platform?.stop();
});

async function connect(): Promise<RawClient> {
  const c = await RawClient.connect(proxy.port);
  clients.push(c);
  return c;
}
const str = (b: Buffer[]) => b.map((x) => x.toString('latin1'));

/** Faults applied to requests that mention `fault:`; everything else is forwarded. */
function onFaultKeys(action: FaultAction): void {
  fault.decide = (req) => (req.body.includes('fault:') || req.path.includes('fault') ? action : { kind: 'forward' });
}

const slowBody = (res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const bytes = Buffer.from('+OK\r\n');
  let i = 0;
  const t = setInterval(() => {
    if (i < bytes.length && !res.destroyed) res.write(bytes.subarray(i, ++i));
    else {
      clearInterval(t);
      res.end();
    }
  }, 400);
  res.on('close', () => clearInterval(t));
};

const cases: Array<{ name: string; action: FaultAction; reply: RegExp }> = [
  {
    name: 'reset mid-response',
    action: { kind: 'custom', forwardFirst: true, respond: resetMidBody },
    reply: /^-ERR upstream connection failed: .*; the outcome of this command is unknown\r\n$/,
  },
  {
    name: 'truncated body',
    action: { kind: 'custom', forwardFirst: true, respond: truncatedBody },
    reply: /^-ERR upstream connection failed: .*; the outcome of this command is unknown\r\n$/,
  },
  {
    name: 'slow body',
    action: { kind: 'custom', respond: slowBody },
    reply: new RegExp(`^-ERR upstream timed out after ${TIMEOUT_MS} ms; the outcome of this command is unknown\\r\\n$`),
  },
  {
    name: '429 with Retry-After',
    action: {
      kind: 'custom',
      respond: (res) => {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
        res.end('{"error":"ERR max daily request limit exceeded"}');
      },
    },
    reply:
      /^-ERR upstream rate limit reached \(HTTP 429: ERR max daily request limit exceeded\), retry after 7 s; the command was not executed\r\n$/,
  },
  {
    name: '500',
    action: { kind: 'answer', status: 500, body: '{"error":"ERR boom"}' },
    reply: /^-ERR upstream failed \(HTTP 500: ERR boom\); the outcome of this command is unknown\r\n$/,
  },
  {
    name: '502',
    action: { kind: 'answer', status: 502, contentType: 'text/html', body: '<h1>Bad Gateway</h1>' },
    reply: /^-ERR upstream failed \(HTTP 502: <h1>Bad Gateway<\/h1>\); the outcome/,
  },
  {
    name: '503',
    action: { kind: 'answer', status: 503, contentType: 'text/plain', body: 'overloaded' },
    reply: /^-ERR upstream failed \(HTTP 503: overloaded\)/,
  },
  {
    name: 'redirect 307',
    action: {
      kind: 'custom',
      respond: (res) => {
        res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' });
        res.end();
      },
    },
    reply: /^-ERR upstream refused the request \(HTTP 307\) \(check the upstream URL, --upstream-url\); the command was not executed\r\n$/,
  },
  {
    name: 'wrong content type',
    action: { kind: 'answer', status: 200, contentType: 'text/plain', body: '+OK\r\n' },
    reply: /^-ERR upstream sent a malformed answer \(HTTP 200 with content-type 'text\/plain'\)/,
  },
  {
    name: 'invalid resp2',
    action: { kind: 'answer', status: 200, contentType: 'application/octet-stream', body: '?garbage\r\n' },
    reply: /^-ERR upstream sent a malformed answer/,
  },
];

describe('faults on plain commands', () => {
  for (const { name, action, reply } of cases) {
    it(`${name}: a clear error in bounded time, another connection is served meanwhile, then recovery`, async () => {
      const c = await connect();
      const calm = await connect();
      fault.seen.length = 0;
      onFaultKeys(action);
      try {
        const started = Date.now();
        const pending = c.call(['SET', 'fault:k', name]);
        await until(() => fault.seen.some((r) => r.body.includes('fault:k')), 'the faulty call to start');
        // Unaffected: another connection's commands go through while the fault plays out.
        expect(str(await calm.call(['SET', 'calm:k', name], ['GET', 'calm:k']))).toEqual(['+OK\r\n', `$${name.length}\r\n${name}\r\n`]);
        const [r] = str(await pending);
        expect(r).toMatch(reply);
        expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
        expect(r).not.toContain(platform.token);
      } finally {
        fault.decide = () => ({ kind: 'forward' });
      }
      expect(str(await c.call(['SET', 'fault:k', 'ok'], ['GET', 'fault:k']))).toEqual(['+OK\r\n', '$2\r\nok\r\n']);
    });
  }
});

describe('429 and 503 with Retry-After: the client reads the rate limit and the wait; nothing is sent again', () => {
  const limited = (status: number, retryAfter: () => string, body = '{"error":"ERR max requests limit exceeded"}'): FaultAction => ({
    kind: 'custom',
    respond: (res) => {
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': retryAfter() });
      res.end(body);
    },
  });
  const requestsFor = (key: string) => fault.seen.filter((r) => r.body.includes(key) || decodeURIComponent(r.path).includes(key)).length;
  afterAll(() => {
    fault.decide = () => ({ kind: 'forward' });
  });

  it('429 with Retry-After in seconds: the text names both; the SET went upstream once and did nothing', async () => {
    const c = await connect();
    onFaultKeys(limited(429, () => '3'));
    expect(str(await c.call(['SET', 'fault:rl:1', 'v'], ['SET', 'fault:rl:2', 'w']))).toEqual(
      Array(2).fill(
        '-ERR upstream rate limit reached (HTTP 429: ERR max requests limit exceeded), retry after 3 s; the command was not executed\r\n',
      ),
    );
    // One request for the batch, never repeated: a write is not retried by the proxy.
    expect(requestsFor('fault:rl:1')).toBe(1);
    fault.decide = () => ({ kind: 'forward' });
    expect((await command(platform, ['MGET', 'fault:rl:1', 'fault:rl:2'])).json).toEqual({ result: [null, null] });
  });

  it('429 with Retry-After as an HTTP date: the seconds left and the date', async () => {
    const c = await connect();
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 30_000);
    onFaultKeys(limited(429, () => at.toUTCString()));
    const [reply] = str(await c.call(['INCR', 'fault:rl:date']));
    const match =
      /^-ERR upstream rate limit reached \(HTTP 429: ERR max requests limit exceeded\), retry after (\d+) s \(at (.*)\); the command was not executed\r\n$/.exec(
        reply,
      );
    expect(match, reply).not.toBeNull();
    expect(Number(match![1])).toBeGreaterThanOrEqual(28);
    expect(Number(match![1])).toBeLessThanOrEqual(31);
    expect(match![2]).toBe(at.toUTCString());
  });

  it('an unreadable Retry-After is left out; a 429 without one still names the rate limit', async () => {
    const c = await connect();
    onFaultKeys(limited(429, () => 'soon', '{"error":"ERR slow down"}'));
    expect(str(await c.call(['GET', 'fault:rl:bad']))).toEqual([
      '-ERR upstream rate limit reached (HTTP 429: ERR slow down); the command was not executed\r\n',
    ]);
  });

  it('503 with Retry-After reads the same way (its outcome stays unknown: a 503 may come from behind the command)', async () => {
    const c = await connect();
    onFaultKeys(limited(503, () => '120', 'overloaded'));
    expect(str(await c.call(['SET', 'fault:busy', 'v']))).toEqual([
      '-ERR upstream failed (HTTP 503: overloaded), retry after 120 s; the outcome of this command is unknown\r\n',
    ]);
    expect(requestsFor('fault:busy')).toBe(1);
  });

  it('MULTI/EXEC answered 429: EXEC gives the text for the transaction, sent once', async () => {
    const c = await connect();
    onFaultKeys(limited(429, () => '5'));
    const replies = str(await c.call(['MULTI'], ['SET', 'fault:rl:tx', '1'], ['INCR', 'fault:rl:n'], ['EXEC']));
    expect(replies[3]).toBe(
      '-ERR upstream rate limit reached (HTTP 429: ERR max requests limit exceeded), retry after 5 s; the transaction was not executed\r\n',
    );
    expect(requestsFor('fault:rl:tx')).toBe(1);
  });

  it('SUBSCRIBE answered 429: the same text for the event stream; the connection goes on', async () => {
    const c = await connect();
    onFaultKeys(limited(429, () => '2'));
    // PING in the same write: the refused SUBSCRIBE left no subscription, so it is a plain PING.
    expect(str(await c.call(['SUBSCRIBE', 'fault:rl:ch'], ['PING']))).toEqual([
      '-ERR upstream rate limit reached (HTTP 429: ERR max requests limit exceeded), retry after 2 s; the event stream was not opened\r\n',
      '+PONG\r\n',
    ]);
  });
});

describe('faults during MULTI/EXEC, blocking commands and subscriptions', () => {
  it('MULTI/EXEC: EXEC answers the error; the connection goes on', async () => {
    const c = await connect();
    onFaultKeys({ kind: 'custom', forwardFirst: true, respond: resetMidBody });
    try {
      const replies = str(await c.call(['MULTI'], ['SET', 'fault:tx', '1'], ['INCR', 'fault:n'], ['EXEC'], ['PING']));
      expect(replies.slice(0, 3)).toEqual(['+OK\r\n', '+QUEUED\r\n', '+QUEUED\r\n']);
      expect(replies[3]).toMatch(/^-ERR upstream connection failed: .*the outcome of the transaction is unknown\r\n$/);
      expect(replies[4]).toBe('+PONG\r\n');
    } finally {
      fault.decide = () => ({ kind: 'forward' });
    }
    expect(str(await c.call(['MULTI'], ['SET', 'fault:tx', '2'], ['EXEC']))[2]).toBe('*1\r\n+OK\r\n');
  });

  it('a blocking command whose polls fail answers an error in bounded time; then BLPOP works again', async () => {
    const c = await connect();
    onFaultKeys({ kind: 'answer', status: 503, contentType: 'text/plain', body: 'down' });
    try {
      const started = Date.now();
      const [r] = str(await c.call(['BLPOP', 'fault:list', '0']));
      expect(r).toMatch(/^-ERR upstream failed \(HTTP 503: down\)/);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      fault.decide = () => ({ kind: 'forward' });
    }
    expect((await command(platform, ['RPUSH', 'fault:list', 'item'])).json).toEqual({ result: 1 });
    expect(str(await c.call(['BLPOP', 'fault:list', '0']))).toEqual(['*2\r\n$10\r\nfault:list\r\n$4\r\nitem\r\n']);
  });

  it('a subscription the upstream refuses (503) gets an error in bounded time; the connection still answers', async () => {
    const c = await connect();
    onFaultKeys({ kind: 'answer', status: 503, contentType: 'text/plain', body: 'no streams' });
    try {
      const started = Date.now();
      c.write('*2\r\n$9\r\nSUBSCRIBE\r\n$8\r\nfault:ch\r\n');
      const [first] = str(await c.replies(1, 5000));
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3000);
      // Either Redis' subscribe confirmation then the stream's failure, or the failure at once.
      const all = first + (first.startsWith('*3') ? str(await c.replies(1, 5000))[0] : '');
      expect(all).toMatch(/-ERR[^\r\n]*503|closed/i);
    } catch (err) {
      // The proxy may close a connection whose stream the upstream refuses: that is a bounded answer too.
      expect(c.closed).toBe(true);
      void err;
    } finally {
      fault.decide = () => ({ kind: 'forward' });
    }
    const d = await connect();
    expect(str(await d.call(['PING']))).toEqual(['+PONG\r\n']);
  });
});

describe('chaos: writes under random upstream faults', () => {
  it('every SET that got +OK holds its value upstream; every "not executed" SET did nothing', async () => {
    const rnd = mulberry32(12);
    const actions: FaultAction[] = [
      { kind: 'forward' },
      { kind: 'forward' },
      { kind: 'forward' },
      { kind: 'forward-then-drop' },
      { kind: 'drop' },
      { kind: 'answer', status: 500, body: '{"error":"ERR chaos"}' },
      { kind: 'answer', status: 429, body: '{"error":"ERR too many requests"}' },
      { kind: 'custom', forwardFirst: true, respond: resetMidBody },
      { kind: 'custom', forwardFirst: true, respond: truncatedBody },
    ];
    fault.decide = () => actions[Math.floor(rnd() * actions.length)];
    const outcomes = new Map<string, { value: string; reply: string }>();
    try {
      const conns = await Promise.all(Array.from({ length: 8 }, () => connect()));
      await Promise.all(
        conns.map(async (c, ci) => {
          for (let round = 0; round < 10; round++) {
            const cmds = Array.from({ length: 5 }, (_, i) => ['SET', `chaos:${ci}:${round}:${i}`, `v${ci}-${round}-${i}`]);
            const replies = str(await c.call(...cmds));
            cmds.forEach((cmd, i) => outcomes.set(cmd[1], { value: cmd[2], reply: replies[i] }));
          }
        }),
      );
    } finally {
      fault.decide = () => ({ kind: 'forward' });
    }
    const keys = [...outcomes.keys()];
    const values = (await command(platform, ['MGET', ...keys])).json.result as Array<string | null>;
    let acknowledged = 0;
    let notExecuted = 0;
    keys.forEach((k, i) => {
      const o = outcomes.get(k)!;
      if (o.reply === '+OK\r\n') {
        acknowledged++;
        expect(values[i], k).toBe(o.value);
      } else {
        expect(o.reply).toMatch(/^-ERR /);
        if (o.reply.includes('was not executed')) {
          notExecuted++;
          expect(values[i], k).toBeNull();
        }
      }
    });
    expect(outcomes.size).toBe(400);
    // Both outcomes must be seen in numbers. How many commands share one upstream call (and so one
    // fault) depends on timing, so the counts vary from run to run: 50 acknowledged was seen once.
    expect(acknowledged).toBeGreaterThan(25);
    expect(notExecuted).toBeGreaterThan(10);
  }, 30_000);
});

function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
