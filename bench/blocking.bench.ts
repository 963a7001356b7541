// What idle blocking workers cost upstream, and how fast they pick up a job.
//
//   npx tsx bench/blocking.bench.ts              # 3 runs of each case, medians
//   npx tsx bench/blocking.bench.ts --quick      # 1 short run (a smoke test of the script)
//   npx tsx bench/blocking.bench.ts --interval 1000   # another --block-poll-interval (ms)
//
// The local platform (its redis-servers) and two proxies run in this process; workers and producers
// are raw RESP sockets. Upstream requests are counted by the proxy (INFO total_upstream_calls:
// every /pipeline call, polls included, is one request billed by a hosted service).
//   idle:   100 workers blocked in `BRPOP <keys> 0` on one queue (one key, then three keys),
//           upstream requests per second over a window after the backoff reached its cap;
//   pickup: 10 workers in a BRPOP loop; a producer LPUSHes a timestamped job every 20-60 ms through
//           the same proxy, then through a second proxy (another process would see the same):
//           latency from before the LPUSH to the worker holding the job.
import { PROXY_DEFAULTS } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startProxy, type RunningProxy } from '../src/proxy/server.js';
import { benchProxyConfig, Conn, startBenchPlatform } from './local-stack.js';

const quick = process.argv.includes('--quick');
const intervalIndex = process.argv.indexOf('--interval');
const INTERVAL = intervalIndex > 0 ? Number(process.argv[intervalIndex + 1]) : PROXY_DEFAULTS.blockPollIntervalMs;
const RUNS = quick ? 1 : 3;
const IDLE_WINDOW_MS = quick ? 3000 : 10_000;
const JOBS = quick ? 60 : 200;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function upstreamCalls(info: Conn): Promise<number> {
  return Number(/total_upstream_calls:(\d+)/.exec(await info.call('INFO', 'stats'))![1]);
}

async function idle(proxy: RunningProxy, keys: string[]): Promise<number> {
  const workers = await Promise.all(Array.from({ length: 100 }, () => Conn.connect(proxy.port)));
  for (const w of workers) void w.call('BRPOP', ...keys, '0');
  await sleep(2000); // the backoff reaches its cap (10 ms doubling to --block-poll-interval)
  const info = await Conn.connect(proxy.port);
  const before = await upstreamCalls(info);
  const t0 = Date.now();
  await sleep(IDLE_WINDOW_MS);
  const rate = ((await upstreamCalls(info)) - before - 1) / ((Date.now() - t0) / 1000); // -1: the INFO itself
  for (const w of [...workers, info]) w.close();
  return rate;
}

async function pickup(workerProxy: RunningProxy, producerProxy: RunningProxy, queue: string): Promise<number[]> {
  const latencies: number[] = [];
  const workers = await Promise.all(Array.from({ length: 10 }, () => Conn.connect(workerProxy.port)));
  let running = true;
  const loops = workers.map(async (w) => {
    while (running) {
      const reply = await w.call('BRPOP', queue, '1');
      if (reply.startsWith('*2')) latencies.push(Date.now() - Number(reply.split('\r\n')[4]));
    }
  });
  const producer = await Conn.connect(producerProxy.port);
  await sleep(500);
  for (let i = 0; i < JOBS; i++) {
    await producer.call('LPUSH', queue, String(Date.now()));
    await sleep(20 + Math.random() * 40);
  }
  while (latencies.length < JOBS) await sleep(50);
  running = false;
  await Promise.all(loops);
  for (const w of [...workers, producer]) w.close();
  return latencies;
}

async function main(): Promise<void> {
  const log = createLogger('warn');
  const platform = await startBenchPlatform(log);
  const proxyConfig = benchProxyConfig(platform.url, platform.token, { blockPollIntervalMs: INTERVAL });
  const [proxy, other] = [await startProxy(proxyConfig, log), await startProxy(proxyConfig, log)];
  console.log(`respgate blocking bench, --block-poll-interval ${INTERVAL} ms, ${RUNS} run(s) per case (${new Date().toISOString()})`);
  const one: number[] = [];
  const three: number[] = [];
  const same: number[][] = [];
  const behind: number[][] = [];
  for (let r = 0; r < RUNS; r++) {
    one.push(await idle(proxy, ['queue:idle']));
    three.push(await idle(proxy, ['queue:a', 'queue:b', 'queue:c']));
    same.push(await pickup(proxy, proxy, `queue:same:${r}`));
    behind.push(await pickup(proxy, other, `queue:other:${r}`));
  }
  const f = (x: number) => x.toFixed(1);
  console.log(`idle, 100 workers, BRPOP on 1 key:     ${f(median(one))} upstream requests/s (runs: ${one.map(f).join(', ')})`);
  console.log(`idle, 100 workers, BRPOP on 3 keys:    ${f(median(three))} upstream requests/s (runs: ${three.map(f).join(', ')})`);
  for (const [name, runs] of [
    ['producer on the same proxy', same],
    ['producer behind another proxy', behind],
  ] as const) {
    const p50 = median(runs.map((l) => percentile(l, 0.5)));
    const p90 = median(runs.map((l) => percentile(l, 0.9)));
    const max = median(runs.map((l) => Math.max(...l)));
    console.log(`pickup, ${name.padEnd(30)} p50 ${p50} ms, p90 ${p90} ms, max ${max} ms (${JOBS} jobs, median of ${RUNS} runs)`);
  }
  await proxy.stop();
  await other.stop();
  await platform.stop();
}

await main();
