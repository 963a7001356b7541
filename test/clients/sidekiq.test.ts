// Sidekiq 6 (Debian's ruby-sidekiq, unchanged) through the proxy, as real processes: a Ruby client
// pushes 500 jobs (push_bulk and one-by-one perform_async, each a MULTI) into two weighted queues;
// a `sidekiq` process (queues critical,2 and default,1; BRPOP on both) runs them, ten fail once and
// come back through Sidekiq's retry set (a sorted set polled with a Lua script). Every job ends
// done exactly once. Needs ruby-sidekiq (scripts/setup.sh --for-tests).
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, trackChild } from '../helpers/cleanup.js';
import { connectDataStore, startStack, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';

const here = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sidekiq');
const JOBS = 500;
const FLAKY = 10;

const run = (command: string, args: string[], env: NodeJS.ProcessEnv) => runProcess(command, args, { env });

let stack: Stack;
beforeAll(async () => {
  const found = spawnSync('ruby', ['-e', 'require "sidekiq"'], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`Sidekiq is not installed (run scripts/setup.sh --for-tests): ${found.stderr}`);
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('Sidekiq through the proxy', () => {
  it('runs 500 jobs from two weighted queues, retries included, each exactly once', async () => {
    const env = { ...process.env, REDIS_URL: `redis://127.0.0.1:${stack.proxy.port}/0` };
    // A retried attempt (CI's extra Node lines retry once) starts from an empty store, not the last one's jobs.
    const fresh = await connectDataStore(stack);
    await fresh.flushall();
    fresh.disconnect();
    // Not spawnSync: the proxy runs in this process and must keep answering.
    const push = await run('ruby', [path.join(here, 'push.rb'), String(JOBS), String(FLAKY)], env);
    // Debian pairs Sidekiq 6.4 with redis-rb 4.8, which warns about Sidekiq's own SADD calls.
    const errors = push.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('Redis#sadd will always return an Integer'));
    expect(errors).toEqual([]);
    expect(push.stdout.trim()).toBe(`pushed ${JOBS}`);

    const store = await connectDataStore(stack);
    expect(await store.llen('queue:critical')).toBe(JOBS / 2);
    expect(await store.llen('queue:default')).toBe(JOBS / 2);

    let output = '';
    const sidekiq = trackChild(
      spawn('sidekiq', ['-r', path.join(here, 'worker.rb'), '-q', 'critical,2', '-q', 'default,1', '-c', '5'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    sidekiq.stdout!.on('data', (d) => (output += d));
    sidekiq.stderr!.on('data', (d) => (output += d));
    try {
      await until(
        async () => (await store.hlen('jobs:done')) === JOBS && (await store.zcard('retry')) === 0,
        `${JOBS} jobs done (sidekiq said: ${output.slice(-2000)})`,
        60_000,
      );
    } finally {
      sidekiq.kill('SIGTERM');
      await new Promise((r) => sidekiq.once('exit', r));
    }
    const done = await store.hgetall('jobs:done');
    expect(Object.keys(done)).toHaveLength(JOBS);
    expect(Object.values(done).every((n) => n === '1')).toBe(true);
    // The flaky jobs failed once each, and came back through the retry set.
    const attempts = await store.hgetall('jobs:attempts');
    expect(Object.keys(attempts)).toHaveLength(FLAKY);
    expect(Object.values(attempts).every((n) => n === '2')).toBe(true);
    expect(await store.get('stat:failed')).toBe(String(FLAKY));
    expect(await store.get('stat:processed')).toBe(String(JOBS + FLAKY));
    // Both queues were served: the weighted order interleaves them (critical first more often).
    expect(await store.llen('jobs:order:critical')).toBe(JOBS / 2);
    expect(await store.llen('jobs:order:default')).toBe(JOBS / 2);
    expect(await store.llen('queue:critical')).toBe(0);
    expect(await store.zcard('dead')).toBe(0);
    store.disconnect();
  }, 120_000); // real processes on a loaded 2-core machine: well past the default 30 s
});
