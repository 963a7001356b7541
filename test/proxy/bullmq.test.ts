// BullMQ (real, unchanged) through the proxy: its Lua scripts, BZPOPMIN in the worker and
// XREAD BLOCK in QueueEvents run on the REST upstream through respgate's emulation.
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ blockPollIntervalMs: 50 });
});
afterAll(async () => {
  await stack?.stop();
});

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('BullMQ through the proxy', () => {
  it('processes jobs, retries a failing one to the failed set, runs a delayed job, and reports events', async () => {
    const connection = { host: '127.0.0.1', port: stack.proxy.port, maxRetriesPerRequest: null };
    const queue = new Queue('respgate-test', { connection });
    const events = new QueueEvents('respgate-test', { connection });
    const results: number[] = [];
    const attempts: Record<string, number> = {};
    const worker = new Worker(
      'respgate-test',
      async (job: Job) => {
        attempts[job.name] = (attempts[job.name] ?? 0) + 1;
        if (job.name === 'boom') throw new Error('always fails');
        return job.data.n * 2;
      },
      { connection, drainDelay: 1, concurrency: 4 },
    );
    worker.on('completed', (_job, result: number) => results.push(result));
    const completedEvents: string[] = [];
    const failedEvents: string[] = [];
    events.on('completed', ({ jobId }) => completedEvents.push(jobId));
    events.on('failed', ({ jobId }) => failedEvents.push(jobId));
    try {
      await events.waitUntilReady();
      await worker.waitUntilReady();
      for (let n = 1; n <= 20; n++) await queue.add('double', { n });
      const failing = await queue.add('boom', {}, { attempts: 2 });
      const delayedAt = Date.now();
      const delayed = await queue.add('double', { n: 100 }, { delay: 400 });

      await until(() => results.length === 21 && failedEvents.length === 1, 'jobs and events');
      expect(results.sort((a, b) => a - b)).toEqual([...Array.from({ length: 20 }, (_, i) => (i + 1) * 2), 200]);
      expect(attempts.boom).toBe(2);
      expect(failedEvents).toEqual([failing.id]);
      const delayedJob = await queue.getJob(delayed.id!);
      expect(delayedJob!.finishedOn! - delayedAt).toBeGreaterThanOrEqual(400);
      await until(() => completedEvents.length === 21, 'completed events');
      expect(await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed')).toMatchObject({
        completed: 21,
        failed: 1,
        waiting: 0,
        active: 0,
        delayed: 0,
      });
    } finally {
      await worker.close();
      await events.close();
      await queue.close();
    }
  });
});
