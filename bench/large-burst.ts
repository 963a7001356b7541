// The burst of issue 22: ioredis with auto-pipelining writes 600 values of 1 MiB, then reads them
// back, against a RESP port (a proxy in front of the platform, or redis-server): the seconds each
// half took and how many commands failed, with the first error.
//
//   npx tsx bench/large-burst.ts PORT [count=600]
import { Redis } from 'ioredis';

const port = Number(process.argv[2]);
const count = Number(process.argv[3] ?? 600);
if (!port) throw new Error('give the port: npx tsx bench/large-burst.ts PORT [count]');
const redis = new Redis({ port, enableAutoPipelining: true });
const value = Buffer.alloc(1024 * 1024, 'x');
const keys = Array.from({ length: count }, (_, i) => `burst:${i}`);

async function half(name: string, run: (key: string) => Promise<unknown>, ok: (result: unknown) => boolean): Promise<void> {
  const started = Date.now();
  const results = await Promise.allSettled(keys.map(run));
  const failed = results.filter((r) => r.status === 'rejected' || !ok(r.value));
  const first = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  console.log(
    `${name}: ${count - failed.length} ok, ${failed.length} failed in ${((Date.now() - started) / 1000).toFixed(1)} s${first ? ` (${String(first.reason?.message ?? first.reason)})` : ''}`,
  );
}

try {
  await half(
    'SET',
    (k) => redis.set(k, value),
    (r) => r === 'OK',
  );
  await half(
    'GET',
    (k) => redis.getBuffer(k),
    (r) => Buffer.isBuffer(r) && r.length === value.length,
  );
  await redis.del(...keys).catch(() => undefined);
} finally {
  redis.disconnect();
}
