// Upstash Workflow beyond single runs, with @upstash/workflow unchanged against the real platform:
// context.invoke (a run starting another and getting its result), createWebhook/waitForWebhook,
// the workflow DLQ (list, resume, restart, delete) and the fields of the run logs.
import { randomBytes } from 'node:crypto';
import { Client as QstashClient, Receiver } from '@upstash/qstash';
import { Client as WorkflowClient, serve, type InvokableWorkflow, type RouteFunction } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { startTestPlatform } from '../helpers/platform.js';
import { startWorkflowApp, until, type WorkflowApp } from '../helpers/workflow-app.js';

const SIGNING = { current: 'sig_wfCurrentKey00000000000000000', next: 'sig_wfNextKey0000000000000000000' };
// A token in the service's form (base64 of {UserID, Password}): createWebhook reads the user id from it.
const TOKEN = Buffer.from(JSON.stringify({ UserID: 'wf-user', Password: randomBytes(12).toString('hex') })).toString('base64');

let p: RunningPlatform;
let app: WorkflowApp;
let client: WorkflowClient;

function workflowOptions() {
  return {
    qstashClient: new QstashClient({ baseUrl: `${p.url}/queue`, token: TOKEN }),
    receiver: new Receiver({ currentSigningKey: SIGNING.current, nextSigningKey: SIGNING.next }),
  };
}

/** A workflow served at /wf/<id>, invokable by id (as serveMany does). */
function workflowAt<TPayload, TResult>(id: string, route: RouteFunction<TPayload, TResult>): InvokableWorkflow<TPayload, TResult> {
  const options = workflowOptions();
  app.routes.set(`/wf/${id}`, serve(route, options).handler);
  return { routeFunction: route, options, workflowId: id };
}

async function runLog(workflowRunId: string) {
  const { runs } = await client.logs({ workflowRunId });
  return runs[0];
}

async function ended(workflowRunId: string, state = 'RUN_SUCCESS') {
  return until(`${workflowRunId} ${state}`, async () => {
    const r = await runLog(workflowRunId);
    return r?.workflowState === state ? r : undefined;
  });
}

beforeAll(async () => {
  p = await startTestPlatform({ token: TOKEN, signingKey: SIGNING.current, nextSigningKey: SIGNING.next, queueBackoffScale: 0.001 });
  client = new WorkflowClient({ baseUrl: `${p.url}/queue`, token: TOKEN });
  app = await startWorkflowApp();
});
afterAll(async () => {
  await app?.close();
  await p?.stop();
});

describe('context.invoke', () => {
  it('starts the other workflow with its body and headers, and returns its result; a failed or cancelled one says so', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const child = workflowAt<{ n: number }, { doubled: number }>('child', async (context) => {
      const doubled = await context.run('double', () => context.requestPayload.n * 2);
      seen.push({ payload: context.requestPayload, header: context.headers.get('x-invoke'), runId: context.workflowRunId });
      return { doubled };
    });
    const failing = workflowAt<string, string>('failing', async (context) => {
      await context.run('boom', () => {
        throw new Error('invoked run fails');
      });
      return 'never';
    });
    let results: unknown;
    const parent = workflowAt<string, string>('parent', async (context) => {
      const ok = await context.invoke('call child', {
        workflow: child,
        body: { n: 21 },
        headers: { 'x-invoke': 'from-parent' },
        workflowRunId: `child-of-${context.workflowRunId}`,
      });
      const bad = await context.invoke('call failing', { workflow: failing, body: 'x', retries: 0 });
      await context.run('record', () => {
        results = { ok, bad };
      });
      return 'parent done';
    });
    void parent;
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/parent`, body: 'go' });
    const log = await ended(workflowRunId);
    expect(results).toEqual({
      ok: { body: { doubled: 42 }, isFailed: false, isCanceled: false },
      bad: { isFailed: true, isCanceled: false },
    });
    const childRunId = `wfr_child-of-${workflowRunId}`;
    expect(seen).toEqual([{ payload: { n: 21 }, header: 'from-parent', runId: childRunId }]);
    // The invoked run's log names its invoker; the invoker's shows both invoke steps.
    const childLog = await runLog(childRunId);
    expect(childLog.workflowState).toBe('RUN_SUCCESS');
    expect((childLog as unknown as { invoker: unknown }).invoker).toEqual({
      workflowRunId,
      workflowUrl: `${app.url}/wf/parent`,
      workflowRunCreatedAt: log.workflowRunCreatedAt,
    });
    const stepNames = log.steps.map((g) => g.steps[0].stepName);
    expect(stepNames).toEqual(['init', 'call child', 'call failing', 'record']);
  }, 40_000);

  it('a cancelled invoked run resumes its invoker with isCanceled: true', async () => {
    let outcome: unknown;
    const sleeper = workflowAt('sleeper', async (context) => {
      await context.waitForEvent('forever', `never-${context.workflowRunId}`, { timeout: '1d' });
    });
    workflowAt('waiter-parent', async (context) => {
      const r = await context.invoke('invoke sleeper', { workflow: sleeper, body: 'z', workflowRunId: `s-${context.workflowRunId}` });
      await context.run('after', () => {
        outcome = r;
      });
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/waiter-parent`, body: '' });
    const childRunId = `wfr_s-${workflowRunId}`;
    await until('the invoked run waits', async () =>
      (await client.getWaiters({ eventId: `never-${childRunId}` })).length ? true : undefined,
    );
    expect(await client.cancel({ ids: childRunId })).toEqual({ cancelled: 1 });
    await ended(workflowRunId);
    expect(outcome).toEqual({ isFailed: false, isCanceled: true });
  }, 30_000);

  it('an invoke trigger whose body is not the SDK request is refused with 400', async () => {
    const res = await fetch(`${p.url}/queue/v2/publish/${app.url}/wf/child`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        'Upstash-Workflow-RunId': 'wfr_bad-invoke',
        'Upstash-Workflow-Init': 'true',
        'Upstash-Workflow-Invoke': 'true',
      },
      body: 'not json',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/invalid invoke request/);
  });
});

describe('the workflow DLQ', () => {
  /** A run whose step 'b' fails while `broken` is set (no retries), after step 'a'. */
  function fragile(id: string, counts: { a: number; b: number }, flags: { broken: boolean; failureFails?: number }) {
    const route: RouteFunction<string, string> = async (context) => {
      await context.run('a', () => {
        counts.a++;
        return 'A';
      });
      await context.run('b', () => {
        counts.b++;
        if (flags.broken) throw new Error('b is broken');
        return 'B';
      });
      return `done ${context.requestPayload}`;
    };
    app.routes.set(
      `/wf/${id}`,
      serve(route, {
        ...workflowOptions(),
        failureFunction: async () => {
          if (flags.failureFails && flags.failureFails-- > 0) throw new Error('the failure function fails too');
        },
      }).handler,
    );
  }

  async function failedRun(id: string) {
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/${id}`, body: 'p', retries: 0 });
    await ended(workflowRunId, 'RUN_FAILED');
    // Listed once its failure function has run (CALLBACK_INPROGRESS until then).
    const entry = await until('the DLQ entry', async () => {
      const { messages } = await client.dlq.list({ filter: { workflowRunId } });
      return messages[0]?.failureCallbackInfo?.state === 'CALLBACK_SUCCESS' ? messages : undefined;
    });
    expect(entry).toHaveLength(1);
    return { workflowRunId, entry: entry[0] };
  }

  it('lists a failed run with its run fields; resume goes on from the failed step with the steps done kept', async () => {
    const counts = { a: 0, b: 0 };
    const flags = { broken: true };
    fragile('fragile', counts, flags);
    const { workflowRunId, entry } = await failedRun('fragile');
    const log = await runLog(workflowRunId);
    expect(entry).toMatchObject({
      dlqId: log.dlqId,
      workflowRunId,
      workflowUrl: `${app.url}/wf/fragile`,
      workflowCreatedAt: log.workflowRunCreatedAt,
      url: `${app.url}/wf/fragile`,
      responseStatus: 500,
      failureCallbackInfo: { state: 'CALLBACK_SUCCESS' },
    });
    expect((entry as unknown as { failureFunctionState: string }).failureFunctionState).toBe('CALLBACK_SUCCESS');
    expect(counts).toEqual({ a: 1, b: 1 });
    flags.broken = false;
    const resumed = await client.dlq.resume({ dlqId: entry.dlqId, retries: 2 });
    expect(resumed.workflowRunId).toMatch(/^wfr_/);
    expect(resumed.workflowRunId).not.toBe(workflowRunId);
    const done = await ended(resumed.workflowRunId);
    expect(done.workflowRunCreatedAt).toBe(resumed.workflowCreatedAt);
    expect(JSON.parse(done.workflowRunResponse!)).toBe('done p');
    expect(counts).toEqual({ a: 1, b: 2 }); // 'a' kept from the failed run, 'b' run again
    expect(done.steps.map((g) => g.steps[0].stepName)).toEqual(['init', 'a', 'b']);
    // The entry left the DLQ; the old run stays failed.
    expect((await client.dlq.list({ filter: { workflowRunId } })).messages).toEqual([]);
    expect((await runLog(workflowRunId)).workflowState).toBe('RUN_FAILED');
  }, 40_000);

  it('restart runs the workflow again from its start, with the same payload', async () => {
    const counts = { a: 0, b: 0 };
    const flags = { broken: true };
    fragile('restartable', counts, flags);
    const { entry } = await failedRun('restartable');
    flags.broken = false;
    const restarted = await client.dlq.restart({ dlqId: entry.dlqId });
    const done = await ended(restarted.workflowRunId);
    expect(JSON.parse(done.workflowRunResponse!)).toBe('done p');
    expect(counts).toEqual({ a: 2, b: 2 });
  }, 40_000);

  it('a failed failure function is CALLBACK_FAIL; retrying it runs it again (CALLBACK_SUCCESS); only a failed one can be retried', async () => {
    const counts = { a: 0, b: 0 };
    fragile('ff', counts, { broken: true, failureFails: 1 });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/ff`, body: 'p', retries: 0 });
    await ended(workflowRunId, 'RUN_FAILED');
    const entry = await until('CALLBACK_FAIL', async () => {
      const { messages } = await client.dlq.list({ filter: { workflowRunId, failureFunctionState: 'CALLBACK_FAIL' } });
      return messages[0];
    });
    expect(await client.dlq.retryFailureFunction({ dlqId: entry.dlqId })).toMatchObject({ workflowRunId });
    await until('CALLBACK_SUCCESS', async () => {
      const r = (await runLog(workflowRunId)) as unknown as { failureFunction?: { state: string } };
      return r.failureFunction?.state === 'CALLBACK_SUCCESS' ? true : undefined;
    });
    await expect(client.dlq.retryFailureFunction({ dlqId: entry.dlqId })).rejects.toThrow(
      /CALLBACK_SUCCESS: only a failed one can be retried/,
    );
  }, 40_000);

  it('bulk delete by filter, and bad input: unknown filter 400, unknown dlqId 404, a plain message 400', async () => {
    const counts = { a: 0, b: 0 };
    fragile('deleted', counts, { broken: true });
    const { workflowRunId } = await failedRun('deleted');
    expect(await client.dlq.delete({ filter: { workflowRunId } })).toMatchObject({ deleted: 1 });
    expect((await client.dlq.list({ filter: { workflowRunId } })).messages).toEqual([]);
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const bad = await fetch(`${p.url}/queue/v2/workflows/dlq?workflowRunID=x`, { headers: auth });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/unknown query parameter 'workflowRunID'/);
    const missing = await fetch(`${p.url}/queue/v2/workflows/dlq/resume/1-1`, { method: 'POST', headers: auth });
    expect(missing.status).toBe(404);
    // A plain (non-workflow) message in the DLQ is not a workflow run.
    const q = new QstashClient({ baseUrl: `${p.url}/queue`, token: TOKEN });
    app.routes.set('/plain-fail', async () => new Response('no', { status: 500 }));
    const { messageId } = await q.publish({ url: `${app.url}/plain-fail`, body: 'x', retries: 0 });
    const dead = await until('the plain message in the DLQ', async () => {
      const { messages } = await q.dlq.listMessages({ filter: { messageId } });
      return messages[0];
    });
    const plain = await fetch(`${p.url}/queue/v2/workflows/dlq/restart/${dead.dlqId}`, { method: 'POST', headers: auth });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { error: string }).error).toMatch(/is not a workflow message/);
  }, 40_000);
});

describe('webhooks (createWebhook / waitForWebhook)', () => {
  it('a third party calls the webhook URL without a token; the run gets the request (method, headers, body)', async () => {
    let hook: { webhookUrl: string; eventId: string } | undefined;
    let got: unknown;
    workflowAt('hooked', async (context) => {
      const webhook = await context.createWebhook('make hook');
      await context.run('hand out', () => {
        hook = webhook;
      });
      const { request, timeout } = await context.waitForWebhook('wait hook', webhook, '1h');
      await context.run('read', async () => {
        got = { method: request?.method, signal: request?.headers.get('x-signal'), body: await request?.text(), timeout };
      });
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/hooked`, body: '' });
    const h = await until('the webhook', async () => hook);
    expect(h.webhookUrl).toBe(`${p.url}/queue/v2/workflows/hooks/wf-user/${workflowRunId}/${h.eventId}`);
    await until('the wait', async () => ((await client.getWaiters({ eventId: h.eventId })).length ? true : undefined));
    // Someone else's user id, or a run that is not running: 404.
    const wrong = await fetch(h.webhookUrl.replace('/wf-user/', '/other-user/'), { method: 'POST', body: 'x' });
    expect(wrong.status).toBe(404);
    const res = await fetch(h.webhookUrl, { method: 'PUT', headers: { 'X-Signal': 'go' }, body: 'the payload' });
    expect(res.status).toBe(200);
    await ended(workflowRunId);
    expect(got).toEqual({ method: 'PUT', signal: 'go', body: 'the payload', timeout: false });
    expect((await fetch(h.webhookUrl, { method: 'POST', body: 'late' })).status).toBe(404);
  }, 30_000);

  it('a call before the run waits is kept for its wait', async () => {
    let hook: { webhookUrl: string; eventId: string } | undefined;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let got: unknown;
    workflowAt('early-hook', async (context) => {
      const webhook = await context.createWebhook('make hook');
      await context.run('slow', async () => {
        hook = webhook;
        await gate;
      });
      const { request } = await context.waitForWebhook('wait hook', webhook, '1h');
      await context.run('read', async () => {
        got = await request?.text();
      });
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/early-hook`, body: '' });
    const h = await until('the webhook', async () => hook);
    expect((await fetch(h.webhookUrl, { method: 'POST', body: 'early bird' })).status).toBe(200);
    release();
    await ended(workflowRunId);
    expect(got).toBe('early bird');
  }, 30_000);
});

describe('the run logs', () => {
  it('filter by label, creation time, caller, step message and run pairs; refuse unknown fields and bad values with 400', async () => {
    workflowAt('logged', async (context) => {
      await context.run('only', () => 1);
    });
    const one = await client.trigger({ url: `${app.url}/wf/logged`, body: '1', label: 'blue' });
    const two = await client.trigger({ url: `${app.url}/wf/logged`, body: '2', label: 'green' });
    const [a, b] = [await ended(one.workflowRunId), await ended(two.workflowRunId)];
    const ids = async (filter: Record<string, unknown>) =>
      (await client.logs({ filter: filter as never, count: 100 })).runs
        .map((r) => r.workflowRunId)
        .filter((id) => [a, b].some((x) => x.workflowRunId === id));
    expect(await ids({ label: 'blue' })).toEqual([a.workflowRunId]);
    expect(await ids({ label: ['blue', 'green'] })).toEqual([b.workflowRunId, a.workflowRunId]); // newest first
    expect(await ids({ workflowCreatedAt: b.workflowRunCreatedAt })).toEqual([b.workflowRunId]);
    expect(await ids({ callerIp: '127.0.0.1', label: 'green' })).toEqual([b.workflowRunId]);
    expect(await ids({ messageId: b.steps[1].steps[0].messageId })).toEqual([b.workflowRunId]);
    expect(await ids({ state: 'STEP_RETRY' })).toEqual([]);
    expect(a).toMatchObject({ workflowRunCallerIp: '127.0.0.1', label: 'blue', labels: ['blue'] });
    const pairs = await fetch(
      `${p.url}/queue/v2/workflows/events?workflowRuns=${a.workflowRunId}@${a.workflowRunCreatedAt},${b.workflowRunId}@1`,
      { headers: { Authorization: `Bearer ${TOKEN}` } },
    );
    expect(((await pairs.json()) as { runs: Array<{ workflowRunId: string }> }).runs.map((r) => r.workflowRunId)).toEqual([
      a.workflowRunId,
    ]);
    for (const [query, error] of [
      ['workflowRunID=x', /unknown query parameter 'workflowRunID'/],
      ['state=DONE', /invalid state 'DONE'/],
      ['fromDate=yesterday', /invalid fromDate 'yesterday'/],
      ['workflowRuns=abc', /invalid workflowRuns item 'abc'/],
    ] as const) {
      const res = await fetch(`${p.url}/queue/v2/workflows/events?${query}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
    }
  }, 30_000);
});
