// The workflow DLQ (workflow/openapi.yaml, /v2/workflows/dlq…): the DLQ entries of failed workflow
// steps, shown with their run, deleted, resumed (a new run that keeps the steps done before the
// failed one and goes on from it), restarted (a new run from the start), and the failed run's
// failure callback sent again. Each new run takes the failed message's settings, overridden by
// the request's Upstash-Retries, -Delay, -Retry-Delay, -Flow-Control-*, -Label, -Failure-Callback.
import type { Billing } from '../account/billing.js';
import { retriedMessage } from './dlq-retry.js';
import type { Engine } from './engine.js';
import { badRequest, notFound, QueueError } from './errors.js';
import { rawHeaderPairs, send, type Call } from './http-exchange.js';
import { newId } from './ids.js';
import type { QueuedMessage } from './message.js';
import { PublishHeaders } from './publish-options.js';
import type { DlqEntry, QueueRecords } from './records.js';
import { compareKeys, dlqOrderKey, dlqView } from './views.js';
import type { RunRecord, WorkflowRuns } from './workflow-runs.js';
import { listParam } from './filters.js';

export interface WorkflowDlqDeps {
  runs: WorkflowRuns;
  records: QueueRecords;
  engine: Engine;
  billing: Billing;
}

/** /v2/workflows/dlq[/…]; false when the path is none of its endpoints. */
export async function workflowDlqRoute(d: WorkflowDlqDeps, c: Call, method: string, a?: string, b?: string): Promise<boolean> {
  if ((a === 'resume' || a === 'restart') && method === 'POST') {
    if (b) {
      send(c.res, 200, await again(d, c, await entryOf(d, b), a));
      return true;
    }
    const { page, cursor } = await selection(d, c.query);
    const workflowRuns = [];
    for (const e of page) workflowRuns.push(await again(d, c, e, a));
    send(c.res, 200, { workflowRuns, ...(cursor ? { cursor } : {}) });
    return true;
  }
  if (a === 'callback' && b && method === 'POST') {
    send(c.res, 200, await retryFailureFunction(d, await entryOf(d, b)));
    return true;
  }
  if (a && !b && (method === 'GET' || method === 'DELETE')) {
    const entry = await entryOf(d, a);
    if (method === 'GET') send(c.res, 200, await workflowDlqView(d.runs, entry));
    else {
      await d.records.deleteDlq([entry]);
      send(c.res, 200);
    }
    return true;
  }
  if (!a && method === 'GET') {
    send(c.res, 200, await listWorkflowDlq(d, c.query));
    return true;
  }
  if (!a && method === 'DELETE') {
    const { page, cursor } = await selection(d, c.query);
    send(c.res, 200, { deleted: await d.records.deleteDlq(page), ...(cursor ? { cursor } : {}) });
    return true;
  }
  return false;
}

/** GET /v2/workflows/dlq, and GET /v2/dlq?source=workflow (the SDK's dlq.list): `{messages, cursor}`. */
export async function listWorkflowDlq(d: WorkflowDlqDeps, q: URLSearchParams): Promise<Record<string, unknown>> {
  const { page, cursor } = await selection(d, q);
  return { messages: await Promise.all(page.map((e) => workflowDlqView(d.runs, e))), cursor: cursor ?? '' };
}

/** A DLQ entry of a failed workflow step (the DLQ also holds plain messages: those are not found here). */
export function isWorkflowEntry(e: DlqEntry): boolean {
  return (e.job as QueuedMessage).workflow?.callType === 'step';
}

async function entryOf(d: WorkflowDlqDeps, dlqId: string): Promise<DlqEntry> {
  const e = await d.records.getDlq(dlqId);
  if (!e) throw notFound(`workflow run with dlqId ${dlqId} not found in the dead letter queue`);
  if (!isWorkflowEntry(e)) throw badRequest(`dlqId ${dlqId} is not a workflow message: use /v2/dlq/${dlqId}`);
  return e;
}

/** The reference's WorkflowDLQMessage: the dead message with its run and its failure function's state. */
export async function workflowDlqView(runs: WorkflowRuns, e: DlqEntry): Promise<Record<string, unknown>> {
  const m = e.job as QueuedMessage;
  const run = await runs.get(m.workflow!.runId);
  const ff = await runs.failureFunction(m.workflow!.runId);
  return {
    ...dlqView(e),
    workflowRunId: m.workflow!.runId,
    workflowUrl: run?.workflowUrl ?? m.workflow!.url,
    ...(run ? { workflowCreatedAt: run.createdAt } : {}),
    callerIP: m.callerIp,
    ...(m.flowControl ? { flowControlKey: m.flowControl.key } : {}),
    // The reference's field, and the SDK's (@upstash/workflow 1.3.3 reads failureCallbackInfo.state).
    ...(ff ? { failureFunctionState: ff.state, failureCallbackInfo: { state: ff.state } } : {}),
  };
}

const FIELDS = ['cursor', 'count', 'dlqIds', 'fromDate', 'toDate', 'workflowUrl', 'workflowRunId', 'workflowCreatedAt'];
const LIST_FIELDS = ['label', 'failureFunctionState', 'callerIp', 'flowControlKey', 'url', 'responseStatus'];
/** Also taken: the token in the query, and `source` (GET /v2/dlq?source=workflow). */
const ALWAYS = ['qstash_token', 'queue_token', 'source'];

/** The entries a list or bulk call works on: by dlqIds, or filtered, earliest first, from after the cursor. */
async function selection(d: WorkflowDlqDeps, q: URLSearchParams): Promise<{ page: DlqEntry[]; cursor?: string }> {
  for (const name of new Set(q.keys()))
    if (![...FIELDS, ...LIST_FIELDS, ...ALWAYS].includes(name))
      throw badRequest(`unknown query parameter '${name}': the filters of this endpoint are ${[...FIELDS, ...LIST_FIELDS].join(', ')}`);
  const list = (name: string) => listParam(q, name);
  const num = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null) return undefined;
    if (!/^\d+$/.test(v)) throw badRequest(`invalid ${name} '${v}': a whole number is expected`);
    return Number(v);
  };
  const cursor = q.get('cursor') || undefined;
  if (cursor && !/^\d+-\d+$/.test(cursor)) throw badRequest(`invalid cursor '${cursor}'`);
  const count = Math.min(num('count') ?? 100, 100);
  const all = (await d.records.listDlq()).filter(isWorkflowEntry);
  const ids = list('dlqIds');
  if (ids.length > 0) {
    const page = all.filter((e) => ids.includes(e.dlqId));
    const missing = ids.filter((id) => !page.some((e) => e.dlqId === id));
    if (missing.length) throw notFound(`workflow run with dlqId ${missing.join(', ')} not found in the dead letter queue`);
    return { page };
  }
  const [from, to, createdAt] = [num('fromDate'), num('toDate'), num('workflowCreatedAt')];
  const [urls, labels, states, ips, keys, stepUrls, statuses] = ['workflowUrl', ...LIST_FIELDS].map(list);
  const runId = q.get('workflowRunId');
  const at = cursor ? dlqOrderKey(cursor) : undefined;
  const kept: DlqEntry[] = [];
  for (const e of all.sort((x, y) => compareKeys(dlqOrderKey(x.dlqId), dlqOrderKey(y.dlqId)))) {
    const m = e.job as QueuedMessage;
    const run = await d.runs.get(m.workflow!.runId);
    const ff = await d.runs.failureFunction(m.workflow!.runId);
    const keep =
      (at === undefined || compareKeys(dlqOrderKey(e.dlqId), at) > 0) &&
      (from === undefined || e.createdAt >= from) &&
      (to === undefined || e.createdAt <= to) &&
      (runId === null || m.workflow!.runId === runId) &&
      (createdAt === undefined || run?.createdAt === createdAt) &&
      (urls.length === 0 || urls.includes(run?.workflowUrl ?? m.url)) &&
      (labels.length === 0 || (m.labels ?? []).some((l) => labels.includes(l))) &&
      (states.length === 0 || (ff !== undefined && states.includes(ff.state))) &&
      (ips.length === 0 || ips.includes(m.callerIp)) &&
      (keys.length === 0 || (m.flowControl !== undefined && keys.includes(m.flowControl.key))) &&
      (stepUrls.length === 0 || stepUrls.includes(m.url)) &&
      (statuses.length === 0 || statuses.includes(String(e.responseStatus ?? '')));
    if (keep) kept.push(e);
  }
  const page = kept.slice(0, count);
  return { page, ...(kept.length > count ? { cursor: page[page.length - 1].dlqId } : {}) };
}

/**
 * Resume: a new run with the steps done before the failed one, which is delivered again.
 * Restart: a new run from its trigger (the initial payload). The DLQ entry is removed.
 */
async function again(d: WorkflowDlqDeps, c: Call, e: DlqEntry, how: 'resume' | 'restart') {
  const failed = e.job as QueuedMessage;
  const old = await d.runs.get(failed.workflow!.runId);
  if (!old) throw badRequest(`the workflow run ${failed.workflow!.runId} of dlqId ${e.dlqId} is no longer known: it cannot be ${how}d`);
  const now = Date.now();
  const workflowRunId = newId('wfr_', 21);
  const steps = await d.runs.steps(old.workflowRunId);
  const at = steps.findIndex((s) => s.messageId === failed.messageId);
  const resumeFromInit = how === 'resume' && at <= 0;
  const template: QueuedMessage =
    how === 'resume' && !resumeFromInit
      ? failed
      : { ...failed, url: old.workflowUrl, bodyBase64: old.initialBodyBase64, header: old.headers ?? failed.header };
  const m = retriedMessage(template, new PublishHeaders(rawHeaderPairs(c.req)), now);
  m.workflow = { ...failed.workflow!, runId: workflowRunId, url: old.workflowUrl, init: how === 'restart' || resumeFromInit };
  const refused = await d.billing.charge(1);
  if (refused) throw new QueueError(402, refused);
  await d.runs.copy(old, runFields(m, workflowRunId, now), how === 'resume' && at > 0 ? steps.slice(0, at) : []);
  await d.engine.add([m]);
  await d.records.deleteDlq([e]);
  return { workflowRunId, workflowCreatedAt: now };
}

/** The settings the new run's later steps inherit: those of its first message (overrides applied). */
function runFields(
  m: QueuedMessage,
  workflowRunId: string,
  createdAt: number,
): Partial<RunRecord> & { workflowRunId: string; createdAt: number } {
  return {
    workflowRunId,
    createdAt,
    maxRetries: m.maxRetries,
    retryDelay: m.retryDelay,
    failureCallback: m.failureCallback,
    labels: m.labels,
    flowControlKey: m.flowControl?.key,
  };
}

/** POST /v2/workflows/dlq/callback/{dlqId}: the failed run's failure callback, when it failed, is sent again. */
async function retryFailureFunction(d: WorkflowDlqDeps, e: DlqEntry) {
  const runId = (e.job as QueuedMessage).workflow!.runId;
  const ff = await d.runs.failureFunction(runId);
  if (!ff) throw badRequest(`the workflow run ${runId} has no failure callback`);
  if (ff.state !== 'CALLBACK_FAIL')
    throw badRequest(`the failure callback of workflow run ${runId} is ${ff.state}: only a failed one can be retried`);
  const refused = await d.billing.charge(1);
  if (refused) throw new QueueError(402, refused);
  const now = Date.now();
  const m: QueuedMessage = { ...ff.job, messageId: newId('msg_'), notBefore: now, createdAt: now, retried: undefined };
  await d.runs.failureCallbackSent(m);
  await d.engine.add([m]);
  const run = await d.runs.get(runId);
  return { workflowRunId: runId, ...(run ? { workflowCreatedAt: run.createdAt } : {}) };
}
