// Bull 4.x (real, unchanged) through the proxy. Bull queues its Lua scripts inside MULTI (addBulk,
// moving a job to failed or to delayed), as EVAL then EVALSHA with msgpack-packed (binary) arguments:
// such a transaction runs upstream as one script, which runs the queued scripts' bodies itself
// (upstream/transaction-scripts.ts). Before that, every queued script answered "not allowed from
// script", which Bull ignores: addBulk returned jobs without ids and queued nothing, and a job that
// failed for good stayed active for ever.
import Queue from 'bull';
import type { Job } from 'bull';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ blockPollIntervalMs: 50 });
});
afterAll(async () => {
  await stack?.stop();
});

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('Bull 4.x through the proxy', () => {
  it('addBulk returns jobs with ids that are processed; a job failing for good ends failed; a delayed job runs after its delay', async () => {
    const queue = new Queue('respgate-bull', {
      redis: { host: '127.0.0.1', port: stack.proxy.port },
      settings: { drainDelay: 1, stalledInterval: 60_000 },
    });
    const results: number[] = [];
    const attempts: Record<string, number> = {};
    queue.on('completed', (_job: Job, result: number) => results.push(result));
    const failedEvents: string[] = [];
    queue.on('failed', (job: Job) => failedEvents.push(String(job.id)));
    try {
      await queue.isReady();
      await queue.empty();
      const processor = async (job: Job): Promise<number> => {
        attempts[job.name] = (attempts[job.name] ?? 0) + 1;
        if (job.name === 'boom') throw new Error('always fails');
        return job.data.n * 2;
      };
      void queue.process('double', 4, processor);
      void queue.process('boom', 1, processor);

      // Bull adds a bulk in one MULTI of its addJob script (EVAL, then EVALSHA on the same connection).
      const bulk = await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'double', data: { n: i + 1 } })));
      expect(bulk).toHaveLength(20);
      for (const job of bulk) expect(job.id, 'a job of addBulk without an id was not queued').toBeTruthy();
      expect(new Set(bulk.map((j) => String(j.id))).size).toBe(20);
      const second = await queue.addBulk([{ name: 'double', data: { n: 21 } }]);
      expect(second[0].id).toBeTruthy();

      const failing = await queue.add('boom', {}, { attempts: 2 });
      const delayedAt = Date.now();
      const delayed = await queue.add('double', { n: 100 }, { delay: 400 });

      await until(async () => {
        const counts = await queue.getJobCounts();
        return counts.completed === 22 && counts.failed === 1 && counts.active === 0;
      }, 'all jobs finished');
      expect(results.sort((a, b) => a - b)).toEqual([...Array.from({ length: 21 }, (_, i) => (i + 1) * 2), 200]);

      const failed = await queue.getJob(failing.id);
      expect(await failed!.getState()).toBe('failed');
      expect(failed!.attemptsMade).toBe(2);
      expect(failed!.failedReason).toBe('always fails');
      expect(attempts.boom).toBe(2);
      expect(failedEvents.filter((id) => id === String(failing.id)).length).toBeGreaterThanOrEqual(1);

      const delayedJob = await queue.getJob(delayed.id);
      expect(await delayedJob!.getState()).toBe('completed');
      expect(delayedJob!.finishedOn! - delayedAt).toBeGreaterThanOrEqual(400);
      expect(await queue.getJobCounts()).toMatchObject({ waiting: 0, active: 0, delayed: 0, completed: 22, failed: 1 });
    } finally {
      await queue.close();
    }
  }, 60_000);
});
