// The proxy page (dev stack, or respgate proxy's own): its clients, per-command calls, time and latency percentiles (INFO
// latencystats), upstream calls, what each client name and command costs upstream (INFO clientcost), the slowlog, refreshed
// every two seconds while the page is open, with charts of the rates and of a command's latency over the last minutes; and,
// when the session allows them, kill a client, reset the slowlog, reset the statistics.
import { ApiError, authHeader } from './api.js';
import { fill, h, note, select, table } from './dom.js';
import { lineChart, rateChart } from './chart.js';
import { actionButton } from './tabs.js';

const EVERY_MS = 2000;
/** Redis 7.0's CLIENT LIST fields shown in their own columns; any other field is shown under "more". */
const COLUMNS = ['id', 'addr', 'name', 'lib-name', 'age', 'idle', 'flags', 'sub', 'psub', 'multi', 'cmd', 'resp'];
const HIDDEN = new Set([
  ...COLUMNS,
  'laddr',
  'fd',
  'db',
  'ssub',
  'qbuf',
  'qbuf-free',
  'argv-mem',
  'multi-mem',
  'rbs',
  'rbp',
  'obl',
  'oll',
  'omem',
  'tot-mem',
  'events',
  'user',
  'redir',
  'lib-ver',
]);

async function snapshot() {
  const res = await fetch('api/proxy', { headers: authHeader() });
  const body = await res.json();
  if (!res.ok) throw new ApiError(res.status, body.error);
  return body;
}

/** One of the actions the session allows (`me.actions`): kill a client, reset the slowlog or the statistics. */
async function act(action, id) {
  const res = await fetch('api/proxy/action', {
    method: 'POST',
    headers: { ...authHeader(), 'Content-Type': 'application/json' },
    body: JSON.stringify(id === undefined ? { action } : { action, id }),
  });
  const body = await res.json();
  if (!res.ok) throw new ApiError(res.status, body.error);
  return body.result;
}

export function proxyPage(root, me = {}) {
  const may = new Set(me.actions ?? []);
  const live = h('input', { type: 'checkbox', id: 'live', checked: true });
  const summary = h('div', { id: 'proxy-summary', class: 'card' });
  const chart = h('div', { id: 'proxy-chart', class: 'card' });
  const latencyChart = h('div', { id: 'proxy-latency' });
  const latencyOf = select({ id: 'latency-command', name: 'latency-command' }, []);
  const clients = h('div', { id: 'proxy-clients' });
  const commands = h('div', { id: 'proxy-commands' });
  const costClients = h('div', { id: 'proxy-cost-clients' });
  const costCommands = h('div', { id: 'proxy-cost-commands' });
  const slowlog = h('div', { id: 'proxy-slowlog' });
  const status = h('div');
  const samples = [];
  const actions = h(
    'span',
    { class: 'toolbar' },
    may.has('slowlog-reset') &&
      actionButton('Reset slowlog', { id: 'slowlog-reset' }, 'Empty the slowlog?', () => act('slowlog-reset'), status),
    may.has('resetstat') &&
      actionButton(
        'Reset statistics',
        { id: 'resetstat' },
        'Reset the command, latency and cost statistics (CONFIG RESETSTAT)?',
        () => act('resetstat'),
        status,
      ),
  );
  const kill = may.has('client-kill')
    ? (c) =>
        actionButton(
          'Kill',
          { class: 'small danger kill', 'data-id': c.id },
          `Close the connection ${c.id} (${c.name || c.addr})?`,
          () => act('client-kill', c.id),
          status,
        )
    : undefined;
  fill(
    root,
    h('div', { class: 'toolbar' }, h('label', { class: 'inline' }, live, ' live (every 2 s)'), actions, status),
    summary,
    h('div', { class: 'charts' }, chart, h('div', { class: 'card' }, h('h3', null, 'Latency of ', latencyOf), latencyChart)),
    h('h2', null, 'Clients'),
    clients,
    h('h2', null, 'Commands'),
    commands,
    h('h2', null, 'Upstream cost by client'),
    costClients,
    h('h2', null, 'Upstream cost by command'),
    costCommands,
    h('h2', null, 'Slowlog'),
    slowlog,
  );
  const tick = async () => {
    if (!root.isConnected) return;
    try {
      const s = await snapshot();
      fill(status);
      samples.push({
        at: s.at,
        commands: Number(s.stats.total_commands_processed ?? 0),
        upstream: Number(s.stats.total_upstream_calls ?? 0),
        perCommand: s.commands,
        latency: s.latency ?? {},
        cost: s.cost.commands,
      });
      while (samples.length > 150) samples.shift();
      drawSummary(summary, s, samples);
      fill(
        chart,
        h('h3', null, 'Rates'),
        rateChart(samples, [
          ['commands', 'commands/s'],
          ['upstream', 'upstream calls/s'],
        ]),
      );
      drawLatency(latencyChart, latencyOf, samples);
      drawClients(clients, s.clients, kill);
      drawCommands(commands, s.commands, s.latency ?? {});
      drawCost(costClients, 'client', s.cost.clients, 'no command has gone upstream yet');
      drawCost(costCommands, 'command', s.cost.commands, 'no command has gone upstream yet');
      drawSlowlog(slowlog, s.slowlog);
    } catch (err) {
      fill(status, note('error', err.message));
    }
    if (live.checked && root.isConnected) setTimeout(tick, EVERY_MS);
  };
  live.addEventListener('change', () => live.checked && tick());
  tick();
}

function drawSummary(el, s, samples) {
  // The proxy's instantaneous_ops_per_sec stays 0: the rate comes from the page's own samples.
  const [a, b] = samples.slice(-2);
  const rate = a && b ? (((b.commands - a.commands) * 1000) / Math.max(1, b.at - a.at)).toFixed(1) : '';
  const st = s.stats;
  const blocked = s.clients.filter((c) => c.flags?.includes('b')).length;
  const subscribed = s.clients.filter((c) => Number(c.sub) + Number(c.psub) > 0).length;
  fill(
    el,
    table(
      ['proxy', 'clients', 'subscribed', 'blocked', 'commands', 'upstream calls', 'commands/s', 'error replies'],
      [
        [
          s.address,
          String(s.clients.length),
          String(subscribed),
          String(blocked),
          st.total_commands_processed ?? '',
          st.total_upstream_calls ?? '',
          rate,
          st.total_error_replies ?? '',
        ],
      ],
    ),
  );
}

function drawClients(el, list, kill) {
  const extra = [...new Set(list.flatMap((c) => Object.keys(c)).filter((k) => !HIDDEN.has(k)))];
  const rows = list.map((c) => [...COLUMNS.map((k) => c[k] ?? ''), ...extra.map((k) => c[k] ?? ''), ...(kill ? [kill(c)] : [])]);
  const headers = [...COLUMNS, ...extra, ...(kill ? [''] : [])];
  fill(el, list.length ? table(headers, rows, { class: 'clients' }) : note('info', 'no client is connected'));
}

/**
 * The chosen command's latency over the last minutes: p50 and p99 as INFO latencystats gives them at each
 * sample (since the start or CONFIG RESETSTAT, so they move slowly), and the mean of each two-second
 * interval (its µs over its calls), which shows a change at once. The busiest command is chosen first.
 */
function drawLatency(el, choice, samples) {
  const last = samples[samples.length - 1];
  // Commands that went upstream first (the console's own INFO and CLIENT LIST would lead otherwise), busiest first.
  const upstream = (n) => last.cost[n.split('|')[0]]?.commands ?? 0;
  const names = Object.keys(last.perCommand).sort(
    (a, b) => upstream(b) - upstream(a) || last.perCommand[b].calls - last.perCommand[a].calls,
  );
  const chosen = names.includes(choice.value) ? choice.value : names[0];
  if ([...choice.options].map((o) => o.value).join() !== names.join()) {
    fill(
      choice,
      names.map((n) => h('option', { value: n }, n)),
    );
  }
  if (chosen === undefined) return fill(el, note('info', 'no command yet'));
  choice.value = chosen;
  choice.onchange = () => drawLatency(el, choice, samples);
  const points = samples.map((s, i) => {
    const now = s.perCommand[chosen];
    const before = samples[i - 1]?.perCommand[chosen];
    const calls = (now?.calls ?? 0) - (before?.calls ?? 0);
    return {
      at: s.at,
      p50: s.latency[chosen]?.p50,
      p99: s.latency[chosen]?.p99,
      mean: before && calls > 0 ? (now.usec - before.usec) / calls : undefined,
    };
  });
  fill(
    el,
    lineChart(
      points,
      [
        ['p50', 'p50'],
        ['p99', 'p99'],
        ['mean', 'mean of the last 2 s'],
      ],
      { label: `latency of ${chosen}`, digits: 1, unit: ' µs' },
    ),
  );
}

// p50, p99 and p99.9 are the proxy's latency histogram's (µs, within 0.8 %; docs/proxy.md).
function drawCommands(el, stats, latency) {
  const pct = (name, p) => (latency[name]?.[p] === undefined ? '' : latency[name][p].toFixed(3));
  const rows = Object.entries(stats)
    .sort((a, b) => b[1].calls - a[1].calls)
    .map(([name, c]) => [
      name,
      String(c.calls),
      String(c.usec),
      (c.usec_per_call ?? 0).toFixed(2),
      pct(name, 'p50'),
      pct(name, 'p99'),
      pct(name, 'p99.9'),
      String(c.failed_calls ?? 0),
      String(c.rejected_calls ?? 0),
    ]);
  fill(
    el,
    rows.length
      ? table(['command', 'calls', 'µs total', 'µs per call', 'p50 µs', 'p99 µs', 'p99.9 µs', 'failed', 'rejected'], rows, {
          class: 'commands',
        })
      : note('info', 'no command yet'),
  );
}

// Requests are shares (a coalesced /pipeline request is split among its commands), hence decimals.
// A client is its connection name, else its library name, else (unnamed); past the 20 costliest
// names the proxy counts the rest as `other`.
function drawCost(el, label, byName, empty) {
  const rows = Object.entries(byName)
    .sort((a, b) => b[1].commands - a[1].commands || (a[0] < b[0] ? -1 : 1))
    .map(([name, c]) => [
      name,
      String(c.commands),
      String(Number((c.requests ?? 0).toFixed(3))),
      String(c.bytes_sent),
      String(c.bytes_received),
      String(c.errors),
    ]);
  fill(
    el,
    rows.length
      ? table([label, 'commands', 'requests', 'bytes sent', 'bytes received', 'error replies'], rows, { class: 'cost' })
      : note('info', empty),
  );
}

function drawSlowlog(el, entries) {
  const rows = entries.map((e) => [
    String(e.id),
    new Date(e.time * 1000).toLocaleTimeString(),
    String(e.durationUsec),
    e.args.join(' '),
    `${e.client} ${e.name}`.trim(),
  ]);
  fill(
    el,
    rows.length ? table(['id', 'time', 'µs', 'command', 'client'], rows, { class: 'slowlog' }) : note('info', 'the slowlog is empty'),
  );
}
