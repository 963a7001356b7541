// The platform alone with 1 MiB values (issue 25): path-form `POST /SET/key` with the value as the raw
// body, and `/pipeline [["GET","key"]]` in resp2, as the proxy sends them, from 4 concurrent HTTP
// clients straight to each build's platform; the platform's CPU ms per request from /proc. Builds
// alternate by round, and every stack is fresh per run: on this 2-core machine a platform process
// settles in a cheap or a dear mode for its whole life (0.7-1.0 or 1.5-2.5 ms per request, the same
// build either way), so compare runs, not one figure (bench/README.md, large values, third pass).
//
//   npx tsx bench/platform-large-values.ts /path/to/other/build [--rounds 2] [--requests 200]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { cpuUs, log, median, startStack, stop, type Stack } from './process-stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const other = process.argv[2];
if (!other || other.startsWith('--')) throw new Error('give the other build: npx tsx bench/platform-large-values.ts DIR');
const ROUNDS = Number(arg('--rounds') ?? 2);
const REQUESTS = Number(arg('--requests') ?? 200);
const value = Buffer.alloc(1 << 20, 'v');

/** CPU ms of the platform per request for REQUESTS requests of `op`, 4 at a time. */
async function run(s: Stack, op: 'set' | 'get'): Promise<number> {
  const pool = new Pool(`http://127.0.0.1:${s.httpPort}`, { connections: 4 });
  const headers = { authorization: `Bearer ${s.token}`, 'upstash-response-format': 'resp2' };
  const one = async () => {
    const r =
      op === 'set'
        ? await pool.request({
            method: 'POST',
            path: '/SET/key:1',
            headers: { ...headers, 'content-type': 'application/octet-stream' },
            body: value,
          })
        : await pool.request({
            method: 'POST',
            path: '/pipeline',
            headers: { ...headers, 'content-type': 'application/json' },
            body: '[["GET","key:1"]]',
          });
    const bytes = Buffer.from(await r.body.arrayBuffer());
    if (r.statusCode !== 200 || (op === 'get' && bytes.length < value.length))
      throw new Error(`${op}: HTTP ${r.statusCode}, ${bytes.length} bytes`);
  };
  const before = cpuUs(s.platform.pid);
  let sent = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (sent++ < REQUESTS) await one();
    }),
  );
  const ms = (cpuUs(s.platform.pid) - before) / REQUESTS / 1000;
  await pool.close();
  return ms;
}

const samples: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  // A fresh pair per round, started in alternating order.
  const dirs = r % 2 ? [other, root] : [root, other];
  const stacks = [];
  for (const dir of dirs) stacks.push(await startStack(dir, dir === root ? '' : 'B '));
  try {
    for (const s of stacks) for (const op of ['set', 'get', 'set', 'get'] as const) await run(s, op); // warm-up
    for (const [i, s] of stacks.entries()) {
      for (const op of ['set', 'get'] as const) {
        const ms = await run(s, op);
        (samples[`${op} ${dirs[i] === root ? 'this build' : 'B'}`] ??= []).push(ms);
        log(`  round ${r + 1}: ${dirs[i] === root ? 'this build' : 'B'} ${op} ${ms.toFixed(2)} ms`);
      }
    }
  } finally {
    for (const s of stacks) {
      await stop(s.proxy);
      await stop(s.platform);
    }
  }
}
console.log(`platform CPU ms per 1 MiB request, ${REQUESTS} requests per run, 4 clients; median (runs)`);
for (const [key, v] of Object.entries(samples)) console.log(`${key}: ${median(v).toFixed(2)} (${v.map((x) => x.toFixed(2)).join(' ')})`);
