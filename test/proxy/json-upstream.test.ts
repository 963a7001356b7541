// An upstream that answers JSON (issue 11, point 3). A small HTTP double in front of the real local
// platform drops `Upstash-Response-Format: resp2` from every request, as an upstream without resp2
// would ignore it, so the platform answers JSON. The proxy, in `--upstream-format json` and `auto`,
// must turn those JSON answers back into Redis' bytes by reply type: every scenario of the
// differential suite (test/proxy/differential-cases.ts) runs against a direct redis-server, one by
// one and as a pipelined burst, in RESP2 and (json mode) in RESP3 after HELLO 3 with the scenarios of
// resp3-cases.ts too. `resp2` mode against the same double fails with a clear error.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/platform/redis/embedded-server.js';
import type { RunningProxy } from '../../src/proxy/server.js';
import { tracked } from '../helpers/cleanup.js';
import { startTestPlatform } from '../helpers/platform.js';
import { RawClient, replayOnBoth, RESET_COMMANDS, startTestProxy, type DifferentialSide } from '../helpers/stack.js';
import { comparable, mismatch, printable } from './differential-compare.js';
import { KNOWN_DIFFERENCES, commandCount, judgeBug, scenarios, stepOf, type Arg, type Scenario, type Step } from './differential-cases.js';
import { allScenarios, run3, type Override } from './resp3-run.js';

/**
 * What JSON cannot tell (docs/proxy.md, "Upstream reply format"): a script's status reply other than
 * OK is a string like any other, so where the reply type is `any` it comes back as a bulk string.
 * By the script text: the proxy's pinned reply.
 */
const JSON_MODE_DIFFERENCES: Record<string, string> = {
  "return redis.status_reply('FINE')": '$4\r\nFINE\r\n',
  "return {1, {err='inner'}, {ok='fine'}}": '*3\r\n:1\r\n-inner\r\n$4\r\nfine\r\n',
  "return redis.status_reply('a\\r\\nb')": '$4\r\na  b\r\n',
  "return redis.status_reply('')": '$0\r\n\r\n',
  "return redis.call('PING')": '$4\r\nPONG\r\n',
};

/** An upstream without resp2: forwards everything to the platform, minus the resp2 request header. */
interface JsonOnlyUpstream {
  url: string;
  /** Requests that asked for resp2 / for base64 JSON, and answers that came back as JSON. */
  counts: { askedResp2: number; askedBase64: number; jsonAnswers: number };
  stop(): Promise<void>;
}

async function startJsonOnlyUpstream(platform: RunningPlatform): Promise<JsonOnlyUpstream> {
  const counts = { askedResp2: 0, askedBase64: 0, jsonAnswers: 0 };
  const target = new URL(platform.url);
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers };
    if (headers['upstash-response-format'] === 'resp2') counts.askedResp2++;
    if (headers['upstash-encoding'] === 'base64') counts.askedBase64++;
    delete headers['upstash-response-format'];
    // node:http keeps the path as sent (fetch would normalize `.` and `..` segments of the path form).
    const forward = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      if (String(answer.headers['content-type'] ?? '').includes('json')) counts.jsonAnswers++;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res); // streamed as it comes: pub/sub and MONITOR answers are event streams
    });
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return tracked({
    url: `http://127.0.0.1:${port}`,
    counts,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

let platform: RunningPlatform;
let upstream: JsonOnlyUpstream;
let oracle: EmbeddedRedis;
const proxies: Record<'json' | 'auto' | 'resp2', RunningProxy> = {} as never;
const compared: Record<string, { commands: number; same: number; known: number; json: number }> = {};

beforeAll(async () => {
  platform = await startTestPlatform();
  upstream = await startJsonOnlyUpstream(platform);
  oracle = tracked(await startEmbeddedRedis({ databases: 1, password: null }));
  for (const format of ['json', 'auto', 'resp2'] as const) {
    proxies[format] = await startTestProxy({ url: upstream.url, token: platform.token }, { upstreamFormat: format });
  }
});

afterAll(async () => {
  console.log(`JSON upstream differential: ${JSON.stringify(compared)}`);
  for (const p of Object.values(proxies)) await p?.stop();
  await upstream?.stop();
  await platform?.stop();
  await oracle?.stop();
});

async function connect(proxy: RunningProxy): Promise<DifferentialSide> {
  const [o, p] = await Promise.all([RawClient.connect(oracle.endpoint.port), RawClient.connect(proxy.port)]);
  return { oracle: o, proxy: p };
}

async function reset(proxy: RunningProxy): Promise<void> {
  const side = await connect(proxy);
  try {
    const [o, p] = await Promise.all([side.oracle.call(...RESET_COMMANDS), side.proxy.call(...RESET_COMMANDS)]);
    for (let i = 0; i < RESET_COMMANDS.length; i++) expect(printable(p[i])).toBe(printable(o[i]));
  } finally {
    side.oracle.close();
    side.proxy.close();
  }
}

/** As differential.test.ts judges a step: byte for byte (or its normalizer), known differences pinned. */
function judge(where: string, step: Step, o: Buffer, p: Buffer, count: { same: number; known: number; json: number }): string | undefined {
  if (step.bug !== undefined) return judgeBug(where, step.bug, o, p);
  const script = step.args[0].toString().toUpperCase() === 'EVAL' ? JSON_MODE_DIFFERENCES[step.args[1].toString()] : undefined;
  if (script !== undefined) {
    if (p.toString('latin1') !== script || o.equals(p))
      return `${where}: the JSON-mode difference no longer holds: proxy ${printable(p)}, oracle ${printable(o)}`;
    count.json++;
    return undefined;
  }
  if (step.known !== undefined) {
    const known = KNOWN_DIFFERENCES[step.known];
    const expected = typeof known.proxy === 'string' ? known.proxy : known.proxy(step.args[0].toString().toLowerCase());
    if (p.toString('latin1') !== expected) return `${where}: known difference "${step.known}" does not hold: ${printable(p)}`;
    count.known++;
    return undefined;
  }
  const compare = step.compare ?? 'exact';
  const failure = mismatch(where, o, p, compare, (reply) => comparable(reply, compare));
  if (!failure) count.same++;
  return failure;
}

async function runScenario(format: 'json' | 'auto', scenario: Scenario, burst: boolean): Promise<void> {
  const proxy = proxies[format];
  await reset(proxy);
  const side = await connect(proxy);
  const count = (compared[format] ??= { commands: 0, same: 0, known: 0, json: 0 });
  try {
    const steps = scenario.commands.map(stepOf);
    const [o, p] = await replayOnBoth(
      side,
      steps.map((s) => s.args),
      burst,
    );
    const failures: string[] = [];
    for (let i = 0; i < steps.length; i++) {
      count.commands++;
      const failure = judge(
        `${format} "${scenario.name}" ${burst ? 'burst' : 'one by one'} #${i + 1} ${steps[i].args.map((a) => printable(a, 60)).join(' ')}`,
        steps[i],
        o[i],
        p[i],
        count,
      );
      if (failure) failures.push(failure);
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
  } finally {
    side.oracle.close();
    side.proxy.close();
  }
}

describe('an upstream that answers JSON only', () => {
  it('resp2 mode: every command gets an error naming the problem and the flag', async () => {
    const c = await RawClient.connect(proxies.resp2.port);
    try {
      const [reply] = await c.call(['SET', 'k', 'v']);
      expect(reply.toString()).toMatch(/^-ERR upstream .*JSON instead of resp2 bytes.*--upstream-format auto or json/);
    } finally {
      c.close();
    }
  });

  it('auto mode: the first JSON answer is converted, and JSON with base64 is asked from then on', async () => {
    // The proxy's first upstream request is its check at start (PING, asking resp2): the upstream's JSON
    // answer to it is converted (the check sees PONG), and every later request asks JSON with base64.
    expect(await proxies.auto.upstreamChecked).toBe(true);
    const before = { ...upstream.counts };
    const c = await RawClient.connect(proxies.auto.port);
    try {
      expect((await c.call(['SET', 'k', 'v'])).map(String)).toEqual(['+OK\r\n']);
      expect((await c.call(['GET', 'k'], ['SET', 'b', Buffer.from([0xff, 0x00])], ['GET', 'b'])).map((r) => r.toString('latin1'))).toEqual([
        '$1\r\nv\r\n',
        '+OK\r\n',
        '$2\r\n\xff\x00\r\n',
      ]);
    } finally {
      c.close();
    }
    expect(upstream.counts.askedResp2 - before.askedResp2).toBe(0);
    expect(upstream.counts.askedBase64 - before.askedBase64).toBeGreaterThanOrEqual(2);
  });

  it('a watched transaction and a binary transaction (each one EVAL) give Redis’ bytes in json mode', async () => {
    const key = Buffer.from([0x00, 0xff, 0x0d, 0x0a]);
    const commands: Arg[][] = [
      ['SET', 'k', '1'],
      ['WATCH', 'k', key],
      ['MULTI'],
      ['SET', key, Buffer.from([0xfe, 0x80])],
      ['GET', key],
      ['TYPE', key],
      ['LPOP', 'nolist', '2'],
      ['INCR', 'k'],
      ['HGET', 'k', 'f'],
      ['ZADD', 'z', '2.5', 'm'],
      ['ZRANGE', 'z', '0', '-1', 'WITHSCORES'],
      ['EXEC'],
      ['MULTI'],
      ['RPUSH', 'l', Buffer.from([0xc3, 0x28])],
      ['LRANGE', 'l', '0', '-1'],
      ['EXEC'],
    ];
    for (const protocol of [2, 3]) {
      const side = await connect(proxies.json);
      try {
        await Promise.all([side.oracle.call(['FLUSHALL']), side.proxy.call(['FLUSHALL'])]);
        if (protocol === 3) await Promise.all([side.oracle.call(['HELLO', '3']), side.proxy.call(['HELLO', '3'])]);
        const [o, p] = await Promise.all([side.oracle.call(...commands), side.proxy.call(...commands)]);
        expect(p.map((r) => printable(r))).toEqual(o.map((r) => printable(r)));
      } finally {
        side.oracle.close();
        side.proxy.close();
      }
    }
  });

  it(`the differential suite has its ${commandCount()} commands`, () => expect(commandCount()).toBeGreaterThanOrEqual(300));

  for (const format of ['json', 'auto'] as const) {
    describe(`--upstream-format ${format}: the differential scenarios, byte for byte against redis-server`, () => {
      for (const scenario of scenarios) {
        it(`${scenario.name} — one by one`, () => runScenario(format, scenario, false));
        it(`${scenario.name} — pipelined burst`, () => runScenario(format, scenario, true));
      }
    });
  }

  describe('--upstream-format json: the RESP3 scenarios after HELLO 3, byte for byte against redis-server', () => {
    const ports = () => ({ oracle: oracle.endpoint.port, proxy: proxies.json.port });
    /** The same losses as in RESP2, with the same bytes (a bulk string is a bulk string in RESP3). */
    const jsonLosses: Override = (step, _protocol, o, p) => {
      const pinned = step.args[0].toString().toUpperCase() === 'EVAL' ? JSON_MODE_DIFFERENCES[step.args[1].toString()] : undefined;
      if (pinned === undefined) return undefined;
      return p.toString('latin1') === pinned && !o.equals(p)
        ? null
        : `the JSON-mode difference no longer holds: proxy ${printable(p)}, oracle ${printable(o)}`;
    };
    for (const scenario of allScenarios) {
      it(`${scenario.name} — one by one`, () => run3(ports(), scenario, false, jsonLosses), 60_000);
      it(`${scenario.name} — pipelined burst`, () => run3(ports(), scenario, true, jsonLosses), 60_000);
    }
  });
});
