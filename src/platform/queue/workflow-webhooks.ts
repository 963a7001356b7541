// Webhooks of @upstash/workflow (context.createWebhook / context.waitForWebhook). The SDK builds the
// URL itself: `<QSTASH_URL>/v2/workflows/hooks/<userId>/<workflowRunId>/<eventId>`, the user id
// read from the QStash token (base64 of `{"UserID": …, "Password": …}`, the service's form). A
// third party calls it without any token (the URL is the secret): the call, any method, becomes
// the event data of the run's wait, `{method, proto, host, url, header, body (base64)}`, which the
// SDK turns back into a Request. A call before the run waits is kept for its wait (as a notify
// naming the run).
import { readBody } from '../http-body.js';
import { notFound } from './errors.js';
import { callerIp, send, type Call } from './http-exchange.js';
import { notifyEvent, type WorkflowRouteDeps } from './workflow-routes.js';

const HOOK_PATH = /^\/v2\/workflows\/hooks\/([^/]+)\/([^/]+)\/([^/]+)\/?$/;

/** Whether a path (under /queue) is a webhook: those are answered without a token. */
export function isWebhookPath(path: string): boolean {
  return HOOK_PATH.test(path);
}

/** The user id in a token of the service's form, or undefined (then no webhook URL can match). */
export function userIdOf(token: string): string | undefined {
  try {
    const id = (JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { UserID?: unknown }).UserID;
    return typeof id === 'string' && id !== '' ? id : undefined;
  } catch {
    return undefined;
  }
}

export async function webhook(d: WorkflowRouteDeps, c: Call, token: string): Promise<void> {
  const [, user, runId, eventId] = HOOK_PATH.exec(c.rawPath)!.map((p) => decodeURIComponent(p));
  const run = user === userIdOf(token) ? await d.runs.get(runId) : undefined;
  if (!run || run.state !== 'RUN_STARTED') throw notFound(`webhook not found: no running workflow run ${runId} of this user`);
  const body = await readBody(c.req, d.maxBodySize);
  const header: Record<string, string[]> = {};
  for (let i = 0; i < c.req.rawHeaders.length; i += 2) (header[c.req.rawHeaders[i]] ??= []).push(c.req.rawHeaders[i + 1]);
  const event = {
    method: c.req.method ?? 'POST',
    proto: 'http',
    host: c.req.headers.host ?? '',
    url: `/queue${c.rawPath}${c.rawQuery ? `?${c.rawQuery}` : ''}`,
    header,
    body: body.toString('base64'),
  };
  const answers = await notifyEvent(d, runId, eventId, Buffer.from(JSON.stringify(event)), callerIp(c.req));
  send(c.res, 200, answers);
}
