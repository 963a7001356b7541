// Floods against the proxy, run as its own process (`bin/respgate proxy`) in front of the real
// platform, while a probe client keeps measuring its own round trips; the proxy's RSS is sampled from
// /proc every 100 ms. Figures go to bench/README.md.
//   1. 5 000 concurrent connections (each PINGs once, then they are all held open);
//   2. slowloris: 500 connections sending a PING one byte per second;
//   3. one client pipelining 1 000 000 GETs without reading, then reading every reply.
//
// Each run starts its own platform and proxy; --runs N repeats it and prints the median and range
// of every figure (RSS before, at its peak and after each flood; connections held; probe figures).
//
//   npx tsx scripts/flood.ts --runs 3                  # the full run, three times
//   npx tsx scripts/flood.ts --connections 500 --slow 50 --slow-byte-ms 100 --pipelined 100000   # a quick one
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestPlatform } from '../test/helpers/platform.js';
import { repeatRuns, runsArgument, type Figures } from './runs.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const CONNECTIONS = arg('--connections', 5000);
const SLOW = arg('--slow', 500);
const PIPELINED = arg('--pipelined', 1_000_000);
/** Slowloris: milliseconds between two bytes of each slow connection's PING. */
const SLOW_BYTE_MS = arg('--slow-byte-ms', 1000);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

function readUntil(s: net.Socket, predicate: (text: string) => boolean, ms = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const t = setTimeout(() => reject(new Error(`timed out waiting; got ${JSON.stringify(text.slice(0, 100))}`)), ms);
    const on = (d: Buffer) => {
      text += d.toString('latin1');
      if (predicate(text)) {
        clearTimeout(t);
        s.off('data', on);
        resolve(text);
      }
    };
    s.on('data', on);
  });
}

/** A client that does SET+GET round trips back to back, recording the slowest and the count. */
async function probe(port: number) {
  const s = await connect(port);
  const stats = { count: 0, maxMs: 0, failures: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      s.write('*3\r\n$3\r\nSET\r\n$5\r\nprobe\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$5\r\nprobe\r\n');
      const got = await readUntil(s, (x) => x.endsWith('$1\r\nv\r\n'), 30_000).catch(() => '');
      if (!got) stats.failures++;
      stats.count++;
      stats.maxMs = Math.max(stats.maxMs, performance.now() - t0);
      await sleep(20);
    }
  })();
  return {
    stats,
    stop: async () => {
      running = false;
      await loop;
      s.destroy();
    },
  };
}

function sampler(pid: number) {
  let max = 0;
  const t = setInterval(() => {
    max = Math.max(max, rssMb(pid));
  }, 100);
  return {
    get max() {
      return max;
    },
    reset: () => {
      max = rssMb(pid);
    },
    stop: () => clearInterval(t),
  };
}

/** One full run: its own platform and proxy process, the three floods, the figures. */
async function floodOnce(): Promise<Figures> {
  const figures: Figures = {};
  const platform = await startTestPlatform();
  const child = spawn(
    process.execPath,
    [
      path.join(root, 'bin/respgate'),
      'proxy',
      '--port',
      '0',
      '--upstream-url',
      platform.url,
      '--upstream-token',
      platform.token,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, RESPGATE_MAXCLIENTS: String(CONNECTIONS + 100) } },
  );
  let out = '';
  const port = await new Promise<number>((resolve) =>
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /redis:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    }),
  );
  const pid = child.pid!;
  const rss = sampler(pid);
  /** RSS once the flood's sockets are closed and the proxy had a second to free them. */
  const settled = async () => {
    await sleep(1000);
    return Math.round(rssMb(pid));
  };
  await sleep(500);
  figures['RSS at start (MB)'] = Math.round(rssMb(pid));

  try {
    // 1. Many connections.
    if (CONNECTIONS > 0) {
      rss.reset();
      const p = await probe(port);
      const sockets: net.Socket[] = [];
      const t0 = Date.now();
      for (let i = 0; i < CONNECTIONS; i += 250) {
        const batch = await Promise.all(Array.from({ length: Math.min(250, CONNECTIONS - i) }, () => connect(port)));
        await Promise.all(
          batch.map((s) => {
            const r = readUntil(s, (x) => x === '+PONG\r\n');
            s.write('PING\r\n');
            return r;
          }),
        );
        sockets.push(...batch);
      }
      const opened = Date.now() - t0;
      const held = sockets.filter((s) => !s.destroyed).length;
      await sleep(2000);
      const stillOpen = sockets.filter((s) => !s.destroyed).length;
      await p.stop();
      Object.assign(figures, {
        'connections: answered PING': held,
        'connections: held 2 s later': stillOpen,
        'connections: opened in (ms)': opened,
        'connections: probe round trips': p.stats.count,
        'connections: probe slowest (ms)': Math.round(p.stats.maxMs),
        'connections: probe failed': p.stats.failures,
        'connections: RSS peak (MB)': Math.round(rss.max),
      });
      for (const s of sockets) s.destroy();
      figures['connections: RSS after (MB)'] = await settled();
    }
    // 2. Slowloris: a PING one byte per second from each of SLOW connections.
    if (SLOW > 0) {
      rss.reset();
      const p = await probe(port);
      const frame = Buffer.from('*1\r\n$4\r\nPING\r\n');
      const sockets = await Promise.all(Array.from({ length: SLOW }, () => connect(port)));
      const answers = sockets.map((s) =>
        readUntil(s, (x) => x === '+PONG\r\n', (frame.length + 10) * 1000).then(
          () => true,
          () => false,
        ),
      );
      for (let i = 0; i < frame.length; i++) {
        for (const s of sockets) s.write(frame.subarray(i, i + 1));
        await sleep(SLOW_BYTE_MS);
      }
      const answered = (await Promise.all(answers)).filter(Boolean).length;
      await p.stop();
      Object.assign(figures, {
        'slowloris: answered': answered,
        'slowloris: probe round trips': p.stats.count,
        'slowloris: probe slowest (ms)': Math.round(p.stats.maxMs),
        'slowloris: probe failed': p.stats.failures,
        'slowloris: RSS peak (MB)': Math.round(rss.max),
      });
      for (const s of sockets) s.destroy();
      figures['slowloris: RSS after (MB)'] = await settled();
    }
    // 3. One client pipelines PIPELINED GETs without reading, then reads them all. The value is 100
    //    bytes, so the replies (~107 MB) are far more than the kernel's socket buffers hold.
    if (PIPELINED > 0) {
      await fetch(`${platform.url}/set/flood:k`, {
        method: 'POST',
        headers: { authorization: `Bearer ${platform.token}` },
        body: 'v'.repeat(100),
      });
      rss.reset();
      const p = await probe(port);
      const s = await connect(port);
      s.pause();
      const chunk = Buffer.from('*2\r\n$3\r\nGET\r\n$7\r\nflood:k\r\n'.repeat(1000));
      let written = 0;
      let stalled = false;
      // Write as fast as the socket takes it; when it stops taking (the proxy stopped reading), wait 5 s.
      while (written < PIPELINED) {
        const ok = s.write(chunk);
        written += 1000;
        if (!ok) {
          const drained = await Promise.race([new Promise((r) => s.once('drain', () => r(true))), sleep(5000).then(() => false)]);
          if (!drained) {
            stalled = true;
            break;
          }
        }
      }
      const stalledAt = stalled ? written : -1;
      const rssStalled = rss.max;
      // Now read: every reply comes, and the rest of the commands go through.
      let replies = 0;
      const t0 = Date.now();
      const done = new Promise<void>((resolve) =>
        s.on('data', (d: Buffer) => {
          for (const b of d) if (b === 0x24) replies++; // one `$100\r\n…` per GET
          if (replies >= PIPELINED) resolve();
        }),
      );
      s.resume();
      while (written < PIPELINED) {
        if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
        written += 1000;
      }
      await done;
      await p.stop();
      s.destroy();
      Object.assign(figures, {
        'pipelined: commands taken before backpressure (-1 = never stalled)': stalledAt,
        'pipelined: RSS peak while unread (MB)': Math.round(rssStalled),
        'pipelined: replies read': replies,
        'pipelined: read in (ms)': Date.now() - t0,
        'pipelined: probe round trips': p.stats.count,
        'pipelined: probe slowest (ms)': Math.round(p.stats.maxMs),
        'pipelined: probe failed': p.stats.failures,
        'pipelined: RSS peak (MB)': Math.round(rss.max),
      });
      figures['pipelined: RSS after (MB)'] = await settled();
    }
  } finally {
    rss.stop();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await platform.stop();
  }
  return figures;
}

await repeatRuns(`flood: ${CONNECTIONS} connections, slowloris ${SLOW}, ${PIPELINED} pipelined GETs`, runsArgument(), () => floodOnce());
