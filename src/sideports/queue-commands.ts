// The queue side port's commands over Area D (QStash v2): QPUBLISH/QENQUEUE with the publish settings as
// command options, URL groups (QGROUP), messages (QMESSAGE), the dead letter queue (QDLQ), schedules
// (QSCHEDULE), queues (QQUEUE), flow-control keys (QFLOWCONTROL), signing keys (QKEYS) and the event log
// (QEVENTS), and Upstash Workflow runs (QWORKFLOW). Replies are the service's JSON as RESP maps and arrays (json-reply.ts).
import { randomBytes } from 'node:crypto';
import type { QueueClient, OutgoingMessage, Filters } from '../upstream/queue-client.js';
import { ArgCursor, CommandError, integerArg, nonNegativeIntegerArg, positiveIntegerArg, SYNTAX_ERROR, text } from './args.js';
import type { PortArg, Call, PortCommand, Reply } from './port-command.js';
import { writeJson } from './json-reply.js';

const json =
  (value: unknown): Reply =>
  (w) =>
    writeJson(w, value);

/** The service answers a state change with an empty 200: a status reply, as Redis answers one. */
const ok = (value: unknown): Reply => (value === null ? Buffer.from('+OK\r\n') : json(value));

const DURATION = /^(\d+[dhms])+$/;
const SECONDS_PER_UNIT: Record<string, number> = { d: 86_400, h: 3600, m: 60, s: 1 };

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function httpUrl(value: string, option: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new CommandError(`ERR ${option} must be a URL starting with http:// or https://, got '${value.slice(0, 128)}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new CommandError(`ERR ${option} must be a URL starting with http:// or https://, got '${value.slice(0, 128)}'`);
  return value;
}

/** A destination is an http(s) URL or a URL group name (the service's rule for names). */
function destination(b: Buffer): string {
  const value = text(b);
  if (/^https?:\/\//i.test(value)) return httpUrl(value, 'the destination');
  if (/^[A-Za-z0-9._-]+$/.test(value)) return value;
  throw new CommandError(
    `ERR the destination must be an http:// or https:// URL or a URL group name (letters, digits, '-', '_', '.'), got '${value.slice(0, 128)}'`,
  );
}

function duration(value: string, option: string): string {
  if (/^\d+$/.test(value)) return `${value}s`;
  if (!DURATION.test(value))
    throw new CommandError(
      `ERR ${option} must be a duration such as 30s, 10m, 2h, 1d or 1d10h30m (a plain number is seconds), got '${value.slice(0, 64)}'`,
    );
  return value;
}

/** A limit of a flow-control key: a whole number >= 1, no upper bound (the service names none). */
function limitArg(b: Buffer, option: string): number {
  const n = integerArg(b, option);
  if (n < 1) throw new CommandError(`ERR ${option} must be a whole number >= 1, got '${text(b)}'`);
  return n;
}

/** A period in whole seconds (the pin route's unit) from a plain number of seconds or 30s, 10m, 1h30m…. */
function periodSeconds(b: Buffer, option: string): number {
  const value = text(b);
  if (!/^\d+$/.test(value) && !DURATION.test(value))
    throw new CommandError(
      `ERR ${option} must be a duration such as 30s, 10m, 2h, 1d or 1h30m (a plain number is seconds), got '${value.slice(0, 64)}'`,
    );
  let seconds = 0;
  if (/^\d+$/.test(value)) seconds = Number(value);
  else for (const [, n, unit] of value.matchAll(/(\d+)([dhms])/g)) seconds += Number(n) * SECONDS_PER_UNIT[unit];
  if (seconds < 1 || !Number.isSafeInteger(seconds))
    throw new CommandError(`ERR ${option} must be at least 1 second, got '${value.slice(0, 64)}'`);
  return seconds;
}

function headerName(value: string, option: string): string {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value))
    throw new CommandError(`ERR ${option} name '${value.slice(0, 64)}' is not a valid HTTP header name`);
  return value;
}

/** The publish options shared by QPUBLISH, QENQUEUE and QSCHEDULE CREATE, as Upstash-* headers. */
function readPublishOptions(
  cur: ArgCursor,
  command: string,
  headers: Record<string, string>,
  extra?: (opt: string, cur: ArgCursor) => boolean,
): void {
  while (!cur.done) {
    const opt = cur.option();
    if (extra?.(opt, cur)) continue;
    switch (opt) {
      case 'METHOD': {
        const m = text(cur.value()).toUpperCase();
        if (!METHODS.includes(m)) throw new CommandError(`ERR METHOD must be one of ${METHODS.join(', ')}`);
        headers['Upstash-Method'] = m;
        break;
      }
      case 'CONTENT-TYPE':
        headers['Content-Type'] = text(cur.value());
        break;
      case 'HEADER': {
        const name = headerName(text(cur.value()), 'HEADER');
        headers[`Upstash-Forward-${name}`] = text(cur.value());
        break;
      }
      case 'RETRIES':
        headers['Upstash-Retries'] = String(nonNegativeIntegerArg(cur.value(), 'RETRIES', 100));
        break;
      case 'RETRY-DELAY':
        headers['Upstash-Retry-Delay'] = text(cur.value());
        break;
      case 'DELAY':
        headers['Upstash-Delay'] = duration(text(cur.value()), 'DELAY');
        break;
      case 'NOT-BEFORE':
        headers['Upstash-Not-Before'] = String(nonNegativeIntegerArg(cur.value(), 'NOT-BEFORE (unix seconds)'));
        break;
      case 'TIMEOUT':
        headers['Upstash-Timeout'] = duration(text(cur.value()), 'TIMEOUT');
        break;
      case 'CALLBACK':
        headers['Upstash-Callback'] = httpUrl(text(cur.value()), 'CALLBACK');
        break;
      case 'FAILURE-CALLBACK':
        headers['Upstash-Failure-Callback'] = httpUrl(text(cur.value()), 'FAILURE-CALLBACK');
        break;
      case 'DEDUP-ID':
        headers['Upstash-Deduplication-Id'] = text(cur.value());
        break;
      case 'CONTENT-DEDUP':
        headers['Upstash-Content-Based-Deduplication'] = 'true';
        break;
      case 'LABEL':
        headers['Upstash-Label'] = text(cur.value());
        break;
      case 'FLOW-CONTROL':
        headers['Upstash-Flow-Control-Key'] = text(cur.value());
        headers['Upstash-Flow-Control-Value'] = text(cur.value());
        break;
      case 'UPSTASH': {
        // Any other Upstash-* setting, e.g. UPSTASH Callback-Retries 2.
        const name = headerName(text(cur.value()), 'UPSTASH');
        headers[`Upstash-${name.replace(/^upstash-/i, '')}`] = text(cur.value());
        break;
      }
      default:
        cur.unknown(command);
    }
  }
}

const FILTERS: Record<string, string> = {
  URL: 'url',
  QUEUE: 'queueName',
  GROUP: 'topicName',
  LABEL: 'label',
  SCHEDULE: 'scheduleId',
  MESSAGE: 'messageId',
  STATUS: 'responseStatus',
  FROM: 'fromDate',
  TO: 'toDate',
  'CALLER-IP': 'callerIp',
  'FLOW-CONTROL-KEY': 'flowControlKey',
  STATE: 'state',
};

function readFilters(cur: ArgCursor, command: string, allowed: string[]): Filters {
  const filters: Filters = {};
  while (!cur.done) {
    const opt = cur.option();
    if (!allowed.includes(opt)) cur.unknown(command);
    filters[FILTERS[opt]] = text(cur.value());
  }
  return filters;
}

const body = (b: Buffer): OutgoingMessage['body'] => b;

export function queueCommands(client: QueueClient): PortCommand[] {
  const qpublish = async (c: Call): Promise<Reply> => {
    const headers: Record<string, string> = {};
    readPublishOptions(new ArgCursor(c.args, 3), 'qpublish', headers);
    return json(await client.publish(destination(c.args[1]), { body: body(c.args[2]), headers }));
  };

  const qenqueue = async (c: Call): Promise<Reply> => {
    const headers: Record<string, string> = {};
    readPublishOptions(new ArgCursor(c.args, 4), 'qenqueue', headers);
    return json(await client.enqueue(text(c.args[1]), destination(c.args[2]), { body: body(c.args[3]), headers }));
  };

  return [
    {
      name: 'qpublish',
      arity: -3,
      group: 'queue',
      flags: ['write'],
      acl: ['@write'],
      summary: 'Publishes a message to a URL or a URL group (fan-out).',
      upstream: 'POST /v2/publish/{destination}',
      args: [{ name: 'destination', type: 'string' }, { name: 'body', type: 'string' }, ...publishArgs()],
      run: qpublish,
    },
    {
      name: 'qenqueue',
      arity: -4,
      group: 'queue',
      flags: ['write'],
      acl: ['@write'],
      summary: 'Enqueues a message into a named queue (ordered delivery).',
      upstream: 'POST /v2/enqueue/{queue}/{destination}',
      args: [
        { name: 'queue', type: 'string' },
        { name: 'destination', type: 'string' },
        { name: 'body', type: 'string' },
        ...publishArgs(),
      ],
      run: qenqueue,
    },
    container('qgroup', 'URL groups: named sets of endpoints that a publish fans out to.', urlGroupCommands(client)),
    container('qmessage', 'Messages waiting for delivery.', messageCommands(client)),
    container('qdlq', 'The dead letter queue: messages whose retries ran out.', dlqCommands(client)),
    container('qschedule', 'Schedules: messages published on a cron.', scheduleCommands(client)),
    container('qqueue', 'Queues: ordered delivery with a parallelism.', namedQueueCommands(client)),
    container(
      'qflowcontrol',
      'Flow-control keys: the limits messages published with FLOW-CONTROL are held to.',
      flowControlCommands(client),
    ),
    container('qkeys', 'Signing keys of the Upstash-Signature header.', signingKeyCommands(client)),
    container(
      'qworkflow',
      'Upstash Workflow runs: trigger, notify a waiting event, list waiters and runs, cancel.',
      workflowCommands(client),
    ),
    {
      name: 'qevents',
      arity: -1,
      group: 'queue',
      flags: ['readonly'],
      acl: ['@read'],
      summary: 'Returns the event log {cursor, events} (states CREATED, ACTIVE, DELIVERED, ERROR, FAILED…).',
      upstream: 'GET /v2/events',
      args: [
        { name: 'cursor', type: 'string', token: 'CURSOR', optional: true },
        { name: 'count', type: 'integer', token: 'COUNT', optional: true },
        ...filterArgs(eventFilters),
      ],
      run: async (c) => json(await client.events(readPaged(c, 1, 'qevents', eventFilters))),
    },
  ];
}

/**
 * The headers of a workflow trigger, as @upstash/workflow's Client.trigger builds them: the run is
 * created by the queue, the workflow endpoint gets the body as its initial payload, and (unless
 * NO-FAILURE-URL) the failure callback goes to the workflow URL, where serve's failureFunction runs.
 */
function triggerHeaders(url: string, runId: string, cur: ArgCursor): Record<string, string> {
  const h: Record<string, string> = {
    'Content-Type': 'application/json',
    'Upstash-Workflow-Init': 'true',
    'Upstash-Workflow-RunId': runId,
    'Upstash-Workflow-Url': url,
    'Upstash-Feature-Set': 'LazyFetch,InitialBody,WF_DetectTrigger,WF_TriggerOnConfig',
    'Upstash-Workflow-Sdk-Version': '1',
    'Upstash-Forward-Upstash-Workflow-Sdk-Version': '1',
  };
  let failureUrl: string | undefined = url;
  while (!cur.done) {
    const opt = cur.option();
    if (opt === 'RUN-ID')
      cur.value(); // read by runIdOption
    else if (opt === 'RETRIES')
      h['Upstash-Retries'] = h['Upstash-Failure-Callback-Retries'] = String(nonNegativeIntegerArg(cur.value(), 'RETRIES', 100));
    else if (opt === 'DELAY') h['Upstash-Delay'] = duration(text(cur.value()), 'DELAY');
    else if (opt === 'LABEL') h['Upstash-Label'] = text(cur.value());
    else if (opt === 'CONTENT-TYPE') h['Content-Type'] = text(cur.value());
    else if (opt === 'HEADER') h[`Upstash-Forward-${headerName(text(cur.value()), 'HEADER')}`] = text(cur.value());
    else if (opt === 'FAILURE-URL') failureUrl = httpUrl(text(cur.value()), 'FAILURE-URL');
    else if (opt === 'NO-FAILURE-URL') failureUrl = undefined;
    else cur.unknown('qworkflow|trigger');
  }
  if (failureUrl) {
    Object.assign(h, {
      'Upstash-Failure-Callback': failureUrl,
      'Upstash-Failure-Callback-Forward-Upstash-Workflow-Is-Failure': 'true',
      'Upstash-Failure-Callback-Forward-Upstash-Workflow-Failure-Callback': 'true',
      'Upstash-Failure-Callback-Workflow-Runid': runId,
      'Upstash-Failure-Callback-Workflow-Init': 'false',
      'Upstash-Failure-Callback-Workflow-Url': url,
      'Upstash-Failure-Callback-Workflow-Calltype': 'failureCall',
    });
  }
  return h;
}

// The command families of the queue port, one function each (QGROUP, QMESSAGE, QDLQ …), and what they share.
const endpointsOf = (args: Buffer[]) => args.map((a) => ({ url: httpUrl(text(a), 'an endpoint') }));
const messageFilters = ['URL', 'QUEUE', 'GROUP', 'LABEL', 'SCHEDULE', 'FROM', 'TO', 'CALLER-IP', 'FLOW-CONTROL-KEY'];
const dlqFilters = ['URL', 'QUEUE', 'GROUP', 'LABEL', 'SCHEDULE', 'MESSAGE', 'STATUS', 'FROM', 'TO', 'CALLER-IP'];
const keyArg: PortArg = { name: 'key', type: 'string' };
const eventFilters = ['URL', 'QUEUE', 'GROUP', 'LABEL', 'SCHEDULE', 'MESSAGE', 'STATE', 'FROM', 'TO'];

/** URL groups (QGROUP). */
function urlGroupCommands(client: QueueClient): PortCommand[] {
  return [
    sub(
      'qgroup|add',
      -4,
      'Adds endpoint URLs to a URL group (created when missing).',
      'POST /v2/topics/{group}/endpoints',
      [
        { name: 'group', type: 'string' },
        { name: 'url', type: 'string', multiple: true },
      ],
      async (c) => json(await client.addEndpoints(text(c.args[2]), endpointsOf(c.args.slice(3)))),
    ),
    sub(
      'qgroup|addnamed',
      -5,
      'Adds named endpoints (name url pairs) to a URL group.',
      'POST /v2/topics/{group}/endpoints',
      [
        { name: 'group', type: 'string' },
        {
          name: 'endpoint',
          type: 'block',
          multiple: true,
          arguments: [
            { name: 'name', type: 'string' },
            { name: 'url', type: 'string' },
          ],
        },
      ],
      async (c) => {
        const rest = c.args.slice(3);
        if (rest.length % 2 !== 0) throw new CommandError(`${SYNTAX_ERROR}: QGROUP ADDNAMED takes name url pairs`);
        const endpoints = [];
        for (let i = 0; i < rest.length; i += 2) endpoints.push({ name: text(rest[i]), url: httpUrl(text(rest[i + 1]), 'an endpoint') });
        return json(await client.addEndpoints(text(c.args[2]), endpoints));
      },
    ),
    sub(
      'qgroup|remove',
      -4,
      'Removes endpoints (by URL) from a URL group; removing the last deletes the group.',
      'DELETE /v2/topics/{group}/endpoints',
      [
        { name: 'group', type: 'string' },
        { name: 'url', type: 'string', multiple: true },
      ],
      async (c) =>
        json(
          await client.removeEndpoints(
            text(c.args[2]),
            c.args.slice(3).map((a) => ({ url: text(a) })),
          ),
        ),
    ),
    sub(
      'qgroup|get',
      3,
      'Returns a URL group: name, createdAt, updatedAt, endpoints.',
      'GET /v2/topics/{group}',
      [{ name: 'group', type: 'string' }],
      async (c) => json(await client.getGroup(text(c.args[2]))),
    ),
    sub('qgroup|list', 2, 'Returns every URL group.', 'GET /v2/topics', [], async () => json(await client.listGroups())),
    sub('qgroup|del', 3, 'Deletes a URL group.', 'DELETE /v2/topics/{group}', [{ name: 'group', type: 'string' }], async (c) =>
      json(await client.deleteGroup(text(c.args[2]))),
    ),
    sub(
      'qgroup|headers',
      -5,
      'Sets default headers applied to every publish to the group (name value pairs).',
      'PATCH /v2/topics/{group} {headers}',
      [
        { name: 'group', type: 'string' },
        {
          name: 'header',
          type: 'block',
          multiple: true,
          arguments: [
            { name: 'name', type: 'string' },
            { name: 'value', type: 'string' },
          ],
        },
      ],
      async (c) => {
        const rest = c.args.slice(3);
        if (rest.length % 2 !== 0) throw new CommandError(`${SYNTAX_ERROR}: QGROUP HEADERS takes name value pairs`);
        const headers: Record<string, string> = {};
        for (let i = 0; i < rest.length; i += 2) headers[headerName(text(rest[i]), 'HEADERS')] = text(rest[i + 1]);
        return json(await client.setGroupHeaders(text(c.args[2]), headers));
      },
    ),
  ];
}

/** Messages waiting for delivery (QMESSAGE). */
function messageCommands(client: QueueClient): PortCommand[] {
  return [
    sub(
      'qmessage|get',
      3,
      'Returns a message that is not delivered yet.',
      'GET /v2/messages/{id}',
      [{ name: 'id', type: 'string' }],
      async (c) => json(await client.getMessage(text(c.args[2]))),
    ),
    sub('qmessage|cancel', 3, 'Cancels a message.', 'DELETE /v2/messages/{id}', [{ name: 'id', type: 'string' }], async (c) =>
      json(await client.cancelMessage(text(c.args[2]))),
    ),
    sub(
      'qmessage|cancelall',
      -2,
      'Cancels the messages matching the filters (all when none); returns {cancelled}.',
      'DELETE /v2/messages?filters',
      filterArgs(messageFilters),
      async (c) => json(await client.cancelMessages(readFilters(new ArgCursor(c.args, 2), 'qmessage|cancelall', messageFilters))),
    ),
  ];
}

/** The dead letter queue (QDLQ). */
function dlqCommands(client: QueueClient): PortCommand[] {
  return [
    sub(
      'qdlq|list',
      -2,
      'Lists dead letters: {cursor, messages}; pass CURSOR to page on.',
      'GET /v2/dlq?cursor&count&filters',
      [
        { name: 'cursor', type: 'string', token: 'CURSOR', optional: true },
        { name: 'count', type: 'integer', token: 'COUNT', optional: true },
        ...filterArgs(dlqFilters),
      ],
      async (c) => json(await client.listDlq(readPaged(c, 2, 'qdlq|list', dlqFilters))),
    ),
    sub(
      'qdlq|get',
      3,
      'Returns one dead letter with the last response.',
      'GET /v2/dlq/{dlqId}',
      [{ name: 'dlq-id', type: 'string' }],
      async (c) => json(await client.getDlq(text(c.args[2]))),
    ),
    sub(
      'qdlq|del',
      -3,
      'Deletes dead letters.',
      'DELETE /v2/dlq/{dlqId} (several: DELETE /v2/dlq?dlqIds)',
      [{ name: 'dlq-id', type: 'string', multiple: true }],
      async (c) => json(await client.deleteDlq(c.args.slice(2).map(text))),
    ),
    sub(
      'qdlq|retry',
      -3,
      'Publishes dead letters again.',
      'POST /v2/dlq/retry/{dlqId} (several: POST /v2/dlq/retry?dlqIds)',
      [{ name: 'dlq-id', type: 'string', multiple: true }],
      async (c) => json(await client.retryDlq(c.args.slice(2).map(text))),
    ),
  ];
}

/** Schedules (QSCHEDULE). */
function scheduleCommands(client: QueueClient): PortCommand[] {
  return [
    sub(
      'qschedule|create',
      -5,
      'Creates (or with ID, updates) a schedule that publishes body to destination on a cron.',
      'POST /v2/schedules/{destination} with Upstash-Cron',
      [
        { name: 'destination', type: 'string' },
        { name: 'cron', type: 'string' },
        { name: 'body', type: 'string' },
        { name: 'schedule-id', type: 'string', token: 'ID', optional: true },
        ...publishArgs(),
      ],
      async (c) => {
        const headers: Record<string, string> = { 'Upstash-Cron': text(c.args[3]) };
        readPublishOptions(new ArgCursor(c.args, 5), 'qschedule|create', headers, (opt, cur) => {
          if (opt !== 'ID') return false;
          headers['Upstash-Schedule-Id'] = text(cur.value());
          return true;
        });
        return json(await client.createSchedule(destination(c.args[2]), { body: c.args[4], headers }));
      },
    ),
    sub('qschedule|get', 3, 'Returns a schedule.', 'GET /v2/schedules/{id}', [{ name: 'schedule-id', type: 'string' }], async (c) =>
      json(await client.getSchedule(text(c.args[2]))),
    ),
    sub('qschedule|list', 2, 'Returns every schedule.', 'GET /v2/schedules', [], async () => json(await client.listSchedules())),
    sub('qschedule|del', 3, 'Deletes a schedule.', 'DELETE /v2/schedules/{id}', [{ name: 'schedule-id', type: 'string' }], async (c) =>
      json(await client.deleteSchedule(text(c.args[2]))),
    ),
    sub(
      'qschedule|pause',
      3,
      'Pauses a schedule.',
      'PATCH /v2/schedules/{id}/pause',
      [{ name: 'schedule-id', type: 'string' }],
      async (c) => json(await client.pauseSchedule(text(c.args[2]))),
    ),
    sub(
      'qschedule|resume',
      3,
      'Resumes a schedule.',
      'PATCH /v2/schedules/{id}/resume',
      [{ name: 'schedule-id', type: 'string' }],
      async (c) => json(await client.resumeSchedule(text(c.args[2]))),
    ),
  ];
}

/** Named queues (QQUEUE). */
function namedQueueCommands(client: QueueClient): PortCommand[] {
  return [
    sub(
      'qqueue|upsert',
      -3,
      'Creates or updates a queue (PARALLELISM n).',
      'POST /v2/queues {queueName, parallelism}',
      [
        { name: 'queue', type: 'string' },
        { name: 'parallelism', type: 'integer', token: 'PARALLELISM', optional: true },
      ],
      async (c) => {
        const cur = new ArgCursor(c.args, 3);
        let parallelism: number | undefined;
        while (!cur.done) {
          const opt = cur.option();
          if (opt === 'PARALLELISM') parallelism = positiveIntegerArg(cur.value(), 'PARALLELISM', 1000);
          else cur.unknown('qqueue|upsert');
        }
        return json(await client.upsertQueue(text(c.args[2]), parallelism));
      },
    ),
    sub(
      'qqueue|get',
      3,
      'Returns a queue: name, parallelism, paused, lag.',
      'GET /v2/queues/{queue}',
      [{ name: 'queue', type: 'string' }],
      async (c) => json(await client.getQueue(text(c.args[2]))),
    ),
    sub('qqueue|list', 2, 'Returns every queue.', 'GET /v2/queues', [], async () => json(await client.listQueues())),
    sub('qqueue|del', 3, 'Deletes a queue.', 'DELETE /v2/queues/{queue}', [{ name: 'queue', type: 'string' }], async (c) =>
      json(await client.deleteQueue(text(c.args[2]))),
    ),
    sub('qqueue|pause', 3, 'Pauses a queue.', 'POST /v2/queues/{queue}/pause', [{ name: 'queue', type: 'string' }], async (c) =>
      json(await client.pauseQueue(text(c.args[2]))),
    ),
    sub('qqueue|resume', 3, 'Resumes a queue.', 'POST /v2/queues/{queue}/resume', [{ name: 'queue', type: 'string' }], async (c) =>
      json(await client.resumeQueue(text(c.args[2]))),
    ),
  ];
}

/** Flow-control keys (QFLOWCONTROL). */
function flowControlCommands(client: QueueClient): PortCommand[] {
  return [
    sub(
      'qflowcontrol|list',
      -2,
      'Returns every flow-control key with its limits and counters; SEARCH keeps the keys containing the text.',
      'GET /v2/flowControl?search',
      [{ name: 'text', type: 'string', token: 'SEARCH', optional: true }],
      async (c) => {
        const cur = new ArgCursor(c.args, 2);
        let search: string | undefined;
        while (!cur.done) {
          if (cur.option() === 'SEARCH') search = text(cur.value());
          else cur.unknown('qflowcontrol|list');
        }
        return json(await client.listFlowControl(search));
      },
    ),
    sub(
      'qflowcontrol|get',
      3,
      'Returns a key: waitListSize, parallelismMax/Count, rateMax/Count, ratePeriod, isPaused, isPinned….',
      'GET /v2/flowControl/{key}',
      [keyArg],
      async (c) => json(await client.getFlowControl(text(c.args[2]))),
    ),
    sub(
      'qflowcontrol|pause',
      3,
      'Pauses a key: nothing new starts (deliveries in flight finish, new messages wait).',
      'POST /v2/flowControl/{key}/pause',
      [keyArg],
      async (c) => ok(await client.pauseFlowControl(text(c.args[2]))),
    ),
    sub('qflowcontrol|resume', 3, 'Resumes a key: its waiting messages start.', 'POST /v2/flowControl/{key}/resume', [keyArg], async (c) =>
      ok(await client.resumeFlowControl(text(c.args[2]))),
    ),
    sub(
      'qflowcontrol|pin',
      -3,
      'Pins parallelism and/or rate (with its period) against later publishes; resets the rate window.',
      'POST /v2/flowControl/{key}/pin?parallelism&rate&period',
      [
        keyArg,
        { name: 'parallelism', type: 'integer', token: 'PARALLELISM', optional: true },
        { name: 'rate', type: 'integer', token: 'RATE', optional: true },
        { name: 'duration', type: 'string', token: 'PERIOD', optional: true },
      ],
      async (c) => {
        const cur = new ArgCursor(c.args, 3);
        const pin: { parallelism?: number; rate?: number; period?: number } = {};
        while (!cur.done) {
          const opt = cur.option();
          if (opt === 'PARALLELISM') pin.parallelism = limitArg(cur.value(), 'PARALLELISM');
          else if (opt === 'RATE') pin.rate = limitArg(cur.value(), 'RATE');
          else if (opt === 'PERIOD') pin.period = periodSeconds(cur.value(), 'PERIOD');
          else cur.unknown('qflowcontrol|pin');
        }
        if (Object.keys(pin).length === 0)
          throw new CommandError(
            'ERR nothing to pin: give PARALLELISM n, RATE n and/or PERIOD duration, e.g. QFLOWCONTROL PIN key RATE 20 PERIOD 1m',
          );
        return ok(await client.pinFlowControl(text(c.args[2]), pin));
      },
    ),
    sub(
      'qflowcontrol|unpin',
      -3,
      'Lets later publishes set parallelism and/or rate again (the pinned values stay until then).',
      'POST /v2/flowControl/{key}/unpin?parallelism=true&rate=true',
      [
        keyArg,
        { name: 'parallelism', type: 'pure-token', token: 'PARALLELISM', optional: true },
        { name: 'rate', type: 'pure-token', token: 'RATE', optional: true },
      ],
      async (c) => {
        const cur = new ArgCursor(c.args, 3);
        const which = { parallelism: false, rate: false };
        while (!cur.done) {
          const opt = cur.option();
          if (opt === 'PARALLELISM') which.parallelism = true;
          else if (opt === 'RATE') which.rate = true;
          else cur.unknown('qflowcontrol|unpin');
        }
        if (!which.parallelism && !which.rate)
          throw new CommandError('ERR nothing to unpin: give PARALLELISM and/or RATE, e.g. QFLOWCONTROL UNPIN key PARALLELISM RATE');
        return ok(await client.unpinFlowControl(text(c.args[2]), which));
      },
    ),
    sub(
      'qflowcontrol|resetrate',
      3,
      'Clears the rate count of a key and starts a new rate window now.',
      'POST /v2/flowControl/{key}/resetRate',
      [keyArg],
      async (c) => ok(await client.resetFlowControlRate(text(c.args[2]))),
    ),
    sub(
      'qflowcontrol|global',
      2,
      'Returns the global parallelism: parallelismMax and parallelismCount (deliveries in flight).',
      'GET /v2/globalParallelism',
      [],
      async () => json(await client.globalParallelism()),
    ),
  ];
}

/** Signing keys (QKEYS). */
function signingKeyCommands(client: QueueClient): PortCommand[] {
  return [
    sub('qkeys|get', 2, 'Returns the signing keys {current, next}.', 'GET /v2/keys', [], async () => json(await client.getKeys())),
    sub('qkeys|rotate', 2, 'Rotates the signing keys (next becomes current).', 'POST /v2/keys/rotate', [], async () =>
      json(await client.rotateKeys()),
    ),
  ];
}

/** RUN-ID given among the options (the SDK's rule: a custom id gets the wfr_ prefix), else a fresh id. */
function runIdOption(args: Buffer[], from: number): string {
  for (let i = from; i < args.length - 1; i++) {
    if (text(args[i]).toUpperCase() !== 'RUN-ID') continue;
    const id = text(args[i + 1]);
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(id))
      throw new CommandError(`ERR RUN-ID must be letters, digits, '-' or '_' (at most 100), got '${id.slice(0, 64)}'`);
    return id.startsWith('wfr_') ? id : `wfr_${id}`;
  }
  return `wfr_${randomBytes(15).toString('base64url')}`;
}

const workflowLogFilters: Record<string, string> = { 'RUN-ID': 'workflowRunId', URL: 'workflowUrl', STATE: 'state' };

function workflowCommands(client: QueueClient): PortCommand[] {
  return [
    sub(
      'qworkflow|trigger',
      -4,
      'Starts a run of the workflow served at url with body as its payload; returns {workflowRunId}.',
      'POST /v2/publish/{url} with Upstash-Workflow-Init: true',
      [
        { name: 'url', type: 'string' },
        { name: 'body', type: 'string' },
        { name: 'run-id', type: 'string', token: 'RUN-ID', optional: true },
        { name: 'retries', type: 'integer', token: 'RETRIES', optional: true },
        { name: 'delay', type: 'string', token: 'DELAY', optional: true },
        { name: 'label', type: 'string', token: 'LABEL', optional: true },
        { name: 'type', type: 'string', token: 'CONTENT-TYPE', optional: true },
        { name: 'failure-url', type: 'string', token: 'FAILURE-URL', optional: true },
        { name: 'no-failure-url', type: 'pure-token', token: 'NO-FAILURE-URL', optional: true },
      ],
      async (c) => {
        const url = httpUrl(text(c.args[2]), 'the workflow url');
        const runId = runIdOption(c.args, 4);
        const headers = triggerHeaders(url, runId, new ArgCursor(c.args, 4));
        await client.publish(url, { body: c.args[3], headers });
        return json({ workflowRunId: runId });
      },
    ),
    sub(
      'qworkflow|notify',
      -4,
      'Resumes the runs waiting for an event with data as the event data; returns [{waiter, messageId}].',
      'POST /v2/notify/[{runId}/]{eventId}',
      [
        { name: 'event-id', type: 'string' },
        { name: 'data', type: 'string' },
        { name: 'run-id', type: 'string', token: 'RUN-ID', optional: true },
      ],
      async (c) => {
        const cur = new ArgCursor(c.args, 4);
        let runId: string | undefined;
        while (!cur.done) {
          if (cur.option() === 'RUN-ID') runId = text(cur.value());
          else cur.unknown('qworkflow|notify');
        }
        return json(await client.notify(text(c.args[2]), c.args[3], runId));
      },
    ),
    sub(
      'qworkflow|waiters',
      3,
      'Returns the runs waiting for an event.',
      'GET /v2/waiters/{eventId}',
      [{ name: 'event-id', type: 'string' }],
      async (c) => json(await client.waiters(text(c.args[2]))),
    ),
    sub(
      'qworkflow|logs',
      -2,
      'Returns runs newest first with their steps: {cursor, runs}.',
      'GET /v2/workflows/events',
      [
        { name: 'cursor', type: 'string', token: 'CURSOR', optional: true },
        { name: 'count', type: 'integer', token: 'COUNT', optional: true },
        ...filterArgs(Object.keys(workflowLogFilters)),
      ],
      async (c) => {
        const cur = new ArgCursor(c.args, 2);
        const filters: Filters = {};
        while (!cur.done) {
          const opt = cur.option();
          if (opt === 'CURSOR') filters.cursor = text(cur.value());
          else if (opt === 'COUNT') filters.count = String(positiveIntegerArg(cur.value(), 'COUNT', 1000));
          else if (workflowLogFilters[opt]) filters[workflowLogFilters[opt]] = text(cur.value());
          else cur.unknown('qworkflow|logs');
        }
        return json(await client.workflowLogs(filters));
      },
    ),
    sub(
      'qworkflow|cancel',
      -3,
      'Cancels runs: their pending steps and waiters are dropped; returns {cancelled}.',
      'DELETE /v2/workflows/runs?workflowRunIds=…',
      [{ name: 'run-id', type: 'string', multiple: true }],
      async (c) => json(await client.cancelWorkflowRuns(c.args.slice(2).map(text))),
    ),
  ];
}

/** CURSOR and COUNT, then filters. */
function readPaged(c: Call, from: number, command: string, allowed: string[]): Filters {
  const cur = new ArgCursor(c.args, from);
  const filters: Filters = {};
  while (!cur.done) {
    const opt = cur.option();
    if (opt === 'CURSOR') filters.cursor = text(cur.value());
    else if (opt === 'COUNT') filters.count = String(positiveIntegerArg(cur.value(), 'COUNT', 1000));
    else if (FILTERS[opt] && allowed.includes(opt)) filters[FILTERS[opt]] = text(cur.value());
    else cur.unknown(command);
  }
  return filters;
}

function sub(name: string, arity: number, summary: string, upstream: string, args: PortArg[], run: PortCommand['run']): PortCommand {
  return { name, arity, summary, upstream, group: 'queue', flags: [], acl: [], args, run };
}

function container(name: string, summary: string, subs: PortCommand[]): PortCommand {
  const withHelp = [
    ...subs,
    sub(`${name}|help`, 2, 'Shows helpful text about the different subcommands.', '(none)', [], () => {
      throw new Error('answered by the connection');
    }),
  ];
  return { name, arity: -2, summary, group: 'queue', flags: [], acl: [], subcommands: withHelp };
}

function filterArgs(names: string[]): PortArg[] {
  return names.map((n) => ({ name: n.toLowerCase(), type: 'string', token: n, optional: true }));
}

function publishArgs(): PortArg[] {
  const o = (token: string, name: string, type: PortArg['type'] = 'string'): PortArg => ({ name, type, token, optional: true });
  return [
    o('METHOD', 'method'),
    o('CONTENT-TYPE', 'type'),
    {
      name: 'header',
      type: 'block',
      token: 'HEADER',
      optional: true,
      multiple: true,
      arguments: [
        { name: 'name', type: 'string' },
        { name: 'value', type: 'string' },
      ],
    },
    o('RETRIES', 'retries', 'integer'),
    o('RETRY-DELAY', 'expression'),
    o('DELAY', 'duration'),
    o('NOT-BEFORE', 'unix-seconds', 'unix-time'),
    o('TIMEOUT', 'duration'),
    o('CALLBACK', 'url'),
    o('FAILURE-CALLBACK', 'url'),
    o('DEDUP-ID', 'id'),
    { name: 'content-dedup', type: 'pure-token', token: 'CONTENT-DEDUP', optional: true },
    o('LABEL', 'label'),
    {
      name: 'flow-control',
      type: 'block',
      token: 'FLOW-CONTROL',
      optional: true,
      arguments: [
        { name: 'key', type: 'string' },
        { name: 'value', type: 'string' },
      ],
    },
    {
      name: 'upstash',
      type: 'block',
      token: 'UPSTASH',
      optional: true,
      multiple: true,
      arguments: [
        { name: 'setting', type: 'string' },
        { name: 'value', type: 'string' },
      ],
    },
  ];
}
