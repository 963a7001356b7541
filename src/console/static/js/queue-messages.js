// The queue page's messages tab: the queue's depth over the last minutes (in flight, waiting, delayed,
// dead letters), the messages in flight and scheduled, and one message with its headers, body,
// attempts and callback outcomes. QStash's API lists none of these, so the page asks the console's
// own read calls (/console/api/queue/…, behind the same queue tokens; docs/console.md).
import { call } from './api.js';
import { asText, fromBase64, toHex } from './bytes.js';
import { lineChart } from './chart.js';
import { fill, h, note, table } from './dom.js';
import { enc, guarded, Q } from './queue-common.js';
import { actionButton, when } from './tabs.js';

const C = '/console/api/queue';
const EVERY_MS = 2000;
/** Five minutes of samples, one every two seconds; kept while the tab is reopened. */
const KEPT = 150;
const depthSamples = [];

/** `canCancel`: offer Cancel message (not to the Read Only token, which the queue API would refuse). */
export function messagesTab(el, canCancel = true) {
  const live = h('input', { type: 'checkbox', id: 'queue-live', checked: true });
  const chart = h('div', { id: 'queue-depth', class: 'card' });
  const list = h('div', { id: 'pending' });
  const id = h('input', { name: 'message-id', placeholder: 'msg_…' });
  const found = h('div', { id: 'message' });
  const open = (messageId) => {
    id.value = messageId;
    return showMessage(found, messageId, canCancel);
  };
  fill(
    el,
    h('div', { class: 'toolbar' }, h('label', { class: 'inline' }, live, ' live (every 2 s)')),
    chart,
    h('h2', null, 'Messages in flight and scheduled'),
    list,
    h(
      'form',
      { class: 'card', id: 'message-form', onsubmit: (e) => (e.preventDefault(), open(id.value.trim())) },
      h('h2', null, 'A message'),
      h('p', null, 'Pending, or delivered or failed within the logs: its headers, body, attempts and callbacks.'),
      h('div', { class: 'toolbar' }, id, h('button', { type: 'submit' }, 'Look up')),
      found,
    ),
  );
  const tick = async () => {
    if (!el.isConnected) return;
    await guarded(list, async () => {
      const [depth, pending] = await Promise.all([call('GET', `${C}/depth`), call('GET', `${C}/messages`)]);
      depthSamples.push(depth);
      while (depthSamples.length > KEPT) depthSamples.shift();
      fill(
        chart,
        h('h3', null, 'Queue depth'),
        lineChart(
          depthSamples,
          [
            ['inFlight', 'in flight'],
            ['waiting', 'waiting'],
            ['delayed', 'delayed (scheduled or retrying)'],
            ['dlq', 'dead letters'],
          ],
          { label: 'queue depth', digits: 0 },
        ),
      );
      drawPending(list, pending.messages, open);
    });
    if (live.checked && el.isConnected) setTimeout(tick, EVERY_MS);
  };
  live.addEventListener('change', () => live.checked && tick());
  tick();
}

function drawPending(el, messages, open) {
  const rows = messages.map((m) => [
    m.state,
    h('button', { type: 'button', class: 'link message-id', onclick: () => open(m.messageId) }, m.messageId),
    m.kind === 'message' ? m.url : `${m.kind} of ${m.sourceMessageId ?? ''}: ${m.url}`,
    m.queueName ?? '',
    `${m.attempts} of ${m.maxRetries + 1}`,
    when(m.dueAt),
    when(m.createdAt),
  ]);
  fill(
    el,
    rows.length
      ? table(['state', 'message', 'destination', 'queue', 'attempts', 'due', 'created'], rows, { class: 'pending' })
      : note('info', 'no message is in flight or scheduled'),
  );
}

async function showMessage(el, messageId, canCancel) {
  await guarded(el, async () => {
    const d = await call('GET', `${C}/messages/${enc(messageId)}`);
    const m = d.message;
    fill(
      el,
      h(
        'dl',
        { class: 'fields', id: 'message-fields' },
        field('message', m.messageId),
        field('state', `${d.state}${d.pending ? ' (pending)' : ''}`),
        field('destination', `${m.method ?? 'POST'} ${m.url}`),
        m.queueName && field('queue', m.queueName),
        m.notBefore && field('not before', when(m.notBefore)),
        m.maxRetries !== undefined && field('retries', String(m.maxRetries)),
        m.callback && field('callback', m.callback),
        m.failureCallback && field('failure callback', m.failureCallback),
      ),
      h('h3', null, 'Headers'),
      headersTable(m.header ?? {}),
      h('h3', null, 'Body'),
      h('pre', { id: 'message-body' }, bodyText(m)),
      h('h3', null, 'Attempts'),
      attemptsTable(d.attempts, 'message-attempts', 'no attempt yet'),
      h('h3', null, 'Callbacks'),
      h(
        'div',
        { id: 'message-callbacks' },
        d.callbacks.length
          ? table(
              ['callback', 'message', 'url', 'state', 'responses'],
              d.callbacks.map((c) => [
                c.kind,
                c.messageId,
                c.url,
                c.state,
                c.attempts.map((a) => a.responseStatus ?? a.error ?? '').join(', '),
              ]),
            )
          : note('info', 'no callback was sent for this message'),
      ),
      d.pending &&
        canCancel &&
        actionButton(
          'Cancel message',
          { class: 'danger', id: 'cancel-message' },
          `Cancel ${m.messageId}?`,
          async () => (await call('DELETE', `${Q}/messages/${enc(m.messageId)}`), showMessage(el, messageId, canCancel)),
          el,
        ),
    );
  });
}

function field(name, value) {
  return [h('dt', null, name), h('dd', null, value)];
}

function headersTable(header) {
  const rows = Object.entries(header).map(([name, values]) => [name, Array.isArray(values) ? values.join(', ') : String(values)]);
  return rows.length ? table(['header', 'value'], rows, { id: 'message-headers' }) : note('info', 'no headers');
}

/** The body as text when it is printable UTF-8, else as hex. */
function bodyText(m) {
  if (m.body !== undefined && m.bodyBase64 === undefined) return m.body;
  if (m.bodyBase64 === undefined) return '';
  const bytes = fromBase64(m.bodyBase64);
  return asText(bytes) ?? `hex: ${toHex(bytes)}`;
}

function attemptsTable(attempts, id, empty) {
  const rows = attempts.map((a, i) => [
    String(i + 1),
    when(a.time),
    a.state,
    a.responseStatus === undefined ? '' : String(a.responseStatus),
    a.error ?? '',
    a.responseBody ? (asText(fromBase64(a.responseBody)) ?? `hex: ${toHex(fromBase64(a.responseBody))}`) : '',
  ]);
  return h('div', { id }, rows.length ? table(['#', 'time', 'outcome', 'status', 'error', 'response body'], rows) : note('info', empty));
}
