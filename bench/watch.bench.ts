// What a WATCH transaction costs upstream, next to a plain MULTI/EXEC doing the same work.
//
//   npx tsx bench/watch.bench.ts            # 3 runs of each case, medians
//   npx tsx bench/watch.bench.ts --quick    # 1 short run (a smoke test of the script)
//
// The local platform and the proxy run in this process; a small HTTP relay between them counts what
// a hosted service bills: upstream requests (HTTP calls) and commands (each command of a /pipeline or
// /multi-exec body counts one, a path-form command one, an EVAL one). Clients are raw RESP sockets.
// A round is the classic optimistic increment of one counter key:
//   watch:  WATCH k, GET k, MULTI, SET k n+1, EXEC   (a null EXEC is retried: the round ends when it commits)
//   plain:  GET k, MULTI, SET k n+1, EXEC           (no check: under contention updates are lost)
// uncontended: one client, rounds one after another; contended: 10 clients on the same key at once.
// Latency: from the round's first command to its committed EXEC reply (retries included). The same
// rounds against a direct redis-server give the reference (no upstream: latency and attempts only).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../src/logger.js';
import { startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { startProxy } from '../src/proxy/server.js';
import { benchProxyConfig, Conn, startBenchPlatform } from './local-stack.js';

const quick = process.argv.includes('--quick');
const RUNS = quick ? 1 : 3;
const ROUNDS = quick ? 100 : 400;
const CLIENTS = 10;

/** Counts requests and billed commands on their way to the platform. */
async function startCountingRelay(target: string): Promise<{ url: string; counts: { requests: number; commands: number }; stop(): void }> {
  const counts = { requests: 0, commands: 0 };
  const to = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      counts.requests++;
      const path = req.url ?? '/';
      if (path.startsWith('/pipeline') || path.startsWith('/multi-exec')) {
        try {
          counts.commands += (JSON.parse(body.toString('utf8')) as unknown[]).length;
        } catch {
          counts.commands++;
        }
      } else counts.commands++;
      const forward = http.request(
        { host: to.hostname, port: to.port, method: req.method, path, headers: req.headers, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    stop: () => {
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const median = (xs: number[]) => percentile(xs, 0.5);

/** One committed increment; returns the attempts it took. */
async function round(c: Conn, watch: boolean): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    if (watch) await c.call('WATCH', 'counter');
    const value = Number((await c.call('GET', 'counter')).split('\r\n')[1] ?? 0) || 0;
    await c.call('MULTI');
    await c.call('SET', 'counter', String(value + 1));
    const exec = await c.call('EXEC');
    if (!exec.startsWith('*-1')) return attempt;
  }
}

interface Result {
  requestsPerRound: number;
  commandsPerRound: number;
  attemptsPerRound: number;
  /** The most attempts one round needed (a client that kept losing the race). */
  maxAttempts: number;
  p50: number;
  p99: number;
}

async function runCase(port: number, counts: { requests: number; commands: number }, watch: boolean, clients: number): Promise<Result> {
  const conns = await Promise.all(Array.from({ length: clients }, () => Conn.connect(port)));
  await conns[0].call('SET', 'counter', '0');
  const perClient = Math.ceil(ROUNDS / clients);
  const latencies: number[] = [];
  let attempts = 0;
  let maxAttempts = 0;
  const before = { ...counts };
  await Promise.all(
    conns.map(async (c) => {
      for (let i = 0; i < perClient; i++) {
        const t0 = performance.now();
        const tries = await round(c, watch);
        attempts += tries;
        maxAttempts = Math.max(maxAttempts, tries);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const rounds = perClient * clients;
  const total = Number((await conns[0].call('GET', 'counter')).split('\r\n')[1]);
  if (watch && total !== rounds) throw new Error(`WATCH lost an update: counter ${total}, rounds ${rounds}`);
  const result = {
    requestsPerRound: (counts.requests - before.requests) / rounds,
    commandsPerRound: (counts.commands - before.commands) / rounds,
    attemptsPerRound: attempts / rounds,
    maxAttempts,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
  for (const c of conns) c.close();
  return result;
}

async function main(): Promise<void> {
  const log = createLogger('warn');
  const platform = await startBenchPlatform(log);
  const relay = await startCountingRelay(platform.url);
  const proxy = await startProxy(benchProxyConfig(relay.url, platform.token), log);
  await proxy.upstreamChecked;
  console.log(`respgate WATCH bench: ${ROUNDS} committed increments per case, ${RUNS} run(s), median (${new Date().toISOString()})`);
  const cases: [string, boolean, number][] = [
    ['plain MULTI/EXEC, uncontended', false, 1],
    ['WATCH + MULTI/EXEC, uncontended', true, 1],
    [`plain MULTI/EXEC, ${CLIENTS} clients on one key`, false, CLIENTS],
    [`WATCH + MULTI/EXEC, ${CLIENTS} clients on one key`, true, CLIENTS],
  ];
  const direct = await startEmbeddedRedis({ databases: 1, password: null });
  const results = new Map<string, Result[]>();
  const none = { requests: 0, commands: 0 };
  for (let r = 0; r < RUNS; r++) {
    for (const [name, watch, clients] of cases) {
      for (const [side, port, counts] of [
        ['through the proxy', proxy.port, relay.counts],
        ['direct redis-server', direct.endpoint.port, none],
      ] as const) {
        const key = `${name}, ${side}`;
        const list = results.get(key) ?? [];
        list.push(await runCase(port, counts, watch, clients));
        results.set(key, list);
      }
    }
  }
  const m = (list: Result[], k: keyof Result) => median(list.map((x) => x[k]));
  console.log('| case | upstream requests / round | billed commands / round | attempts / round (max) | p50 ms | p99 ms |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, list] of results) {
    console.log(
      `| ${name} | ${name.endsWith('redis-server') ? '–' : m(list, 'requestsPerRound').toFixed(2)} | ${name.endsWith('redis-server') ? '–' : m(list, 'commandsPerRound').toFixed(2)} | ${m(list, 'attemptsPerRound').toFixed(2)} (${m(list, 'maxAttempts')}) | ${m(list, 'p50').toFixed(2)} | ${m(list, 'p99').toFixed(2)} |`,
    );
  }
  await proxy.stop();
  await direct.stop();
  relay.stop();
  await platform.stop();
}

await main();
