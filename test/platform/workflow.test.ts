// Upstash Workflow on the local queue: workflows written with @upstash/workflow unchanged (its
// generic `serve` behind a plain node http server on loopback, its Client for trigger, notify,
// waiters, logs and cancel) run end to end against the real platform; deliveries are signed and
// verified with the platform's keys by the SDK's Receiver.
import { Client as QstashClient, Receiver } from '@upstash/qstash';
import { Client as WorkflowClient, serve } from '@upstash/workflow';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { startWorkflowApp, until, type WorkflowApp } from '../helpers/workflow-app.js';
import { queuePort } from '../sideports/harness.js';

const SIGNING = { current: 'sig_wfCurrentKey00000000000000000', next: 'sig_wfNextKey0000000000000000000' };

let p: RunningPlatform;
let app: WorkflowApp;
let appUrl: string;
let client: WorkflowClient;
let routes: WorkflowApp['routes'];

function workflowOptions() {
  return {
    qstashClient: new QstashClient({ baseUrl: `${p.url}/queue`, token: p.token }),
    receiver: new Receiver({ currentSigningKey: SIGNING.current, nextSigningKey: SIGNING.next }),
  };
}

async function runLog(workflowRunId: string) {
  const { runs } = await client.logs({ workflowRunId });
  return runs[0];
}

beforeAll(async () => {
  p = await startTestPlatform({ signingKey: SIGNING.current, nextSigningKey: SIGNING.next, queueBackoffScale: 0.001 });
  client = new WorkflowClient({ baseUrl: `${p.url}/queue`, token: p.token });
  app = await startWorkflowApp();
  appUrl = app.url;
  routes = app.routes;
});
afterAll(async () => {
  await app?.close();
  await p?.stop();
});

describe('a multi-step workflow', () => {
  it('runs a step, a sleep, a retried failing step, a call and a waitForEvent resumed by notify, to the end', async () => {
    let flakyRuns = 0;
    const executed: string[] = [];
    const priceCalls: unknown[] = [];
    let finalState: Record<string, unknown> | undefined;
    routes.set('/price', async (req) => {
      priceCalls.push(await req.json());
      return Response.json({ price: 42 }, { headers: { 'X-Shop': 'local' } });
    });
    const { handler } = serve<{ item: string }>(async (context) => {
      const label = await context.run('first', () => {
        executed.push('first');
        return `item ${context.requestPayload.item}`;
      });
      await context.sleep('nap', 1);
      const flaky = await context.run('flaky', () => {
        flakyRuns++;
        if (flakyRuns === 1) throw new Error('transient failure');
        executed.push('flaky');
        return 'recovered';
      });
      const call = await context.call<{ price: number }>('price', {
        url: `${appUrl}/price`,
        method: 'POST',
        body: JSON.stringify({ item: context.requestPayload.item }),
        headers: { 'Content-Type': 'application/json' },
      });
      const { eventData, timeout } = await context.waitForEvent('approval', `approve-${context.workflowRunId}`, { timeout: '1h' });
      await context.run('final', () => {
        executed.push('final');
        finalState = {
          label,
          flaky,
          status: call.status,
          body: call.body,
          shop: call.header['X-Shop'] ?? call.header['x-shop'],
          eventData,
          timeout,
        };
      });
      return { done: true };
    }, workflowOptions());
    routes.set('/order', handler);

    const started = Date.now();
    const { workflowRunId } = await client.trigger({ url: `${appUrl}/order`, body: { item: 'book' } });
    const eventId = `approve-${workflowRunId}`;
    const waiters = await until('the waiter', async () => {
      const w = await client.getWaiters({ eventId });
      return w.length > 0 ? w : undefined;
    });
    expect(waiters).toHaveLength(1);
    expect(waiters[0].url).toBe(`${appUrl}/order`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // the sleep of 1 s came first
    expect((await runLog(workflowRunId)).workflowState).toBe('RUN_STARTED');

    const notified = await client.notify({ eventId, eventData: { approved: 'yes' } });
    expect(notified).toHaveLength(1);
    expect(notified[0].messageId).toMatch(/^msg_/);

    const log = await until('the end of the run', async () => {
      const r = await runLog(workflowRunId);
      return r?.workflowState === 'RUN_SUCCESS' ? r : undefined;
    });
    expect(finalState).toEqual({
      label: 'item book',
      flaky: 'recovered',
      status: 200,
      body: { price: 42 },
      shop: ['local'],
      eventData: { approved: 'yes' },
      timeout: false,
    });
    expect(flakyRuns).toBe(2); // failed once, retried by the queue, then recovered
    expect(executed).toEqual(['first', 'flaky', 'final']); // each step ran once (replayed from the step list after)
    expect(priceCalls).toEqual([{ item: 'book' }]);
    expect(JSON.parse(log.workflowRunResponse!)).toEqual({ done: true });
    expect(log.workflowRunCompletedAt).toBeGreaterThanOrEqual(log.workflowRunCreatedAt);
    const names = log.steps.map((g) => g.steps[0].stepName);
    expect(names).toEqual(['init', 'first', 'nap', 'flaky', 'price', 'approval', 'final']);
    // Once over, a waiter or a step can no longer be added to it.
    expect(await client.notify({ eventId, eventData: 'late' })).toEqual([]);
  }, 30_000);

  it('calls the failure function with the error once the retries are spent, and the run is failed', async () => {
    const failures: Array<Record<string, unknown>> = [];
    let attempts = 0;
    const { handler } = serve<{ order: number }>(
      async (context) => {
        await context.run('charge', () => {
          attempts++;
          throw new Error('card declined');
        });
      },
      {
        ...workflowOptions(),
        failureFunction: async ({ context, failStatus, failResponse }) => {
          failures.push({ runId: context.workflowRunId, failStatus, failResponse, payload: context.requestPayload });
        },
      },
    );
    routes.set('/charge', handler);
    const { workflowRunId } = await client.trigger({ url: `${appUrl}/charge`, body: { order: 7 }, retries: 1 });
    await until('the failure function', async () => (failures.length > 0 ? true : undefined));
    expect(failures).toEqual([{ runId: workflowRunId, failStatus: 500, failResponse: 'card declined', payload: { order: 7 } }]);
    expect(attempts).toBe(2); // the first attempt and the one retry the trigger asked for
    const log = await runLog(workflowRunId);
    expect(log.workflowState).toBe('RUN_FAILED');
    // The failing step's message is in the DLQ, and the run log names its entry.
    const dead = await new QstashClient({ baseUrl: `${p.url}/queue`, token: p.token }).dlq.listMessages();
    const entry = dead.messages.find((m) => m.dlqId === log.dlqId);
    expect(entry?.url).toBe(`${appUrl}/charge`);
    expect(entry?.responseStatus).toBe(500);
  }, 30_000);
  it('a wait that times out resumes the run with timeout: true; sleepUntil waits for its time', async () => {
    let outcome: unknown;
    const { handler } = serve(async (context) => {
      const woke = await context.run('plan', () => Date.now() + 1000);
      await context.sleepUntil('until', Math.ceil(woke / 1000));
      const r = await context.waitForEvent('short', `short-${context.workflowRunId}`, { timeout: 1 });
      await context.run('after', () => {
        outcome = { ...r, late: Date.now() >= woke };
      });
    }, workflowOptions());
    routes.set('/short', handler);
    const { workflowRunId } = await client.trigger({ url: `${appUrl}/short`, body: '' });
    await until('the end of the run', async () => ((await runLog(workflowRunId))?.workflowState === 'RUN_SUCCESS' ? true : undefined));
    expect(outcome).toEqual({ eventData: undefined, timeout: true, late: true });
    expect(await client.getWaiters({ eventId: `short-${workflowRunId}` })).toEqual([]);
  }, 30_000);
  it('parallel steps (Promise.all of context.run) each run once and the run goes on with both results', async () => {
    const ran: string[] = [];
    let joined: unknown;
    const { handler } = serve(async (context) => {
      const [a, b] = await Promise.all([
        context.run('left', () => {
          ran.push('left');
          return 'L';
        }),
        context.run('right', () => {
          ran.push('right');
          return 'R';
        }),
      ]);
      await context.run('join', () => {
        joined = a + b;
      });
    }, workflowOptions());
    routes.set('/parallel', handler);
    const { workflowRunId } = await client.trigger({ url: `${appUrl}/parallel`, body: '' });
    await until('the end of the run', async () => ((await runLog(workflowRunId))?.workflowState === 'RUN_SUCCESS' ? true : undefined));
    expect(joined).toBe('LR');
    expect(ran.sort()).toEqual(['left', 'right']);
  }, 30_000);
  it('a notify naming the run before the run waits is kept for its wait (lookback)', async () => {
    let got: unknown;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { handler } = serve(async (context) => {
      await context.run('slow', async () => {
        await gate;
        return 1;
      });
      const r = await context.waitForEvent('early', `early-${context.workflowRunId}`, { timeout: '1h' });
      await context.run('after', () => {
        got = r;
      });
    }, workflowOptions());
    routes.set('/early', handler);
    const { workflowRunId } = await client.trigger({ url: `${appUrl}/early`, body: '' });
    await until('the run record', async () => ((await runLog(workflowRunId)) ? true : undefined));
    expect(await client.notify({ eventId: `early-${workflowRunId}`, eventData: 'before', workflowRunId })).toEqual([]);
    release();
    await until('the end of the run', async () => ((await runLog(workflowRunId))?.workflowState === 'RUN_SUCCESS' ? true : undefined));
    expect(got).toEqual({ eventData: 'before', timeout: false });
  }, 30_000);
});

describe('runs from outside', () => {
  it('a cancelled run stops: its waiter is gone, its pending messages dropped, a notify finds nobody', async () => {
    const { handler } = serve(async (context) => {
      await context.waitForEvent('forever', 'never-comes', { timeout: '1d' });
      await context.run('after', () => {
        throw new Error('must not run');
      });
    }, workflowOptions());
    routes.set('/waiting', handler);
    const { workflowRunId } = await client.trigger({ url: `${appUrl}/waiting`, body: 'x' });
    await until('the waiter', async () => ((await client.getWaiters({ eventId: 'never-comes' })).length ? true : undefined));
    expect(await client.cancel({ ids: workflowRunId })).toEqual({ cancelled: 1 });
    expect((await runLog(workflowRunId)).workflowState).toBe('RUN_CANCELED');
    expect(await client.getWaiters({ eventId: 'never-comes' })).toEqual([]);
    expect(await client.notify({ eventId: 'never-comes', eventData: 1 })).toEqual([]);
    expect(await client.cancel({ ids: workflowRunId })).toEqual({ cancelled: 0 });
  }, 30_000);

  it('the step list of a run is served for lazy fetches, and 404 once the run is over or unknown', async () => {
    const res = await fetch(`${p.url}/queue/v2/workflows/runs/wfr_unknown`, { headers: { Authorization: `Bearer ${p.token}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(/workflow run wfr_unknown not found/);
  });

  it('a step for a run that does not exist is refused with 400 (the SDK reads it as a cancelled run)', async () => {
    const res = await fetch(`${p.url}/queue/v2/publish/${appUrl}/order`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.token}`, 'Upstash-Workflow-RunId': 'wfr_nope', 'Upstash-Workflow-Init': 'false' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/workflow run wfr_nope is not found/);
  });

  it('a wait without a run id, and a bulk cancel without a target, are refused with 400', async () => {
    const auth = { Authorization: `Bearer ${p.token}` };
    const wait = await fetch(`${p.url}/queue/v2/wait/e1`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: appUrl, step: {} }),
    });
    expect(wait.status).toBe(400);
    expect(((await wait.json()) as { error: string }).error).toMatch(/Upstash-Workflow-RunId/);
    const bulk = await fetch(`${p.url}/queue/v2/workflows/runs`, { method: 'DELETE', headers: auth });
    expect(bulk.status).toBe(400);
  });
});

describe('the queue side port (QWORKFLOW)', () => {
  let port: RunningSideport;
  let io: IORedis;
  const seen: Array<{ payload: unknown; eventData: unknown }> = [];
  const failed: string[] = [];

  /** A RESP2 flat map reply as an object. */
  const obj = (flat: unknown): Record<string, any> => {
    const a = flat as unknown[];
    const o: Record<string, any> = {};
    for (let i = 0; i < a.length; i += 2) o[a[i] as string] = a[i + 1];
    return o;
  };
  const state = async (runId: string) => {
    const { runs } = obj(await io.call('qworkflow', 'logs', 'RUN-ID', runId));
    return runs.length ? obj(runs[0]).workflowState : undefined;
  };

  beforeAll(async () => {
    port = await queuePort({ url: `${p.url}/queue`, token: p.token });
    io = new IORedis({ port: port.port });
    const { handler } = serve<{ n: number }>(
      async (context) => {
        const { eventData } = await context.waitForEvent('go', `port-${context.requestPayload.n}`, { timeout: '1h' });
        await context.run('record', () => {
          if (context.requestPayload.n === 13) throw new Error('unlucky');
          seen.push({ payload: context.requestPayload, eventData });
        });
      },
      { ...workflowOptions(), failureFunction: async ({ failResponse }) => void failed.push(failResponse) },
    );
    routes.set('/port', handler);
  });
  afterAll(async () => {
    io?.disconnect();
    await port?.stop();
  });

  it('triggers a run, lists its waiter, notifies it, and the logs show it ended', async () => {
    const { workflowRunId } = obj(await io.call('qworkflow', 'trigger', `${appUrl}/port`, '{"n":1}', 'RUN-ID', 'from-port'));
    expect(workflowRunId).toBe('wfr_from-port');
    await until('the waiter', async () => (((await io.call('qworkflow', 'waiters', 'port-1')) as unknown[]).length ? true : undefined));
    const notified = (await io.call('qworkflow', 'notify', 'port-1', '"ready"', 'RUN-ID', workflowRunId)) as unknown[];
    expect(notified).toHaveLength(1);
    expect(obj(notified[0]).messageId).toMatch(/^msg_/);
    await until('the end', async () => ((await state(workflowRunId)) === 'RUN_SUCCESS' ? true : undefined));
    expect(seen).toEqual([{ payload: { n: 1 }, eventData: 'ready' }]);
    // The same run id again: the run exists already.
    await expect(io.call('qworkflow', 'trigger', `${appUrl}/port`, '{"n":1}', 'RUN-ID', 'from-port')).rejects.toThrow(/already exists/);
  });

  it('a triggered run reaches the failure function (the default failure URL is the workflow)', async () => {
    const { workflowRunId } = obj(await io.call('qworkflow', 'trigger', `${appUrl}/port`, '{"n":13}', 'RETRIES', '0'));
    await until('the waiter', async () => (((await io.call('qworkflow', 'waiters', 'port-13')) as unknown[]).length ? true : undefined));
    await io.call('qworkflow', 'notify', 'port-13', '1');
    await until('the failure function', async () => (failed.length ? true : undefined));
    expect(failed).toEqual(['unlucky']);
    expect(await state(workflowRunId)).toBe('RUN_FAILED');
  });

  it('cancels runs and counts them', async () => {
    const { workflowRunId } = obj(await io.call('qworkflow', 'trigger', `${appUrl}/port`, '{"n":2}'));
    await until('the waiter', async () => (((await io.call('qworkflow', 'waiters', 'port-2')) as unknown[]).length ? true : undefined));
    expect(obj(await io.call('qworkflow', 'cancel', workflowRunId, 'wfr_unknown'))).toEqual({ cancelled: 1 });
    expect(await state(workflowRunId)).toBe('RUN_CANCELED');
    expect(await io.call('qworkflow', 'waiters', 'port-2')).toEqual([]);
  });

  it('refuses bad input with Redis-style errors', async () => {
    await expect(io.call('qworkflow', 'trigger', 'ftp://x', '{}')).rejects.toThrow(/ERR the workflow url must be a URL starting with http/);
    await expect(io.call('qworkflow', 'trigger', `${appUrl}/port`, '{}', 'RUN-ID', 'a b')).rejects.toThrow(/ERR RUN-ID must be/);
    await expect(io.call('qworkflow', 'trigger', `${appUrl}/port`, '{}', 'SOON')).rejects.toThrow(
      /unknown option 'SOON' for QWORKFLOW TRIGGER/,
    );
    await expect(io.call('qworkflow', 'trigger', `${appUrl}/port`, '{}', 'RETRIES', 'x')).rejects.toThrow(/ERR/);
    await expect(io.call('qworkflow', 'logs', 'COUNT', '0')).rejects.toThrow(/ERR/);
    await expect(io.call('qworkflow', 'logs', 'CURSOR', 'abc')).rejects.toThrow(/invalid cursor/);
    await expect(io.call('qworkflow', 'notify', 'e')).rejects.toThrow(/wrong number of arguments/);
    await expect(io.call('qworkflow', 'notify', 'e', 'd', 'LATER')).rejects.toThrow(/unknown option 'LATER'/);
    await expect(io.call('qworkflow', 'cancel')).rejects.toThrow(/wrong number of arguments/);
  });
});
