// context.invoke of @upstash/workflow: the invoking run publishes a trigger (`Upstash-Workflow-Init:
// true`, `Upstash-Workflow-Invoke: true`) to the other workflow's URL whose body is
// `{body, headers, workflowRunId, workflowRunCreatedAt, workflowUrl, step}`: the invoked run's payload,
// and how to resume the invoker. The queue starts the invoked run with `body` as its payload and,
// when that run ends, publishes the invoker's step with `out` = `{body, isFailed, isCanceled}` (the
// SDK's InvokeStepResponse; `body` is the route's result as the SDK sent it on DELETE).
import { QueueError } from './errors.js';
import type { HeaderMap } from './publish-options.js';

/** The run that invoked another one, and what it needs to be resumed. */
export interface InvokerContext {
  workflowRunId: string;
  workflowUrl: string;
  workflowRunCreatedAt: number;
  /** The headers of the invoker's resuming step (its run id, URL, Init: false, SDK version…). */
  headers: HeaderMap;
  /** The invoke step, sent back with `out`. */
  step: Record<string, unknown>;
}

/** Reads an invoke trigger's body: the invoked run's payload and its invoker. */
export function readInvokeRequest(bodyBase64: string): { payload: Buffer; invoker: InvokerContext } {
  let request: Record<string, unknown>;
  try {
    request = JSON.parse(Buffer.from(bodyBase64, 'base64').toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new QueueError(400, 'invalid invoke request: the body of an Upstash-Workflow-Invoke publish must be JSON');
  }
  const { body, headers, workflowRunId, workflowUrl, step } = request;
  if (typeof workflowRunId !== 'string' || typeof workflowUrl !== 'string' || typeof step !== 'object' || step === null)
    throw new QueueError(400, 'invalid invoke request: workflowRunId, workflowUrl and step of the invoking run are required');
  return {
    payload: Buffer.from(typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body), 'utf8'),
    invoker: {
      workflowRunId,
      workflowUrl,
      workflowRunCreatedAt: Number(request.workflowRunCreatedAt ?? 0),
      headers: headerMap(headers),
      step: step as Record<string, unknown>,
    },
  };
}

/** A publish (publisher.ts's PublishRequest; not imported: the publisher imports the runs, which import this). */
export interface InvokeResultPublish {
  destination: string;
  headers: Array<[string, string]>;
  body: Buffer;
  callerIp: string;
}

/** The publish that resumes the invoker once the invoked run ended (success, failure or cancel). */
export function invokeResult(invoker: InvokerContext, outcome: { state: string; result?: string }, callerIp: string): InvokeResultPublish {
  const out = {
    body: outcome.state === 'RUN_SUCCESS' ? outcome.result : undefined,
    isFailed: outcome.state === 'RUN_FAILED',
    isCanceled: outcome.state === 'RUN_CANCELED',
  };
  const headers = Object.entries(invoker.headers)
    .filter(([name]) => !/^(authorization|host|content-length)$/i.test(name))
    .flatMap(([name, values]) => values.map((v): [string, string] => [name, v]));
  return {
    destination: invoker.workflowUrl,
    headers,
    body: Buffer.from(JSON.stringify({ ...invoker.step, out: JSON.stringify(out) })),
    callerIp,
  };
}

function headerMap(h: unknown): HeaderMap {
  const out: HeaderMap = {};
  if (typeof h !== 'object' || h === null) return out;
  for (const [name, v] of Object.entries(h as Record<string, unknown>)) out[name] = (Array.isArray(v) ? v : [v]).map(String);
  return out;
}
