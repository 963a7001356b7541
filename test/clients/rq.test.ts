// RQ (Debian's python3-rq, unchanged) through the proxy, as real processes: RQ's client enqueues 200
// jobs (each a MULTI/EXEC with pickled, binary job data; one job raises), and `rq worker` — its
// BLPOP on the queue, its registries, heartbeats and results — runs them through the proxy. Every
// job runs exactly once; the failing one lands in the failed registry. Needs python3-rq
// (scripts/setup.sh --for-tests).
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, trackChild } from '../helpers/cleanup.js';
import { connectDataStore, startStack, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/wait.js';

const here = path.join(path.dirname(fileURLToPath(import.meta.url)), 'rq');
const JOBS = 200;

const run = (command: string, args: string[], env: NodeJS.ProcessEnv) => runProcess(command, args, { env, cwd: here });

let stack: Stack;
beforeAll(async () => {
  const found = spawnSync('/usr/bin/python3', ['-c', 'import rq'], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`RQ is not installed (run scripts/setup.sh --for-tests): ${found.stderr}`);
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('RQ through the proxy', () => {
  it('200 jobs enqueued and run through the proxy, each exactly once, the failing one in the failed registry', async () => {
    const env = { ...process.env, PYTHONPATH: here };
    // A retried attempt (CI's extra Node lines retry once) starts from an empty store, not the last one's jobs.
    const fresh = await connectDataStore(stack);
    await fresh.flushall();
    fresh.disconnect();
    const enqueue = await run('/usr/bin/python3', ['enqueue.py', String(stack.proxy.port), String(JOBS)], env);
    expect(enqueue.stderr).toBe('');
    expect(enqueue.stdout.trim()).toBe(`enqueued ${JOBS}`);

    const store = await connectDataStore(stack);
    let output = '';
    // Not --burst: the worker blocks in BLPOP between jobs, as in production.
    const worker = trackChild(
      spawn('/usr/bin/rq', ['worker', '--url', `redis://127.0.0.1:${stack.proxy.port}`, '--with-scheduler', 'default'], {
        env,
        cwd: here,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    worker.stdout!.on('data', (d) => (output += d));
    worker.stderr!.on('data', (d) => (output += d));
    try {
      await until(
        async () => (await store.hlen('rq-test:done')) === JOBS - 1 && (await store.zcard('rq:failed:default')) === 1,
        `${JOBS} jobs run (rq said: ${output.slice(-2000)})`,
        60_000,
      );
    } finally {
      worker.kill('SIGTERM'); // warm shutdown
      await new Promise((r) => worker.once('exit', r));
    }
    const done = await store.hgetall('rq-test:done');
    expect(Object.keys(done)).toHaveLength(JOBS - 1);
    expect(Object.values(done).every((n) => n === '1')).toBe(true);
    expect(await store.zrange('rq:failed:default', 0, -1)).toEqual(['job-boom']);
    expect(await store.zcard('rq:finished:default')).toBe(JOBS - 1);
    expect(await store.llen('rq:queue:default')).toBe(0);
    // RQ's own view, through the proxy: statuses and the failing job's traceback.
    const check = await run(
      '/usr/bin/python3',
      [
        '-c',
        `
import sys, redis
from rq import Queue
from rq.job import Job
conn = redis.Redis(port=int(sys.argv[1]))
q = Queue('default', connection=conn)
boom = Job.fetch('job-boom', connection=conn)
first = Job.fetch('job-0', connection=conn)
print(len(q), len(q.failed_job_registry), len(q.finished_job_registry), boom.get_status(), 'ValueError' in (boom.exc_info or ''), first.get_status(), first.result)
`,
        String(stack.proxy.port),
      ],
      env,
    );
    expect(check.stderr).toBe('');
    expect(check.stdout.trim()).toBe(`0 1 ${JOBS - 1} failed True finished (0, 256)`);
    store.disconnect();
  }, 120_000); // real processes on a loaded 2-core machine: well past the default 30 s
});
