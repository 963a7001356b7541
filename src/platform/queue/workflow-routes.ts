// The Upstash Workflow endpoints of the queue API, as @upstash/workflow calls them:
// GET/DELETE /v2/workflows/runs/{id} (the step list for a lazy fetch; the end of a run, or its
// cancel with ?cancel=true), DELETE /v2/workflows/runs (bulk cancel), GET /v2/workflows/events
// (= /logs: runs with their steps), POST /v2/wait/{eventId}, POST /v2/notify/[{runId}/]{eventId},
// GET /v2/waiters/{eventId}.
import { readBody } from '../http-body.js';
import { parseDuration } from './duration.js';
import { badRequest, notFound } from './errors.js';
import { callerIp, send, type Call } from './http-exchange.js';
import type { Publisher } from './publisher.js';
import { workflowDlqRoute, type WorkflowDlqDeps } from './workflow-dlq.js';
import { runLogFilter } from './workflow-log-filters.js';
import type { FailureFunctionRecord, RawStep, RunRecord, Waiter } from './workflow-runs.js';
import { listParam } from './filters.js';

export interface WorkflowRouteDeps extends WorkflowDlqDeps {
  publisher: Publisher;
  maxBodySize: number;
}

/** Answers a workflow endpoint; false when the path is none of them. */
export async function workflowRoute(d: WorkflowRouteDeps, c: Call, method: string, parts: string[]): Promise<boolean> {
  const [, resource, a, b] = parts.map((p) => decodeURIComponent(p));
  if (resource === 'workflows' && a === 'dlq') return workflowDlqRoute(d, c, method, b, parts[4] && decodeURIComponent(parts[4]));
  if (resource === 'workflows' && a === 'runs') {
    if (b && method === 'GET') return steps(d, c, b);
    if (b && method === 'DELETE') return endRun(d, c, b);
    if (!b && method === 'DELETE') return bulkCancel(d, c);
  }
  if (resource === 'workflows' && (a === 'events' || a === 'logs') && !b && method === 'GET') return logs(d, c);
  if (resource === 'wait' && a && !b && method === 'POST') return wait(d, c, a);
  if (resource === 'notify' && a && method === 'POST') return notify(d, c, b ? a : undefined, b ?? a);
  if (resource === 'waiters' && a && !b && method === 'GET') {
    send(c.res, 200, (await live(d, a)).map(waiterView));
    return true;
  }
  return false;
}

async function steps(d: WorkflowRouteDeps, c: Call, runId: string): Promise<true> {
  const run = await d.runs.get(runId);
  // The SDK reads a 404 as "the run is over".
  if (!run || run.state !== 'RUN_STARTED') throw notFound(`workflow run ${runId} not found (unknown, or over)`);
  send(c.res, 200, await d.runs.steps(runId));
  return true;
}

/** DELETE /v2/workflows/runs/{id}: the SDK ends a run (the body is its result), or cancels it (?cancel=true). */
async function endRun(d: WorkflowRouteDeps, c: Call, runId: string): Promise<true> {
  const cancel = c.query.get('cancel') === 'true';
  const result = (await readBody(c.req, d.maxBodySize)).toString('utf8');
  const ended = cancel ? await cancelRun(d, runId) : await d.runs.end(runId, 'RUN_SUCCESS', result ? { result } : {});
  if (!ended) throw notFound(`workflow run ${runId} not found (unknown, or already over)`);
  send(c.res, 200);
  return true;
}

async function cancelRun(d: WorkflowRouteDeps, runId: string): Promise<boolean> {
  if (!(await d.runs.end(runId, 'RUN_CANCELED'))) return false;
  await d.runs.dropWaiters(runId);
  for (const job of await d.engine.pending()) if (job.data.workflow?.runId === runId) await d.engine.cancel(job);
  return true;
}

/** DELETE /v2/workflows/runs?workflowRunIds=…|workflowUrl=… (prefix unless workflowUrlExactMatch=true). */
async function bulkCancel(d: WorkflowRouteDeps, c: Call): Promise<true> {
  const ids = listParam(c.query, 'workflowRunIds');
  const url = c.query.get('workflowUrl');
  const exact = c.query.get('workflowUrlExactMatch') === 'true';
  const all = c.query.get('all') === 'true';
  if (ids.length === 0 && url === null && !all) throw badRequest('give workflowRunIds, workflowUrl or all=true');
  let targets = ids;
  if (ids.length === 0) {
    const running = (await d.runs.list(Number.MAX_SAFE_INTEGER, 10_000)).filter((r) => r.state === 'RUN_STARTED');
    targets = running
      .filter((r) => url === null || (exact ? r.workflowUrl === url : r.workflowUrl.startsWith(url)))
      .map((r) => r.workflowRunId);
  }
  let cancelled = 0;
  for (const id of targets) if (await cancelRun(d, id)) cancelled++;
  send(c.res, 200, { cancelled });
  return true;
}

/** GET /v2/workflows/events: runs newest first, each with its steps; cursor = createdAt of the last run. */
async function logs(d: WorkflowRouteDeps, c: Call): Promise<true> {
  const count = Math.min(Number(c.query.get('count') ?? 10) || 10, 1000);
  const cursor = c.query.get('cursor');
  if (cursor && !/^\d+$/.test(cursor)) throw badRequest(`invalid cursor '${cursor}'`);
  const keep = runLogFilter(c.query);
  const runId = c.query.get('workflowRunId');
  const candidates =
    runId && !runId.includes(',')
      ? [await d.runs.get(runId)].filter((r): r is RunRecord => r !== undefined)
      : await d.runs.list(cursor ? Number(cursor) : Number.MAX_SAFE_INTEGER, 10_000);
  const runs: RunRecord[] = [];
  for (const r of candidates) if (keep(r, await d.runs.steps(r.workflowRunId))) runs.push(r);
  const page = runs.slice(0, count);
  const views = await Promise.all(
    page.map(async (r) => runView(r, await d.runs.steps(r.workflowRunId), await d.runs.failureFunction(r.workflowRunId))),
  );
  const more = runs.length > count;
  send(c.res, 200, { cursor: more ? String(page[page.length - 1].createdAt) : '', runs: views });
  return true;
}

function runView(r: RunRecord, raw: RawStep[], ff?: FailureFunctionRecord): Record<string, unknown> {
  const steps = raw.map((s, i) => {
    const body = Buffer.from(s.body, 'base64').toString('utf8');
    const step = i === 0 ? { stepId: 0, stepName: 'init', stepType: 'Initial', out: body, concurrent: 1 } : parseStep(body);
    return {
      type: 'sequential',
      steps: [{ ...step, callType: s.callType, messageId: s.messageId, state: 'STEP_SUCCESS', createdAt: s.createdAt }],
    };
  });
  return {
    workflowRunId: r.workflowRunId,
    workflowUrl: r.workflowUrl,
    workflowState: r.state,
    workflowRunCreatedAt: r.createdAt,
    ...(r.completedAt ? { workflowRunCompletedAt: r.completedAt } : {}),
    ...(r.result !== undefined ? { workflowRunResponse: r.result } : {}),
    ...(r.labels?.length ? { label: r.labels[0], labels: r.labels } : {}),
    ...(r.dlqId ? { dlqId: r.dlqId } : {}),
    ...(r.callerIp ? { workflowRunCallerIp: r.callerIp } : {}),
    ...(ff ? { failureFunction: { messageId: ff.messageId, url: ff.url, state: ff.state, ...(ff.dlqId ? { dlqId: ff.dlqId } : {}) } } : {}),
    ...(r.flowControlKey ? { flowControlKey: r.flowControlKey } : {}),
    ...(r.invoker
      ? {
          invoker: {
            workflowRunId: r.invoker.workflowRunId,
            workflowUrl: r.invoker.workflowUrl,
            workflowRunCreatedAt: r.invoker.workflowRunCreatedAt,
          },
        }
      : {}),
    steps,
  };
}

function parseStep(body: string): Record<string, unknown> {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return { out: body };
  }
}

/**
 * POST /v2/wait/{eventId}, body `{url, timeout, timeoutUrl, timeoutHeaders, step}`: the run waits
 * for the event. Its timeout is a delayed message to timeoutUrl carrying the step with
 * `waitTimeout: true`; a notify cancels it and sends the step with the event data instead.
 */
async function wait(d: WorkflowRouteDeps, c: Call, eventId: string): Promise<true> {
  const body = JSON.parse((await readBody(c.req, d.maxBodySize)).toString('utf8') || '{}') as Record<string, unknown>;
  const runId = headerOf(c, 'upstash-workflow-runid');
  if (!runId) throw badRequest('missing Upstash-Workflow-RunId header: waitForEvent belongs to a workflow run');
  const url = String(body.url ?? '');
  const step = body.step as Record<string, unknown> | undefined;
  if (!url || !step) throw badRequest('the wait request needs url and step');
  const timeoutMs = typeof body.timeout === 'number' ? body.timeout * 1000 : parseDuration(String(body.timeout ?? '7d'));
  if (timeoutMs === undefined) throw badRequest(`invalid timeout '${String(body.timeout)}': use a duration such as 10s, 5m, 7d`);
  const timeoutUrl = String(body.timeoutUrl ?? url);
  const timeoutHeaders = (body.timeoutHeaders ?? {}) as Record<string, string[]>;
  // Notified before it waited (a notify naming the run): the run goes on at once with that data.
  const kept = await d.runs.takeKept(runId, eventId);
  if (kept) {
    await d.publisher.publish({
      destination: url,
      headers: headerPairs(timeoutHeaders),
      body: Buffer.from(JSON.stringify({ ...step, waitEventId: eventId, out: kept.toString('base64'), waitTimeout: false })),
      callerIp: callerIp(c.req),
    });
    send(c.res, 200);
    return true;
  }
  const { results } = await d.publisher.publish({
    destination: timeoutUrl,
    headers: [...headerPairs(timeoutHeaders), ['Upstash-Delay', `${Math.ceil(timeoutMs / 1000)}s`]],
    body: Buffer.from(JSON.stringify({ ...step, waitEventId: eventId, waitTimeout: true })),
    callerIp: callerIp(c.req),
  });
  const now = Date.now();
  await d.runs.addWaiter({
    eventId,
    workflowRunId: runId,
    url,
    deadline: Math.ceil((now + timeoutMs) / 1000),
    timeoutUrl,
    timeoutHeaders,
    step,
    timeoutMessageId: results[0].messageId,
    createdAt: now,
  });
  send(c.res, 200);
  return true;
}

/** POST /v2/notify/[{runId}/]{eventId}: every run waiting for the event resumes with the body as its data. */
async function notify(d: WorkflowRouteDeps, c: Call, runId: string | undefined, eventId: string): Promise<true> {
  const data = await readBody(c.req, d.maxBodySize);
  send(c.res, 200, await notifyEvent(d, runId, eventId, data, callerIp(c.req)));
  return true;
}

/**
 * Resumes every run waiting for the event (only the named run's waiter, when a run is named) with
 * `data` as its event data: `[{waiter, messageId}]`. Nobody waits yet but a run is named: the event
 * is kept for that run's wait (the SDK's lookback).
 */
export async function notifyEvent(
  d: WorkflowRouteDeps,
  runId: string | undefined,
  eventId: string,
  data: Buffer,
  caller: string,
): Promise<Array<Record<string, unknown>>> {
  const answers: Array<Record<string, unknown>> = [];
  for (const w of await live(d, eventId)) {
    if (runId !== undefined && w.workflowRunId !== runId) continue;
    if (!(await d.runs.takeWaiter(w))) continue;
    const timeout = await d.engine.findJob(w.timeoutMessageId);
    if (timeout) await d.engine.cancel(timeout);
    const step = { ...w.step, waitEventId: eventId, out: data.toString('base64'), waitTimeout: false };
    try {
      const { results } = await d.publisher.publish({
        destination: w.url,
        headers: headerPairs(w.timeoutHeaders),
        body: Buffer.from(JSON.stringify(step)),
        callerIp: caller,
      });
      answers.push({ waiter: waiterView(w), messageId: results[0].messageId });
    } catch (err) {
      answers.push({ waiter: waiterView(w), messageId: '', error: err instanceof Error ? err.message : String(err) });
    }
  }
  if (answers.length === 0 && runId !== undefined) await d.runs.keepForLater(runId, eventId, data);
  return answers;
}

/** The waiters of an event whose deadline has not passed (a timed-out one was resumed by its timeout message). */
async function live(d: WorkflowRouteDeps, eventId: string): Promise<Waiter[]> {
  const now = Date.now() / 1000;
  const all = await d.runs.waiters(eventId);
  // Past its deadline a waiter was resumed by its timeout message: it leaves the event now.
  for (const w of all) if (w.deadline <= now) await d.runs.takeWaiter(w);
  return all.filter((w) => w.deadline > now).sort((x, y) => x.createdAt - y.createdAt);
}

function waiterView(w: Waiter): Record<string, unknown> {
  return {
    url: w.url,
    deadline: w.deadline,
    headers: w.timeoutHeaders,
    timeoutUrl: w.timeoutUrl,
    timeoutHeaders: w.timeoutHeaders,
  };
}

function headerPairs(h: Record<string, string[] | string>): Array<[string, string]> {
  return Object.entries(h).flatMap(([name, values]) => (Array.isArray(values) ? values : [values]).map((v): [string, string] => [name, v]));
}

function headerOf(c: Call, name: string): string | undefined {
  const v = c.req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
