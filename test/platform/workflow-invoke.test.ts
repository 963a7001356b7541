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
