// Where the latency of one command through the proxy goes: one client alone sends GET after GET
// (each waits for the previous reply), straight to a redis-server, straight to the platform's
// /pipeline over one keep-alive HTTP connection, and through a standalone proxy in front of that
// platform. For each path: the p50 and p90 round trip, and the CPU time per request of every process
// on it (user + sys from /proc). On a machine where waking another process is expensive, the CPU of
// each hop is on the critical path, so the two columns explain each other (issue 14).
//
//   npx tsx bench/hop-latency.ts [--requests 20000] [--rounds 3]
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/platform/redis/embedded-server.js';
import { cpuUs, median, startRedis, startStack, stop, type Stack } from './process-stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const REQUESTS = arg('--requests', 20_000);
const ROUNDS = arg('--rounds', 3);

/** Round trips of `request` on one connection, one at a time; `complete` says when a reply is whole. */
async function roundTrips(port: number, request: Buffer, complete: (reply: Buffer) => boolean): Promise<number[]> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const times: number[] = [];
  let started = 0n;
  let pending: Buffer[] = [];
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      pending.push(chunk);
      const reply = pending.length === 1 ? chunk : Buffer.concat(pending);
      if (!complete(reply)) return;
      pending = [];
      times.push(Number(process.hrtime.bigint() - started) / 1000);
      if (times.length === REQUESTS) return resolve();
      started = process.hrtime.bigint();
      socket.write(request);
    });
    started = process.hrtime.bigint();
    socket.write(request);
  });
  socket.destroy();
  return times.sort((a, b) => a - b);
}

/** A RESP bulk or nil reply, whole. */
const respComplete = (reply: Buffer): boolean => {
  if (reply[0] !== 0x24) return reply.indexOf('\r\n') > 0;
  const lineEnd = reply.indexOf('\r\n');
  const len = Number(reply.toString('latin1', 1, lineEnd));
  return len < 0 ? lineEnd > 0 : reply.length >= lineEnd + 2 + len + 2;
};

/** An HTTP/1.1 answer with a Content-Length, whole. */
const httpComplete = (reply: Buffer): boolean => {
  const headEnd = reply.indexOf('\r\n\r\n');
  if (headEnd < 0) return false;
  const m = /content-length: *(\d+)/i.exec(reply.toString('latin1', 0, headEnd));
  return m !== null && reply.length >= headEnd + 4 + Number(m[1]);
};

interface PathResult {
  p50: number[];
  p90: number[];
  cpu: Record<string, number[]>;
}

async function measure(result: PathResult, pids: Record<string, number>, trips: () => Promise<number[]>): Promise<void> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuUs(pid)]));
  const times = await trips();
  result.p50.push(times[Math.floor(times.length / 2)]);
  result.p90.push(times[Math.floor(times.length * 0.9)]);
  for (const [k, pid] of Object.entries(pids)) (result.cpu[k] ??= []).push((cpuUs(pid) - before[k]) / REQUESTS);
}

async function main(): Promise<void> {
  const directPort = await freePort();
  const direct = await startRedis(directPort);
  let stack: Stack | undefined;
  try {
    stack = await startStack(root, '');
    const get = Buffer.from('*2\r\n$3\r\nGET\r\n$9\r\nhop:probe\r\n');
    const body = JSON.stringify([['GET', 'hop:probe']]);
    const http = Buffer.from(
      `POST /pipeline HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${stack.token}\r\nContent-Type: application/json\r\n` +
        `Upstash-Response-Format: resp2\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const paths: Array<[string, PathResult, Record<string, number>, () => Promise<number[]>]> = [
      [
        'redis-server direct',
        { p50: [], p90: [], cpu: {} },
        { 'redis-server': direct.pid },
        () => roundTrips(directPort, get, respComplete),
      ],
      [
        'platform /pipeline (HTTP, keep-alive)',
        { p50: [], p90: [], cpu: {} },
        { platform: stack.platform.pid, 'data redis-server': stack.dataPid },
        () => roundTrips(stack!.httpPort, http, httpComplete),
      ],
      [
        'proxy → platform',
        { p50: [], p90: [], cpu: {} },
        { proxy: stack.proxy.pid, platform: stack.platform.pid, 'data redis-server': stack.dataPid },
        () => roundTrips(stack!.proxyPort, get, respComplete),
      ],
    ];
    for (const [, , pids, trips] of paths) await measure({ p50: [], p90: [], cpu: {} }, pids, trips); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(`round ${r + 1}/${ROUNDS}\n`);
      for (const [, result, pids, trips] of paths) await measure(result, pids, trips);
    }
    console.log(`One client, one GET at a time, ${REQUESTS} requests per round, median of ${ROUNDS} rounds`);
    console.log('');
    console.log('| path | p50 | p90 | CPU per request of each process on it |');
    console.log('|---|---|---|---|');
    for (const [name, result] of paths) {
      const cpu = Object.entries(result.cpu)
        .map(([k, v]) => `${k} ${median(v).toFixed(0)} µs`)
        .join(', ');
      console.log(`| ${name} | ${median(result.p50).toFixed(0)} µs | ${median(result.p90).toFixed(0)} µs | ${cpu} |`);
    }
  } finally {
    if (stack) {
      await stop(stack.proxy);
      await stop(stack.platform);
    }
    await stop(direct);
  }
}

await main();
