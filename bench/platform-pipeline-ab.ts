// The local platform alone (`respgate platform`) of two or more builds, side by side: a lean raw HTTP/1.1
// client sends `/pipeline` calls shaped like the proxy's (a JSON array of `["SET","key:…","xxx"]` or
// `["GET","key:…"]`, Upstash-Response-Format: resp2, one call in flight per connection), rounds alternating
// which build goes first; CPU time per command of each platform and of its data redis-server from /proc.
// Unlike bench/cpu-per-command.ts, no proxy shares the machine's two cores with it, and each round holds
// enough commands for hundreds of 10 ms ticks: differences of a few percent in the platform's own work show.
// `--convert` measures instead the JSON → RESP conversion alone (readPlainPipeline of each build's dist/,
// in this process), ns of CPU per command. Branch plat16 (bench/README.md).
//
//   npx tsx bench/platform-pipeline-ab.ts --builds this=.,main=/tmp/mc20                 # -P 16's calls: 400 commands
//   npx tsx bench/platform-pipeline-ab.ts --builds this=.,main=/tmp/mc20 --batch 24 --commands 400000   # -P 1's
//   npx tsx bench/platform-pipeline-ab.ts --builds this=.,main=/tmp/mc20 --convert
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { loadavg } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './process-stack.js';

const arg = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const BUILDS = arg('--builds', 'this=.')
  .split(',')
  .map((b) => b.split('=') as [string, string]);
const BATCH = Number(arg('--batch', '400'));
const CONNECTIONS = Number(arg('--connections', '2'));
const COMMANDS = Number(arg('--commands', '2000000'));
const ROUNDS = Number(arg('--rounds', '5'));
const TESTS = arg('--tests', 'set,get').split(',');
const TICK_US = 1e4; // CLK_TCK = 100

function cpuUs(pid: number, fields: number[] = [11, 12]): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.reduce((sum, i) => sum + Number(f[i]), 0) * TICK_US;
}

/** 16 bodies of BATCH commands like redis-benchmark's (-r 10000, 3-byte values), as the proxy writes them. */
function bodies(test: string): Buffer[] {
  return Array.from({ length: 16 }, (_, seed) => {
    const commands: string[][] = [];
    for (let i = 0; i < BATCH; i++) {
      const key = `key:${String((seed * 7919 + i * 104729) % 10000).padStart(12, '0')}`;
      commands.push(test === 'set' ? ['SET', key, 'xxx'] : ['GET', key]);
    }
    return Buffer.from(JSON.stringify(commands));
  });
}

interface Platform {
  name: string;
  port: number;
  token: string;
  child: ChildProcess;
  data: number;
}

async function start(name: string, root: string, port: number): Promise<Platform> {
  const token = 'bench-' + Math.random().toString(36).slice(2);
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin/respgate'), 'platform', '--http-port', String(port), '--token', token, '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, RESPGATE_EPHEMERAL: '1' } },
  );
  let out = '';
  const dataPort = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /embedded redis-server on 127\.0\.0\.1:(\d+)\D/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`platform ${name} exited with ${code}`)));
  });
  for (const task of readdirSync(`/proc/${child.pid}/task`)) {
    for (const c of readFileSync(`/proc/${child.pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      if (readFileSync(`/proc/${c}/cmdline`, 'utf8').includes(String(dataPort))) return { name, port, token, child, data: Number(c) };
    }
  }
  throw new Error(`no data redis-server of ${name} on ${dataPort}`);
}

/** `commands` commands in calls of BATCH over CONNECTIONS keep-alive connections, one call in flight each. */
async function load(p: Platform, test: string, commands: number): Promise<void> {
  const requests = bodies(test).map((body) =>
    Buffer.concat([
      Buffer.from(
        `POST /pipeline HTTP/1.1\r\nhost: 127.0.0.1:${p.port}\r\nauthorization: Bearer ${p.token}\r\n` +
          `content-type: application/json\r\nupstash-response-format: resp2\r\ncontent-length: ${body.length}\r\n\r\n`,
      ),
      body,
    ]),
  );
  let sent = 0;
  const connection = async (): Promise<void> => {
    const socket = net.connect(p.port, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let pending: Buffer = Buffer.alloc(0);
    let answered: (() => void) | undefined;
    socket.on('data', (d: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, d]) : d;
      const headEnd = pending.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = pending.toString('latin1', 0, headEnd);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
      if (pending.length < headEnd + 4 + length) return;
      if (!head.startsWith('HTTP/1.1 200')) throw new Error(head);
      pending = pending.subarray(headEnd + 4 + length);
      answered?.();
    });
    while (sent < commands) {
      sent += BATCH;
      await new Promise<void>((resolve) => {
        answered = resolve;
        socket.write(requests[(sent / BATCH) % requests.length]);
      });
    }
    socket.destroy();
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
}

async function platforms(): Promise<void> {
  const started: Platform[] = [];
  const rows: string[] = [];
  try {
    let port = 21000 + Math.floor(Math.random() * 20000);
    for (const [name, root] of BUILDS) started.push(await start(name, path.resolve(root), port++));
    for (const test of TESTS) for (const p of started) await load(p, test, Math.max(COMMANDS / 2, 100_000)); // JIT warm-up
    for (const test of TESTS) {
      const rounds = new Map(started.map((p) => [p, { cpu: [] as number[], sys: [] as number[], data: [] as number[] }]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const p of r % 2 ? [...started].reverse() : started) {
          const [c0, s0, d0] = [cpuUs(p.child.pid!), cpuUs(p.child.pid!, [12]), cpuUs(p.data)];
          await load(p, test, COMMANDS);
          const x = rounds.get(p)!;
          x.cpu.push((cpuUs(p.child.pid!) - c0) / COMMANDS);
          x.sys.push((cpuUs(p.child.pid!, [12]) - s0) / COMMANDS);
          x.data.push((cpuUs(p.data) - d0) / COMMANDS);
        }
      }
      for (const [p, x] of rounds) {
        rows.push(
          `| ${test.toUpperCase()} | ${p.name} | ${median(x.cpu).toFixed(3)} (${median(x.sys).toFixed(3)}) | ${median(x.data).toFixed(3)} | ${x.cpu.map((v) => v.toFixed(3)).join(' ')} |`,
        );
      }
    }
  } finally {
    for (const p of started) p.child.kill('SIGTERM');
  }
  console.log(`/pipeline calls of ${BATCH} commands, ${CONNECTIONS} connections, ${COMMANDS} commands per round, median of ${ROUNDS}`);
  console.log('| test | build | platform µs per command (system) | its data redis-server µs | rounds |');
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`load average (1 min) at the end: ${loadavg()[0].toFixed(1)}`);
}

type Reader = (body: Buffer, kindOf: (name: string) => 'read' | 'write' | undefined) => { resp: Buffer } | undefined;

/** readPlainPipeline of each build, in this process: ns of CPU per command, best of 7 runs of 20 000 calls. */
async function conversion(): Promise<void> {
  for (const test of TESTS) {
    for (const [name, root] of BUILDS) {
      const dist = path.resolve(root, 'dist/platform/kv');
      const { readPlainPipeline } = (await import(pathToFileURL(path.join(dist, 'plain-pipeline.js')).href)) as {
        readPlainPipeline: Reader;
      };
      const { lookupCommand } = await import(pathToFileURL(path.resolve(root, 'dist/commands/table.js')).href);
      const { plainKindOf } = await import(pathToFileURL(path.join(dist, 'executor.js')).href);
      const kindOf = (n: string) => plainKindOf(lookupCommand(n));
      const list = bodies(test);
      const runs: number[] = [];
      for (let r = 0; r < 7; r++) {
        const t0 = process.cpuUsage();
        for (let i = 0; i < 20_000; i++) readPlainPipeline(list[i & 15], kindOf);
        const u = process.cpuUsage(t0);
        runs.push(((u.user + u.system) * 1000) / 20_000 / BATCH);
      }
      console.log(
        `${test.toUpperCase()} ${name}: ${Math.min(...runs).toFixed(1)} ns per command (runs ${runs.map((v) => v.toFixed(1)).join(' ')})`,
      );
    }
  }
}

await (process.argv.includes('--convert') ? conversion() : platforms());
