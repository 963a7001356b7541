// The queue page, over the platform's queue REST API (/queue/v2/...): the messages in flight and scheduled
// (queue-messages.js), publish, logs
// with their filters, the DLQ with retry and delete, schedules, queues, URL groups, signing keys.
import { call } from './api.js';
import { field, fill, h, jsonTree, note, select, table } from './dom.js';
import { actionButton, tabs, when } from './tabs.js';
import { enc, guarded, Q } from './queue-common.js';
import { messagesTab } from './queue-messages.js';

export function queuePage(root, me = {}) {
  tabs(root, 'queue', {
    messages: (el) => messagesTab(el, me.role !== 'readonly'),
    publish: publishTab,
    logs: logsTab,
    dlq: dlqTab,
    schedules: schedulesTab,
    queues: queuesTab,
    'url groups': groupsTab,
    keys: keysTab,
  });
}

function publishTab(el) {
  const dest = field('Destination (URL or URL group)', { name: 'destination', placeholder: 'http://127.0.0.1:3000/hook' });
  const queue = field('Queue (optional)', { name: 'queue' });
  const retries = field('Retries', { name: 'retries', type: 'number', min: '0', value: '3' });
  const delay = field('Delay', { name: 'delay', placeholder: 'e.g. 10s' });
  const body = field('Body', { name: 'body', rows: 4 });
  const callback = field('Callback URL (optional: gets each response)', { name: 'callback' });
  const failureCallback = field('Failure callback URL (optional: called when retries run out)', { name: 'failure-callback' });
  const out = h('div', { id: 'publish-result' });
  const publish = async (e) => {
    e.preventDefault();
    const headers = { 'Content-Type': 'text/plain', 'Upstash-Retries': retries.input.value || '0' };
    if (delay.input.value) headers['Upstash-Delay'] = delay.input.value;
    if (callback.input.value) headers['Upstash-Callback'] = callback.input.value;
    if (failureCallback.input.value) headers['Upstash-Failure-Callback'] = failureCallback.input.value;
    const path = queue.input.value ? `${Q}/enqueue/${enc(queue.input.value)}/${dest.input.value}` : `${Q}/publish/${dest.input.value}`;
    await guarded(out, async () => fill(out, note('ok', 'published'), jsonTree(await call('POST', path, body.input.value, headers))));
  };
  fill(
    el,
    h(
      'form',
      { class: 'card', id: 'publish-form', onsubmit: publish },
      h('h2', null, 'Publish'),
      dest,
      queue,
      retries,
      delay,
      body,
      callback,
      failureCallback,
      h('button', { type: 'submit' }, 'Publish'),
      out,
    ),
  );
}

const STATES = ['', 'CREATED', 'ACTIVE', 'RETRY', 'ERROR', 'DELIVERED', 'FAILED', 'CANCEL_REQUESTED', 'CANCELLED', 'IN_PROGRESS'];
const FILTERS = ['messageId', 'url', 'queueName', 'topicName', 'scheduleId', 'label'];

function logsTab(el) {
  const state = select(
    { name: 'state' },
    STATES.map((s) => [s, s || 'any state']),
  );
  const inputs = FILTERS.map((f) => h('input', { name: f, placeholder: f }));
  const list = h('div', { id: 'logs' });
  const more = h('div', { class: 'pager' });
  const load = (cursor) =>
    guarded(list, async () => {
      const q = new URLSearchParams({ count: '50' });
      if (state.value) q.set('state', state.value);
      for (const i of inputs) if (i.value) q.set(i.name, i.value);
      if (cursor) q.set('cursor', cursor);
      const { events, cursor: next } = await call('GET', `${Q}/events?${q}`);
      const rows = events.map((e) => [
        when(e.time),
        e.state,
        e.messageId,
        e.url ?? e.topicName ?? '',
        e.responseStatus ?? '',
        h('details', null, h('summary', null, 'more'), jsonTree(e)),
      ]);
      const t = table(['time', 'state', 'message', 'destination', 'status', ''], rows);
      if (cursor) list.append(t);
      else fill(list, events.length ? t : note('info', 'no events match'));
      fill(more, next && h('button', { type: 'button', onclick: () => load(next) }, 'More'));
    });
  fill(
    el,
    h(
      'form',
      { class: 'toolbar', id: 'logs-form', onsubmit: (e) => (e.preventDefault(), load()) },
      state,
      inputs,
      h('button', { type: 'submit' }, 'Filter'),
    ),
    list,
    more,
  );
  load();
}

function dlqTab(el) {
  const list = h('div', { id: 'dlq' });
  const load = () =>
    guarded(list, async () => {
      const { messages } = await call('GET', `${Q}/dlq`);
      const rows = messages.map((m) => [
        m.dlqId,
        m.messageId,
        m.url ?? m.topicName ?? '',
        String(m.responseStatus ?? ''),
        when(m.createdAt),
        h('details', null, h('summary', null, 'message'), jsonTree(m)),
        h(
          'span',
          { class: 'toolbar' },
          actionButton('Retry', { class: 'retry' }, null, async () => (await call('POST', `${Q}/dlq/retry/${enc(m.dlqId)}`), load()), list),
          actionButton(
            'Delete',
            { class: 'danger' },
            `Delete ${m.dlqId} from the DLQ?`,
            async () => (await call('DELETE', `${Q}/dlq/${enc(m.dlqId)}`), load()),
            list,
          ),
        ),
      ]);
      fill(
        list,
        messages.length
          ? table(['dlq id', 'message', 'destination', 'status', 'created', '', ''], rows)
          : note('info', 'the dead letter queue is empty'),
      );
    });
  fill(el, h('div', { class: 'toolbar' }, h('button', { type: 'button', id: 'dlq-refresh', onclick: () => load() }, 'Refresh')), list);
  load();
}

function schedulesTab(el) {
  const list = h('div', { id: 'schedules' });
  const load = () =>
    guarded(list, async () => {
      const all = await call('GET', `${Q}/schedules`);
      const rows = all.map((s) => [
        s.scheduleId,
        s.cron,
        s.destination,
        s.isPaused ? 'paused' : when(s.nextScheduleTime),
        h(
          'span',
          { class: 'toolbar' },
          actionButton(
            s.isPaused ? 'Resume' : 'Pause',
            {},
            null,
            async () => (await call('POST', `${Q}/schedules/${enc(s.scheduleId)}/${s.isPaused ? 'resume' : 'pause'}`), load()),
            list,
          ),
          actionButton(
            'Delete',
            { class: 'danger' },
            `Delete the schedule ${s.scheduleId}?`,
            async () => (await call('DELETE', `${Q}/schedules/${enc(s.scheduleId)}`), load()),
            list,
          ),
        ),
      ]);
      fill(list, all.length ? table(['id', 'cron', 'destination', 'next', ''], rows) : note('info', 'no schedules'));
    });
  const dest = h('input', { name: 'destination', placeholder: 'destination URL or group' });
  const cron = h('input', { name: 'cron', placeholder: '*/5 * * * *' });
  const body = h('input', { name: 'body', placeholder: 'body' });
  const create = async (e) => {
    e.preventDefault();
    await guarded(
      list,
      async () => (
        await call('POST', `${Q}/schedules/${dest.value}`, body.value, { 'Upstash-Cron': cron.value, 'Content-Type': 'text/plain' }),
        load()
      ),
    );
  };
  fill(
    el,
    h(
      'form',
      { class: 'toolbar', id: 'schedule-form', onsubmit: create },
      dest,
      cron,
      body,
      h('button', { type: 'submit' }, 'Create schedule'),
    ),
    list,
  );
  load();
}

function queuesTab(el) {
  const list = h('div', { id: 'queues' });
  const load = () =>
    guarded(list, async () => {
      const all = await call('GET', `${Q}/queues`);
      const rows = all.map((q) => [
        q.name,
        String(q.parallelism),
        String(q.lag),
        q.paused ? 'paused' : 'active',
        h(
          'span',
          { class: 'toolbar' },
          actionButton(
            q.paused ? 'Resume' : 'Pause',
            {},
            null,
            async () => (await call('POST', `${Q}/queues/${enc(q.name)}/${q.paused ? 'resume' : 'pause'}`), load()),
            list,
          ),
          actionButton(
            'Delete',
            { class: 'danger' },
            `Delete the queue ${q.name}?`,
            async () => (await call('DELETE', `${Q}/queues/${enc(q.name)}`), load()),
            list,
          ),
        ),
      ]);
      fill(list, all.length ? table(['name', 'parallelism', 'lag', 'state', ''], rows) : note('info', 'no queues'));
    });
  const name = h('input', { name: 'queue-name', placeholder: 'queue name' });
  const parallelism = h('input', { name: 'parallelism', type: 'number', min: '1', value: '1' });
  const upsert = async (e) => {
    e.preventDefault();
    await guarded(
      list,
      async () => (await call('POST', `${Q}/queues`, { queueName: name.value, parallelism: Number(parallelism.value) }), load()),
    );
  };
  fill(
    el,
    h(
      'form',
      { class: 'toolbar', id: 'queue-form', onsubmit: upsert },
      name,
      parallelism,
      h('button', { type: 'submit' }, 'Create or update'),
    ),
    list,
  );
  load();
}

function groupsTab(el) {
  const list = h('div', { id: 'groups' });
  const load = () =>
    guarded(list, async () => {
      const all = await call('GET', `${Q}/topics`);
      const rows = all.map((g) => [
        g.name,
        h(
          'ul',
          null,
          g.endpoints.map((e) =>
            h(
              'li',
              null,
              e.name ? `${e.name}: ` : '',
              e.url,
              ' ',
              actionButton(
                '×',
                { class: 'small danger' },
                `Remove ${e.url} from ${g.name}?`,
                async () => (await call('DELETE', `${Q}/topics/${enc(g.name)}/endpoints`, { endpoints: [{ url: e.url }] }), load()),
                list,
              ),
            ),
          ),
        ),
        actionButton(
          'Delete',
          { class: 'danger' },
          `Delete the URL group ${g.name}?`,
          async () => (await call('DELETE', `${Q}/topics/${enc(g.name)}`), load()),
          list,
        ),
      ]);
      fill(list, all.length ? table(['name', 'endpoints', ''], rows) : note('info', 'no URL groups'));
    });
  const group = h('input', { name: 'group', placeholder: 'group name' });
  const url = h('input', { name: 'endpoint-url', placeholder: 'endpoint URL' });
  const add = async (e) => {
    e.preventDefault();
    await guarded(
      list,
      async () => (await call('POST', `${Q}/topics/${enc(group.value)}/endpoints`, { endpoints: [{ url: url.value }] }), load()),
    );
  };
  fill(
    el,
    h('form', { class: 'toolbar', id: 'group-form', onsubmit: add }, group, url, h('button', { type: 'submit' }, 'Add endpoint')),
    list,
  );
  load();
}

function keysTab(el) {
  const out = h('div', { id: 'signing-keys' });
  const show = (k) =>
    fill(
      out,
      table(
        ['key', 'value'],
        [
          ['current', h('code', null, k.current)],
          ['next', h('code', null, k.next)],
        ],
      ),
    );
  fill(
    el,
    h(
      'p',
      null,
      'Receivers verify the Upstash-Signature header of each delivery with these keys. Rotating makes the next key current and draws a new next key.',
    ),
    out,
    actionButton(
      'Rotate',
      { class: 'danger', id: 'rotate' },
      'Rotate the signing keys? Receivers that know only the current key will refuse deliveries signed with the new one.',
      async () => show(await call('POST', `${Q}/keys/rotate`)),
      out,
    ),
  );
  guarded(out, async () => show(await call('GET', `${Q}/keys`)));
}
