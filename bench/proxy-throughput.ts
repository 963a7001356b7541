// Throughput of the proxy against a direct redis-server, measured in the same run with
// redis-benchmark, as ratios (proxy / direct). Also the proxy's RSS with 1 000 idle connections.
//
//   npx tsx bench/proxy-throughput.ts            # full run: -n 200000, 5 rounds per case
//   npx tsx bench/proxy-throughput.ts --quick    # -n 20000, 1 round (a smoke test of the script)
//   npx tsx bench/proxy-throughput.ts --rounds 7 # 7 rounds per case
//   npx tsx bench/proxy-throughput.ts --requests 100000  # another -n at -P 1 (-P 16 runs ten times as many)
//   npx tsx bench/proxy-throughput.ts --warmup 3     # 3 passes of every test at every depth first (default 1)
//   npx tsx bench/proxy-throughput.ts --compare /path/to/other/checkout
//       # also runs the other checkout's build (its `npm run build` done), interleaved with this one
//       # in every round, so both are measured under the same load: two ratio columns
//
// The dev stack runs as its own process (`bin/respgate dev`), as a user runs it: redis-servers,
// the platform and the proxy, so every proxied command crosses HTTP and a second process.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { csvRates, median, startUntilReady } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const compareIndex = process.argv.indexOf('--compare');
const compareRoot = compareIndex > 0 ? path.resolve(process.argv[compareIndex + 1]) : undefined;
const requestsIndex = process.argv.indexOf('--requests');
const REQUESTS = requestsIndex > 0 ? Number(process.argv[requestsIndex + 1]) : quick ? 20_000 : 200_000;
const roundsIndex = process.argv.indexOf('--rounds');
/**
 * Rounds per case. A round runs one test on every target back to back (direct, proxy[, other]), in the
 * opposite order the next round, and gives one ratio per target: a slow spell of the machine, which lasts
 * seconds here (bench/README.md, "why runs differ"), then falls on both sides of a ratio rather than on one.
 */
const ROUNDS = roundsIndex > 0 ? Number(process.argv[roundsIndex + 1]) : quick ? 1 : 5;
const warmupIndex = process.argv.indexOf('--warmup');
/**
 * Passes of every test at every pipeline depth, on every target, before the measured runs (as
 * cpu-per-command.ts --warmup): with a -P 1 pass only, V8 still compiled and deoptimized the proxy's
 * functions in the first -P 16 runs (bench/README.md, "V8's background threads, the warm-up"). A
 * sidecar pays that once; the figure is the running service's.
 */
const WARMUP = warmupIndex > 0 ? Number(process.argv[warmupIndex + 1]) : 1;
const TESTS = ['set', 'get', 'incr', 'lpush', 'lrange_100', 'mset'];
const PIPELINES = [1, 16];

function log(msg: string): void {
  process.stderr.write(msg + '\n');
}

/**
 * Requests per run at a depth: REQUESTS at -P 1, ten times as many at -P 16, so that a run lasts about as
 * long at both (100 000 requests at -P 16 took 0.1-0.3 s, too short to read a rate from on a shared machine).
 */
const requestsAt = (pipeline: number): number => (pipeline >= 8 ? REQUESTS * 10 : REQUESTS);

async function benchmark(port: number, pipeline: number, tests: string[]): Promise<Map<string, number>> {
  const { stdout } = await run(
    'redis-benchmark',
    [
      '-p',
      String(port),
      '-c',
      '50',
      '-n',
      String(requestsAt(pipeline)),
      '-r',
      '10000',
      '-t',
      tests.join(','),
      '-P',
      String(pipeline),
      '--csv',
    ],
    { maxBuffer: 1 << 20 },
  );
  return csvRates(stdout);
}

async function startDevStack(from = root): Promise<{ port: number; pid: number; stop: () => void }> {
  const port = await freePort();
  const httpPort = await freePort();
  // The side ports too: their defaults (6380, 6381) may be taken by another stack on the machine.
  const sidePorts = ['--vector-port', String(await freePort()), '--queue-port', String(await freePort())];
  const { child } = await startUntilReady(
    process.execPath,
    [path.join(from, 'bin/respgate'), 'dev', '--port', String(port), '--http-port', String(httpPort), ...sidePorts, '--log-level', 'warn'],
    /ready/,
  );
  return { port, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
  return kb / 1024;
}

async function idleConnections(port: number, count: number): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < count; i++) {
    const s = net.connect({ port, host: '127.0.0.1' });
    await new Promise<void>((resolve, reject) => {
      s.once('data', () => resolve());
      s.once('error', reject);
      s.write('PING\r\n');
    });
    sockets.push(s);
  }
  return sockets;
}

/** RSS of a fresh dev stack, then with 1 000 idle connections that each sent one PING. */
async function measureIdleConnections(): Promise<string> {
  const stack = await startDevStack();
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const before = rssMiB(stack.pid);
    const sockets = await idleConnections(stack.port, 1000);
    await new Promise((r) => setTimeout(r, 1000));
    const after = rssMiB(stack.pid);
    for (const s of sockets) s.destroy();
    return `respgate dev process RSS: ${before.toFixed(1)} MiB fresh, ${after.toFixed(1)} MiB with 1000 idle connections (+${(after - before).toFixed(1)} MiB, ${(((after - before) * 1024) / 1000).toFixed(1)} KiB per connection)`;
  } finally {
    stack.stop();
  }
}

async function main(): Promise<void> {
  const rss = await measureIdleConnections();
  const direct = await startEmbeddedRedis({ password: null, databases: 1 });
  const stack = await startDevStack();
  const other = compareRoot ? await startDevStack(compareRoot) : undefined;
  log(
    `direct redis-server :${direct.endpoint.port}, respgate dev proxy :${stack.port} (pid ${stack.pid})${other ? `, ${compareRoot} :${other.port}` : ''}; ${REQUESTS} requests at -P 1 and ${requestsAt(16)} at -P 16, ${ROUNDS} round(s) per case, ${WARMUP} warm-up pass(es)`,
  );
  const targets: [string, number][] = [
    ['direct', direct.endpoint.port],
    ['proxy', stack.port],
    ...(other ? [['other', other.port] as [string, number]] : []),
  ];
  const rows: string[] = [];
  try {
    // Warm-up: JIT compilation and the proxy's keep-alive connections, as in a running service.
    for (let w = 0; w < WARMUP; w++) {
      for (const p of PIPELINES) {
        log(`  warm-up ${w + 1}/${WARMUP}, -P ${p}…`);
        for (const [, port] of targets) await benchmark(port, p, TESTS);
      }
    }
    for (const p of PIPELINES) {
      for (const test of TESTS) {
        const rates: Record<string, number[]> = { direct: [], proxy: [], other: [] };
        for (let r = 0; r < ROUNDS; r++) {
          log(`  -P ${p} ${test} round ${r + 1}/${ROUNDS}…`);
          for (const [target, port] of r % 2 ? [...targets].reverse() : targets) {
            // The test's own rate is the last line: LRANGE runs "LPUSH (needed to benchmark LRANGE)" first.
            rates[target].push([...(await benchmark(port, p, [test])).values()].at(-1)!);
          }
        }
        const d = median(rates.direct);
        const ratio = (target: string): string => {
          const ratios = rates[target].map((rps, r) => rps / rates.direct[r]);
          return `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
        };
        const name = test.toUpperCase();
        if (other) {
          rows.push(
            `| ${name} | ${p} | ${Math.round(d)} | ${Math.round(median(rates.other))} | ${Math.round(median(rates.proxy))} | ${ratio('other')} | ${ratio('proxy')} |`,
          );
        } else {
          rows.push(`| ${name} | ${p} | ${Math.round(d)} | ${Math.round(median(rates.proxy))} | ${ratio('proxy')} |`);
        }
      }
    }
    if (other) {
      console.log(
        '| test | -P | direct redis-server (req/s) | --compare build (req/s) | this build (req/s) | ratio --compare (range) | ratio this (range) |',
      );
      console.log('|---|---|---|---|---|---|---|');
    } else {
      console.log('| test | -P | direct redis-server (req/s) | through respgate (req/s) | ratio (range) |');
      console.log('|---|---|---|---|---|');
    }
    for (const row of rows) console.log(row);
    console.log(`\n${rss}`);
  } finally {
    stack.stop();
    other?.stop();
    await direct.stop();
  }
}

await main();
