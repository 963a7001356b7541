// The JSON function library inside redis-server: requests/s of JSON.GET and JSON.NUMINCRBY (as the FCALLs
// the platform sends) against plain GET and INCR, for documents of about 100 B, 10 KB and 100 KB. Every
// JSON command parses and re-serialises the whole document in Lua, so its cost grows with the document.
// Run: npx tsx bench/json-library.bench.ts   (median of 3 runs of redis-benchmark -c 50 each)
import { execFileSync } from 'node:child_process';
import { JSON_LIBRARY_SOURCE } from '../src/platform/kv/json/library.js';
import { startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { RedisConnection } from '../src/platform/redis/connection.js';

const RUNS = 3;
const server = await startEmbeddedRedis({ databases: 1, password: null });
const { host, port } = server.endpoint;
const conn = await RedisConnection.open(server.endpoint);

function doc(items: number): string {
  return JSON.stringify({
    n: 0,
    items: Array.from({ length: items }, (_, i) => ({ id: i, name: `item ${i}`, price: i * 1.25, tags: ['a', 'b'] })),
  });
}

function rps(requests: number, args: string[]): number {
  const results: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const out = execFileSync('redis-benchmark', ['-h', host, '-p', String(port), '-c', '50', '-n', String(requests), '-q', ...args], {
      encoding: 'utf8',
    });
    const m = /([\d.]+) requests per second/.exec(out);
    if (!m) throw new Error(`unexpected redis-benchmark output: ${out}`);
    results.push(Number(m[1]));
  }
  return results.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
}

try {
  await conn.send([['FUNCTION', 'LOAD', 'REPLACE', JSON_LIBRARY_SOURCE]]);
  console.log('| document | JSON.GET (req/s) | GET of the same text (req/s) | JSON.NUMINCRBY $.n (req/s) | INCR (req/s) |');
  console.log('|---|---|---|---|---|');
  for (const [label, items, requests] of [
    ['~100 B', 1, 50000],
    ['~10 KB', 150, 5000],
    ['~100 KB', 1500, 500],
  ] as const) {
    const text = doc(items);
    await conn.send([
      ['FCALL', 'respgate_json', '1', 'bj', 'set', 'bj', '$', text],
      ['SET', 'bs', text],
      ['SET', 'bi', '0'],
    ]);
    const jsonGet = rps(requests, ['FCALL_RO', 'respgate_json_ro', '1', 'bj', 'get', 'bj']);
    const get = rps(requests, ['GET', 'bs']);
    const incr = rps(requests, ['FCALL', 'respgate_json', '1', 'bj', 'numincrby', 'bj', '$.n', '1']);
    const plainIncr = rps(requests, ['INCR', 'bi']);
    console.log(`| ${label} (${Buffer.byteLength(text)} B) | ${jsonGet} | ${get} | ${incr} | ${plainIncr} |`);
  }
} finally {
  conn.close();
  await server.stop();
}
