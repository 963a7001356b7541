// CPU time per command of the local platform alone (`respgate platform`, its data redis-server apart)
// answering /pipeline requests shaped like the proxy's (JSON body, Upstash-Response-Format: resp2),
// next to a direct redis-server running redis-benchmark -P 16 on the same commands in the same run.
// It isolates the platform's share of bench/cpu-per-command.ts from the proxy's batching (issue 14).
//
//   npx tsx bench/platform-pipeline.ts                      # SET and GET, 200 commands per request
//   npx tsx bench/platform-pipeline.ts --batch 50 --rounds 5
//   npx tsx bench/platform-pipeline.ts --format json        # JSON answers instead of resp2
//   npx tsx bench/platform-pipeline.ts --root /path/to/other/checkout   # that checkout's platform
//   npx tsx bench/platform-pipeline.ts --profile DIR        # node --cpu-prof of the platform into DIR
import { spawn, execFile } from 'node:child_process';
import http from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { median } from './process-stack.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 3);
const BATCH = Number(arg('--batch') ?? 200);
const CONNECTIONS = Number(arg('--connections') ?? 4);
const COMMANDS = Number(arg('--commands') ?? 600_000);
const FORMAT = arg('--format') ?? 'resp2';
const TESTS = (arg('--tests') ?? 'set,get').split(',');
const PROFILE_DIR = arg('--profile');
const TICK_US = 1e6 / 100; // CLK_TCK = 100 on Linux

function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

/** The proxy's /pipeline body for `BATCH` commands like redis-benchmark's (-r 10000, 3-byte values). */
function body(test: string, seed: number): Buffer {
  const commands: string[][] = [];
  for (let i = 0; i < BATCH; i++) {
    const key = `key:${String((seed * 7919 + i * 104729) % 10000).padStart(12, '0')}`;
    commands.push(test === 'set' ? ['SET', key, 'xxx'] : ['GET', key]);
  }
  return Buffer.from(JSON.stringify(commands));
}

async function load(port: number, token: string, test: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const bodies = Array.from({ length: 16 }, (_, i) => body(test, i));
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    ...(FORMAT === 'resp2' ? { 'upstash-response-format': 'resp2' } : {}),
  };
  let sent = 0;
  const one = (b: Buffer): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, path: '/pipeline', method: 'POST', agent, headers: { ...headers, 'content-length': b.length } },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
          res.on('data', () => undefined);
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(b);
    });
  const worker = async (): Promise<void> => {
    while (sent < COMMANDS) {
      sent += BATCH;
      await one(bodies[(sent / BATCH) % bodies.length]);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  agent.destroy();
}

function childWithPort(parent: number, port: number): number {
  for (const task of readdirSync(`/proc/${parent}/task`)) {
    for (const c of readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      if (readFileSync(`/proc/${c}/cmdline`, 'utf8').includes(`:${port}`)) return Number(c);
    }
  }
  throw new Error(`no child of ${parent} listens on ${port}`);
}

async function main(): Promise<void> {
  const bin = path.join(arg('--root') ?? root, 'bin/respgate');
  const httpPort = await freePort();
  const token = 'bench-' + Math.random().toString(36).slice(2);
  const prof = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const platform = spawn(
    process.execPath,
    [...prof, bin, 'platform', '--http-port', String(httpPort), '--token', token, '--log-level', 'warn'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, RESPGATE_EPHEMERAL: '1' }, // throw-away stores (no .respgate-data)
    },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    platform.stdout!.on('data', (d) => {
      out += d;
      if (/embedded redis-server on 127\.0\.0\.1:\d+\D/.test(out)) resolve();
    });
    platform.once('exit', (code) => reject(new Error(`platform exited with ${code}`)));
  });
  const dataPort = Number(/embedded redis-server on 127\.0\.0\.1:(\d+)/.exec(out)![1]);
  const dataPid = childWithPort(platform.pid!, dataPort);
  const directPort = await freePort();
  const direct = spawn('redis-server', ['--port', String(directPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await run('redis-cli', ['-p', String(directPort), 'PING'])).stdout.trim() === 'PONG') break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const rows: string[] = [];
  const loads: number[] = [];
  try {
    for (const test of TESTS) await load(httpPort, token, test); // warm-up: JIT
    for (const test of TESTS) {
      const s = { direct: [] as number[], platform: [] as number[], data: [] as number[] };
      for (let r = 0; r < ROUNDS; r++) {
        loads.push(loadavg()[0]);
        let before = cpuUs(direct.pid!);
        await run('redis-benchmark', [
          '-p',
          String(directPort),
          '-c',
          '50',
          '-n',
          String(COMMANDS),
          '-r',
          '10000',
          '-t',
          test,
          '-P',
          '16',
          '-q',
        ]);
        s.direct.push((cpuUs(direct.pid!) - before) / COMMANDS);
        before = cpuUs(platform.pid!);
        const dataBefore = cpuUs(dataPid);
        await load(httpPort, token, test);
        s.platform.push((cpuUs(platform.pid!) - before) / COMMANDS);
        s.data.push((cpuUs(dataPid) - dataBefore) / COMMANDS);
      }
      const d = median(s.direct);
      const p = median(s.platform);
      rows.push(
        `| ${test.toUpperCase()} | ${d.toFixed(2)} µs | ${p.toFixed(2)} µs (${(p / d).toFixed(2)}×) | ${median(s.data).toFixed(2)} µs | ${s.platform.map((x) => x.toFixed(2)).join(' ')} |`,
      );
    }
  } finally {
    direct.kill();
    platform.kill('SIGTERM');
    await new Promise((r) => platform.once('exit', r));
  }
  console.log(
    `/pipeline of ${BATCH} commands, ${FORMAT} answers, ${CONNECTIONS} connections, ${COMMANDS} commands per round; median of ${ROUNDS}; direct: redis-benchmark -c 50 -P 16`,
  );
  console.log('');
  console.log('| test | redis-server direct | platform | its data redis-server | platform rounds |');
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`load average (1 min): median ${median(loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)}`);
}

await main();
