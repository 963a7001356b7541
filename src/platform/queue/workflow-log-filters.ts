// The filters of the workflow run logs (GET /v2/workflows/events, = /logs; workflow/openapi.yaml and
// the SDK's WorkflowLogsListFilters): each field takes several values (repeated or comma-separated,
// OR), fields combine with AND, and an unknown field is refused (a typo must not list everything).
import { badRequest } from './errors.js';
import type { RawStep, RunRecord } from './workflow-runs.js';
import { listParam } from './filters.js';

const FIELDS = [
  'cursor',
  'count',
  'groupBy',
  'trimBody',
  'workflowRunId',
  'workflowUrl',
  'workflowCreatedAt',
  'workflowRuns',
  'state',
  'fromDate',
  'toDate',
  'label',
  'flowControlKey',
  'callerIp',
  'messageId',
  'host',
  'path',
];
const ALWAYS = ['qstash_token', 'queue_token'];
const RUN_STATES = ['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED'];
/** Step states the reference also takes; every step the queue logs is STEP_SUCCESS, so the others select nothing. */
const STEP_STATES = ['STEP_SUCCESS', 'STEP_RETRY', 'STEP_FAILED', 'STEP_PROGRESS', 'STEP_CANCELED'];

/** A predicate over a run and its steps; throws a 400 for an unknown field or a malformed value. */
export function runLogFilter(q: URLSearchParams): (r: RunRecord, steps: RawStep[]) => boolean {
  for (const name of new Set(q.keys()))
    if (!FIELDS.includes(name) && !ALWAYS.includes(name))
      throw badRequest(`unknown query parameter '${name}': the filters of the workflow logs are ${FIELDS.join(', ')}`);
  const list = (name: string) => listParam(q, name);
  const num = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null || v === '') return undefined;
    if (!/^-?\d+$/.test(v)) throw badRequest(`invalid ${name} '${v}': a whole number is expected`);
    return Number(v);
  };
  const groupBy = q.get('groupBy');
  if (groupBy !== null && groupBy !== 'workflowRunId') throw badRequest(`invalid groupBy '${groupBy}': only workflowRunId is served`);
  num('trimBody');
  const states = list('state').map((s) => s.toUpperCase());
  for (const s of states)
    if (!RUN_STATES.includes(s) && !STEP_STATES.includes(s))
      throw badRequest(`invalid state '${s}': one of ${[...RUN_STATES, ...STEP_STATES].join(', ')}`);
  // workflowRuns=ID@TS,…: those runs only (the other filters then ignored).
  const pairs = list('workflowRuns').map((p) => {
    const [id, ts] = p.split('@');
    if (!id || !/^\d+$/.test(ts ?? '')) throw badRequest(`invalid workflowRuns item '${p}': workflowRunId@workflowCreatedAt`);
    return { id, ts: Number(ts) };
  });
  if (pairs.length) return (r) => pairs.some((x) => x.id === r.workflowRunId && x.ts === r.createdAt);
  const [ids, urls, labels, keys, ips, messageIds, hosts, paths] = [
    'workflowRunId',
    'workflowUrl',
    'label',
    'flowControlKey',
    'callerIp',
    'messageId',
    'host',
    'path',
  ].map(list);
  const [createdAt, from, to] = [num('workflowCreatedAt'), num('fromDate'), num('toDate')];
  return (r, steps) => {
    const u = new URL(r.workflowUrl);
    return (
      (ids.length === 0 || ids.includes(r.workflowRunId)) &&
      (urls.length === 0 || urls.some((x) => r.workflowUrl.startsWith(x))) &&
      (states.length === 0 || states.includes(r.state) || (states.includes('STEP_SUCCESS') && steps.length > 1)) &&
      (createdAt === undefined || r.createdAt === createdAt) &&
      (from === undefined || r.createdAt >= from) &&
      (to === undefined || r.createdAt <= to) &&
      (labels.length === 0 || (r.labels ?? []).some((l) => labels.includes(l))) &&
      (keys.length === 0 || (r.flowControlKey !== undefined && keys.includes(r.flowControlKey))) &&
      (ips.length === 0 || (r.callerIp !== undefined && ips.includes(r.callerIp))) &&
      (messageIds.length === 0 || steps.some((s) => messageIds.includes(s.messageId))) &&
      (hosts.length === 0 || hosts.includes(u.host) || hosts.includes(u.hostname)) &&
      (paths.length === 0 || paths.includes(u.pathname))
    );
  };
}
