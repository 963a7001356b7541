// The queue area's HTTP API (paths under /queue): /v2/publish, /v2/enqueue, /v2/batch, /v2/topics,
// /v2/messages, /v2/queues, /v2/dlq, /v2/schedules, /v2/events (/v2/logs), /v2/keys, /v2/flowControl,
// /v2/globalParallelism, and Upstash Workflow's /v2/workflows, /v2/wait, /v2/notify, /v2/waiters. Request and
// response shapes follow the real service and its official SDK (@upstash/qstash).
import { safeEqual } from '../../safe-equal.js';
import type http from 'node:http';
import { BodyTooLargeError, readBody } from '../http-body.js';
import { callerIp, destinationOf, rawHeaderPairs, readJson, send, urlResult, type Call } from './http-exchange.js';
import { parseListQuery, stateMatches, type Filterable } from './filters.js';
import { compareKeys, dlqOrderKey, dlqView, groupView } from './views.js';
import { flowControlRoute, globalParallelism, type FlowControlRouteDeps } from './flow-control-routes.js';
import type { Billing } from '../account/billing.js';
import type { Engine } from './engine.js';
import { badRequest, notFound, QueueError } from './errors.js';
import { retriedMessage } from './dlq-retry.js';
import { bodyFields, redactHeaders } from './redact.js';
import { newId } from './ids.js';
import { flowControlView, messageView, type QueuedMessage } from './message.js';
import { checkUrl, PublishHeaders, readPublishOptions } from './publish-options.js';
import { checkQueueName, type Publisher } from './publisher.js';
import type { DlqEntry, LogEvent, QueueRecords, ScheduleRecord, UrlGroup } from './records.js';
import type { Schedules } from './schedules.js';
import { isWorkflowEntry, listWorkflowDlq } from './workflow-dlq.js';
import { workflowRoute } from './workflow-routes.js';
import { isWebhookPath, webhook } from './workflow-webhooks.js';
import type { WorkflowRuns } from './workflow-runs.js';

export interface RouteDeps {
  token: () => string;
  /** The read-only token (GET only), when there is one. */
  readonlyToken?: () => string;
  records: QueueRecords;
  engine: Engine;
  publisher: Publisher;
  schedules: Schedules;
  billing: Billing;
  maxBodySize: number;
  keys: () => { current: string; next: string };
  flowControl: FlowControlRouteDeps;
  rotateKeys: () => Promise<{ current: string; next: string }>;
  workflows: WorkflowRuns;
}

const UNAUTHORIZED =
  'Unauthorized: the token is missing or invalid; send Authorization: Bearer <QSTASH_TOKEN> (or ?qstash_token=<QSTASH_TOKEN> on a publish)';

/**
 * The read-only token (the service's "read-only token": logs, messages, schedules… but no publish,
 * no creation, no change) may only read. **Choice**: the signing keys are not readable with it
 * (they let whoever holds them forge deliveries).
 */
function checkReadOnly(method: string, parts: string[]): void {
  if (method === 'GET' && parts[1] !== 'keys') return;
  throw new QueueError(
    403,
    `Forbidden: the read-only token can only read (GET) and not the signing keys; ${method} /${parts.join('/')} needs QSTASH_TOKEN`,
  );
}

export class QueueRoutes {
  constructor(private readonly d: RouteDeps) {}

  async handle(req: http.IncomingMessage, res: http.ServerResponse, path: string, rawQuery: string): Promise<void> {
    const query = new URLSearchParams(rawQuery);
    try {
      // A workflow webhook is called by third parties, without a token (its URL is the secret).
      if (isWebhookPath(path))
        return await webhook(this.workflowDeps(), { req, res, parts: [], query, rawPath: path, rawQuery }, this.d.token());
      const access = this.access(req, query);
      if (!access) throw new QueueError(401, UNAUTHORIZED);
      const parts = path.split('/').filter((p, i) => i > 0 || p !== '');
      if (parts[0] === '') parts.shift();
      if (access === 'readonly') checkReadOnly(req.method ?? 'GET', parts);
      await this.route({ req, res, parts, query, rawPath: path, rawQuery });
    } catch (err) {
      if (err instanceof QueueError) return send(res, err.status, { error: err.message });
      if (err instanceof BodyTooLargeError)
        return send(res, 413, {
          error: `message body too large: ${err.actual} bytes, the limit is ${this.d.maxBodySize} bytes (--max-request-size)`,
        });
      if (err instanceof SyntaxError) return send(res, 400, { error: `the request body is not valid JSON: ${err.message}` });
      throw err;
    }
  }

  /** Which token the request carries: the queue token (full access), the read-only token, or none. */
  private access(req: http.IncomingMessage, query: URLSearchParams): 'full' | 'readonly' | undefined {
    const auth = req.headers.authorization;
    const given = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : (query.get('qstash_token') ?? query.get('queue_token'));
    if (!given) return undefined;
    if (safeEqual(given, this.d.token())) return 'full';
    const readonly = this.d.readonlyToken?.();
    return readonly && safeEqual(given, readonly) ? 'readonly' : undefined;
  }

  private async route(c: Call): Promise<void> {
    const { parts } = c;
    const method = c.req.method ?? 'GET';
    if (parts[0] !== 'v2') throw notFound(`no such endpoint: ${method} /queue${c.rawPath} (the API is under /queue/v2/…)`);
    const [, resource, a, b] = parts;
    switch (resource) {
      case 'publish':
        if (method === 'POST') return this.publish(c, destinationOf(c, 2));
        break;
      case 'enqueue':
        if (method === 'POST' && a) return this.publish(c, destinationOf(c, 3), decodeURIComponent(a));
        break;
      case 'batch':
        if (method === 'POST') return this.batch(c);
        break;
      case 'topics':
        return this.topics(c, method, a && decodeURIComponent(a), b);
      case 'messages':
        return this.messages(c, method, a && decodeURIComponent(a));
      case 'queues':
        return this.queues(c, method, a && decodeURIComponent(a), b);
      case 'dlq':
        return this.dlq(c, method, a && decodeURIComponent(a), b && decodeURIComponent(b));
      case 'schedules':
        return this.schedules(c, method, a, b);
      case 'events':
      case 'logs':
        if (method === 'GET') return this.events(c, resource);
        break;
      case 'flowControl':
        if (await flowControlRoute(this.d.flowControl, c, method, a && decodeURIComponent(a), b)) return;
        break;
      case 'globalParallelism':
        if (method === 'GET' && !a) return globalParallelism(this.d.flowControl, c);
        break;
      case 'workflows':
      case 'wait':
      case 'notify':
      case 'waiters': {
        if (await workflowRoute(this.workflowDeps(), c, method, parts)) return;
        break;
      }
      case 'keys':
        if (method === 'GET' && !a) return send(c.res, 200, this.d.keys());
        if (method === 'POST' && a === 'rotate') return send(c.res, 200, await this.d.rotateKeys());
        break;
    }
    throw notFound(`no such endpoint: ${method} /queue${c.rawPath}`);
  }

  // --- publish, enqueue, batch
  private async publish(c: Call, destination: string, queueName?: string): Promise<void> {
    if (!destination)
      throw badRequest('no destination: publish to /v2/publish/<https://your.endpoint/path> or /v2/publish/<url group name>');
    const body = await readBody(c.req, this.d.maxBodySize);
    const { group, results } = await this.d.publisher.publish({
      destination,
      headers: rawHeaderPairs(c.req),
      query: c.query,
      body,
      callerIp: callerIp(c.req),
      ...(queueName !== undefined ? { queueName } : {}),
    });
    // 200 (the reference), or 202 Accepted when the message was a duplicate (the deduplication page).
    send(c.res, results.every((r) => r.deduplicated) ? 202 : 200, group ? results : urlResult(results[0]));
  }

  private async batch(c: Call): Promise<void> {
    const items = JSON.parse((await readBody(c.req, this.d.maxBodySize)).toString('utf8')) as unknown;
    if (!Array.isArray(items)) throw badRequest('the batch body must be a JSON array of {destination, headers?, body?, queue?}');
    // Every item is checked before any is committed: a bad later item leaves nothing published.
    const prepared = [];
    for (const [i, item] of items.entries()) {
      const it = item as { destination?: unknown; headers?: Record<string, string>; body?: unknown; queue?: unknown };
      if (typeof it?.destination !== 'string' || it.destination === '')
        throw badRequest(`batch item ${i}: destination (a URL or a URL group name) is required`);
      const headers = Object.entries(it.headers ?? {}).map(([k, v]) => [k, String(v)] as [string, string]);
      const body =
        it.body === undefined || it.body === null
          ? Buffer.alloc(0)
          : Buffer.from(typeof it.body === 'string' ? it.body : JSON.stringify(it.body));
      try {
        prepared.push(
          await this.d.publisher.prepare({
            destination: it.destination,
            headers,
            body,
            callerIp: callerIp(c.req),
            ...(typeof it.queue === 'string' ? { queueName: it.queue } : {}),
          }),
        );
      } catch (err) {
        if (err instanceof QueueError) throw new QueueError(err.status, `batch item ${i}: ${err.message}`);
        throw err;
      }
    }
    const published = await this.d.publisher.commit(prepared);
    send(
      c.res,
      200,
      published.map(({ group, results }) => (group ? results : urlResult(results[0]))),
    );
  }

  // --- URL groups
  private async topics(c: Call, method: string, name: string | undefined, sub: string | undefined): Promise<void> {
    const r = this.d.records;
    if (!name) {
      if (method === 'GET') return send(c.res, 200, (await r.listGroups()).map(groupView));
      throw notFound(`no such endpoint: ${method} /queue/v2/topics`);
    }
    const group = await r.getGroup(name);
    if (sub === 'endpoints') {
      const body = (await readJson(c)) as { endpoints?: Array<{ name?: string; url?: string }> };
      if (!Array.isArray(body.endpoints) || body.endpoints.length === 0)
        throw badRequest('the body must be {"endpoints": [{"name"?: "...", "url": "https://..."}]} with at least one endpoint');
      const now = Date.now();
      if (method === 'POST') {
        checkGroupName(name);
        const g: UrlGroup = group ?? { name, createdAt: now, updatedAt: now, endpoints: [] };
        for (const e of body.endpoints) {
          if (typeof e.url !== 'string') throw badRequest('every endpoint needs a url (http:// or https://)');
          checkUrl(e.url, 'endpoint');
          const existing = g.endpoints.find((x) => x.url === e.url || (e.name && x.name === e.name));
          if (existing) Object.assign(existing, e.name ? { name: e.name, url: e.url } : { url: e.url });
          else g.endpoints.push(e.name ? { name: e.name, url: e.url } : { url: e.url });
        }
        g.updatedAt = now;
        await r.putGroup(g);
        return send(c.res, 200);
      }
      if (method === 'DELETE') {
        if (!group) throw notFound(topicNotFound(name));
        const drop = (x: { name?: string; url: string }) =>
          body.endpoints!.some((e) => (e.url !== undefined && e.url === x.url) || (e.name !== undefined && e.name === x.name));
        group.endpoints = group.endpoints.filter((x) => !drop(x));
        group.updatedAt = now;
        // A group with no endpoint left is removed, as the service does.
        if (group.endpoints.length === 0) await r.deleteGroup(name);
        else await r.putGroup(group);
        return send(c.res, 200);
      }
    }
    if (sub === undefined) {
      if (method === 'GET') {
        if (!group) throw notFound(topicNotFound(name));
        return send(c.res, 200, groupView(group));
      }
      if (method === 'DELETE') {
        if (!(await r.deleteGroup(name))) throw notFound(topicNotFound(name));
        return send(c.res, 200);
      }
      if (method === 'PATCH') {
        if (!group) throw notFound(topicNotFound(name));
        const body = (await readJson(c)) as { headers?: Record<string, unknown> };
        if (typeof body.headers !== 'object' || body.headers === null || Array.isArray(body.headers)) {
          throw badRequest('the body must be {"headers": {"<Header-Name>": "value" or ["value", …]}}');
        }
        const headers: Record<string, string[]> = {};
        for (const [k, v] of Object.entries(body.headers)) {
          const values = Array.isArray(v) ? v : [v];
          if (!values.every((x) => typeof x === 'string')) throw badRequest(`header ${k}: a value must be a string or an array of strings`);
          headers[k] = values as string[];
        }
        // The defaults must themselves be valid publish settings (a bad Upstash-Retries is refused now, not at publish).
        readPublishOptions(new PublishHeaders(Object.entries(headers).flatMap(([k, vs]) => vs.map((v) => [k, v] as [string, string]))));
        group.headers = headers;
        group.updatedAt = Date.now();
        await r.putGroup(group);
        return send(c.res, 200);
      }
    }
    throw notFound(`no such endpoint: ${method} /queue${c.rawPath}`);
  }

  // --- messages
  private async messages(c: Call, method: string, id: string | undefined): Promise<void> {
    const engine = this.d.engine;
    if (id) {
      const job = await engine.findJob(id);
      if (!job) throw notFound(`message ${id} not found (delivered, cancelled or unknown)`);
      if (method === 'GET') return send(c.res, 200, messageView(job.data));
      if (method === 'DELETE') {
        await engine.cancel(job);
        return send(c.res, 200, { cancelled: 1 });
      }
    } else if (method === 'DELETE') {
      // Explicit ids ignore the other filters; without count every match goes, earliest first.
      const sel = parseListQuery('messages', c.query);
      const keep = sel.ids.length > 0 ? (m: QueuedMessage) => sel.ids.includes(m.messageId) : sel.keep;
      const seen = new Set<string>();
      const chosen = (await engine.pending())
        .filter((job) => job.data.kind === 'message' && !seen.has(job.data.messageId) && seen.add(job.data.messageId) && keep(job.data))
        .sort((x, y) => x.data.createdAt - y.data.createdAt)
        .slice(0, sel.count ?? Infinity);
      for (const job of chosen) await engine.cancel(job);
      return send(c.res, 200, { cancelled: chosen.length });
    }
    throw notFound(`no such endpoint: ${method} /queue${c.rawPath}`);
  }

  // --- named queues
  private async queues(c: Call, method: string, name: string | undefined, action: string | undefined): Promise<void> {
    const r = this.d.records;
    if (!name) {
      if (method === 'GET') return send(c.res, 200, await Promise.all((await r.listQueues()).map((q) => this.queueView(q))));
      if (method === 'POST') {
        const body = (await readJson(c)) as { queueName?: unknown; parallelism?: unknown; paused?: unknown };
        if (typeof body.queueName !== 'string') throw badRequest('queueName is required: {"queueName": "my-queue", "parallelism": 1}');
        checkQueueName(body.queueName);
        const parallelism = body.parallelism ?? 1;
        if (typeof parallelism !== 'number' || !Number.isInteger(parallelism) || parallelism < 1)
          throw badRequest(`parallelism must be a whole number >= 1, got ${JSON.stringify(parallelism)}`);
        const now = Date.now();
        const existing = await r.getQueue(body.queueName);
        const q = {
          name: body.queueName,
          createdAt: existing?.createdAt ?? now,
          updatedAt: now,
          parallelism,
          paused: body.paused === true,
        };
        await r.putQueue(q);
        await this.d.engine.openNamedQueue(q);
        return send(c.res, 200);
      }
    } else {
      const q = await r.getQueue(name);
      if (!q) throw notFound(`queue ${name} not found`);
      if (!action && method === 'GET') return send(c.res, 200, await this.queueView(q));
      if (!action && method === 'DELETE') {
        await this.d.engine.deleteNamedQueue(name);
        await r.deleteQueue(name);
        return send(c.res, 200);
      }
      if ((action === 'pause' || action === 'resume') && method === 'POST') {
        const updated = { ...q, paused: action === 'pause', updatedAt: Date.now() };
        await r.putQueue(updated);
        await this.d.engine.openNamedQueue(updated);
        return send(c.res, 200);
      }
    }
    throw notFound(`no such endpoint: ${method} /queue${c.rawPath}`);
  }

  private async queueView(q: { name: string; createdAt: number; updatedAt: number; parallelism: number; paused: boolean }) {
    return {
      createdAt: q.createdAt,
      updatedAt: q.updatedAt,
      name: q.name,
      parallelism: q.parallelism,
      lag: await this.d.engine.lag(q.name),
      paused: q.paused,
    };
  }

  private workflowDlqDeps() {
    return { runs: this.d.workflows, records: this.d.records, engine: this.d.engine, billing: this.d.billing };
  }

  private workflowDeps() {
    return { ...this.workflowDlqDeps(), publisher: this.d.publisher, maxBodySize: this.d.maxBodySize };
  }

  // --- dead letter queue
  private async dlq(c: Call, method: string, a: string | undefined, b: string | undefined): Promise<void> {
    const r = this.d.records;
    if (a === 'retry' && method === 'POST') {
      if (b) {
        const entry = await r.getDlq(b);
        if (!entry) throw notFound(dlqNotFound(b));
        return send(c.res, 201, { messageId: await this.retryFromDlq(entry, c) });
      }
      const { page, cursor, missing } = await this.dlqSelection(c.query);
      if (missing.length > 0) throw notFound(dlqNotFound(missing.join(', ')));
      const responses = [];
      for (const entry of page) responses.push({ messageId: await this.retryFromDlq(entry, c) });
      return send(c.res, 201, { cursor: cursor ?? '', responses });
    }
    if (a) {
      const entry = await r.getDlq(a);
      if (!entry) throw notFound(dlqNotFound(a));
      if (method === 'GET') return send(c.res, 200, dlqView(entry));
      if (method === 'DELETE') {
        await r.deleteDlq([entry]);
        return send(c.res, 200, { deleted: 1 });
      }
    } else {
      if (method === 'GET') {
        // source=workflow (the workflow SDK's dlq.list): the workflow DLQ, with its filters.
        if (c.query.get('source') === 'workflow') return send(c.res, 200, await listWorkflowDlq(this.workflowDlqDeps(), c.query));
        const { page, cursor } = await this.dlqSelection(c.query);
        return send(c.res, 200, { messages: page.map(dlqView), ...(cursor ? { cursor } : {}) });
      }
      if (method === 'DELETE') {
        const { page, cursor } = await this.dlqSelection(c.query);
        const deleted = await r.deleteDlq(page);
        return send(c.res, 200, { deleted, ...(cursor ? { cursor } : {}) });
      }
    }
    throw notFound(`no such endpoint: ${method} /queue${c.rawPath}`);
  }

  /**
   * The DLQ entries a list, bulk delete or bulk retry works on, one page: by dlqIds (the other
   * filters ignored; `missing` names the unknown ones), or filtered, in the asked order, from
   * after the cursor (a DLQ id: the entry itself may be gone since, as after a bulk delete).
   */
  private async dlqSelection(q: URLSearchParams): Promise<{ page: DlqEntry[]; cursor?: string; missing: string[] }> {
    const sel = parseListQuery('dlq', q);
    const all = await this.d.records.listDlq();
    if (sel.ids.length > 0) {
      const page = all.filter((e) => sel.ids.includes(e.dlqId));
      return { page, missing: sel.ids.filter((id) => !page.some((e) => e.dlqId === id)) };
    }
    const sign = sel.order === 'earliestFirst' ? 1 : -1;
    const at = sel.cursor ? dlqOrderKey(sel.cursor) : undefined;
    const list = all
      .filter((e) => sel.source === undefined || (sel.source === 'workflow') === isWorkflowEntry(e))
      .filter((e) => sel.keep(dlqFilterable(e), e.createdAt))
      .filter((e) => sel.responseStatus.length === 0 || sel.responseStatus.includes(e.responseStatus ?? 0))
      .filter((e) => at === undefined || sign * compareKeys(dlqOrderKey(e.dlqId), at) > 0)
      .sort((x, y) => sign * compareKeys(dlqOrderKey(x.dlqId), dlqOrderKey(y.dlqId)));
    const count = sel.count ?? 100;
    const page = list.slice(0, count);
    return { page, missing: [], ...(list.length > count ? { cursor: page[page.length - 1].dlqId } : {}) };
  }

  private async retryFromDlq(entry: DlqEntry, c: Call): Promise<string> {
    const message = retriedMessage(entry.job as QueuedMessage, new PublishHeaders(rawHeaderPairs(c.req)), Date.now());
    const refused = await this.d.billing.charge(1);
    if (refused) throw new QueueError(402, refused);
    await this.d.engine.add([message]);
    await this.d.records.deleteDlq([entry]);
    return message.messageId;
  }

  // --- schedules
  private async schedules(c: Call, method: string, a: string | undefined, action: string | undefined): Promise<void> {
    const r = this.d.records;
    // POST /v2/schedules/<destination> creates; POST /v2/schedules/<id>/pause|resume acts.
    if (method === 'POST' && a && !(c.parts.length === 4 && (action === 'pause' || action === 'resume'))) {
      return this.createSchedule(c, destinationOf(c, 2));
    }
    if (!a) {
      if (method === 'GET') return send(c.res, 200, await Promise.all((await r.listSchedules()).map((s) => this.scheduleView(s))));
    } else {
      const id = decodeURIComponent(a);
      const s = await r.getSchedule(id);
      if (!s) throw notFound(`schedule ${id} not found`);
      if (!action && method === 'GET') return send(c.res, 200, await this.scheduleView(s));
      if (!action && method === 'DELETE') {
        await this.d.schedules.delete(id);
        return send(c.res, 200);
      }
      if ((action === 'pause' || action === 'resume') && (method === 'POST' || method === 'PATCH')) {
        if (action === 'pause') await this.d.schedules.pause(s);
        else await this.d.schedules.resume(s);
        return send(c.res, 200);
      }
    }
    throw notFound(`no such endpoint: ${method} /queue${c.rawPath}`);
  }

  private async createSchedule(c: Call, destination: string): Promise<void> {
    const headers = rawHeaderPairs(c.req).filter(([n]) => !/^(authorization|host|connection|content-length|transfer-encoding)$/i.test(n));
    for (const [name, value] of c.query) if (/^(upstash|service)-/i.test(name)) headers.push([name, value]);
    const h = new PublishHeaders(headers);
    const options = readPublishOptions(h);
    if (!options.cron) throw badRequest('the Upstash-Cron header is required: a cron expression such as "*/5 * * * *"');
    if (/^https?:\/\//i.test(destination) || /[:/.]/.test(destination)) checkUrl(destination);
    else if (!(await this.d.records.getGroup(destination))) throw notFound(topicNotFound(destination));
    const body = await readBody(c.req, this.d.maxBodySize);
    const scheduleId = options.scheduleId ?? newId('scd_');
    if (!/^[A-Za-z0-9._-]+$/.test(scheduleId))
      throw badRequest(
        `invalid schedule id '${scheduleId}': Schedule IDs can only contain alphanumeric characters, hyphens, periods, and underscores`,
      );
    const previous = await this.d.records.getSchedule(scheduleId);
    const record: ScheduleRecord = {
      scheduleId,
      cron: options.cron.trim(),
      destination,
      createdAt: previous?.createdAt ?? Date.now(),
      requestHeaders: headers.filter(([n]) => !/^(upstash|service)-(cron|schedule-id)$/i.test(n)),
      bodyBase64: body.toString('base64'),
      callerIp: callerIp(c.req),
      isPaused: false,
    };
    await this.d.schedules.put(record);
    send(c.res, 200, { scheduleId });
  }

  private async scheduleView(s: ScheduleRecord) {
    const h = new PublishHeaders(s.requestHeaders);
    const o = readPublishOptions(h);
    const body = Buffer.from(s.bodyBase64, 'base64');
    const next = s.isPaused ? undefined : await this.d.schedules.nextTime(s.scheduleId);
    return {
      scheduleId: s.scheduleId,
      cron: s.cron,
      createdAt: s.createdAt,
      destination: s.destination,
      method: o.method,
      header: redactHeaders(o.redact, o.header),
      ...bodyFields(body, o.redact, false),
      retries: o.retries,
      ...(o.retryDelay ? { retryDelayExpression: o.retryDelay } : {}),
      delay: Math.round(o.delayMs / 1000),
      ...(o.callback ? { callback: o.callback.url } : {}),
      ...(o.failureCallback ? { failureCallback: o.failureCallback.url } : {}),
      callerIp: s.callerIp,
      isPaused: s.isPaused,
      ...(o.queueName ? { queueName: o.queueName } : {}),
      ...(o.labels.length ? { label: o.labels[0], labels: o.labels } : {}),
      ...(o.flowControl ? flowControlView(o.flowControl) : {}),
      ...(s.lastScheduleTime ? { lastScheduleTime: s.lastScheduleTime } : {}),
      ...(next ? { nextScheduleTime: next } : {}),
      lastScheduleStates: await this.d.records.scheduleStates(s.scheduleId),
    };
  }

  // --- event log
  /** GET /v2/logs answers `logs` as the reference names it; GET /v2/events (the SDK's path) answers `events`. */
  private async events(c: Call, field: 'logs' | 'events'): Promise<void> {
    const sel = parseListQuery('logs', c.query);
    const { events, cursor } = await this.d.records.readEvents(
      sel.cursor,
      sel.count ?? 100,
      (e: LogEvent) => (sel.ids.length === 0 || sel.ids.includes(e.messageId)) && stateMatches(sel.states, e.state) && sel.keep(e, e.time),
    );
    send(c.res, 200, { ...(cursor ? { cursor } : {}), [field]: events });
  }
}

function checkGroupName(name: string): void {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(name))
    throw badRequest(`invalid url group name '${name}': use letters, digits, '-' and '_' (at most 100)`);
}

const topicNotFound = (name: string) => `topic ${name} not found`;
const dlqNotFound = (id: string) => `message ${id} not found in the dead letter queue`;

/** The fields a DLQ filter looks at: the dead message's (its id, url, labels, caller...). */
function dlqFilterable(e: DlqEntry): Filterable {
  return e.job as QueuedMessage;
}
