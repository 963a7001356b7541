// The vector page, over /vector/<index>/...: an index's info and namespaces, query by vector or by
// text with a metadata filter, fetch by ids or prefix, range, upsert, and delete or reset after a
// confirmation. Writes are offered only to a token that may write (the API refuses the others).
import { call } from './api.js';
import { field, fill, h, jsonTree, note, select, table } from './dom.js';
import { actionButton, tabs } from './tabs.js';

const enc = encodeURIComponent;

export function vectorPage(root, me) {
  const canWrite = me.role !== 'readonly';
  const index = select({ name: 'index', id: 'vector-index' }, me.vectorIndexes);
  const namespace = h('select', { name: 'namespace', id: 'vector-namespace' });
  const info = h('div', { id: 'vector-info', class: 'card' });
  const body = h('div');
  const ix = {
    /** POST /vector/<index>/<op>[/<namespace>] → result */
    run: async (op, payload, { namespaced = true, method = 'POST' } = {}) => {
      const ns = namespaced && namespace.value ? `/${enc(namespace.value)}` : '';
      return (await call(method, `/vector/${enc(index.value)}/${op}${ns}`, payload)).result;
    },
    canWrite,
    refresh: () => loadInfo(),
  };
  async function loadInfo() {
    try {
      const i = await ix.run('info', undefined, { namespaced: false, method: 'GET' });
      const chosen = namespace.value;
      fill(
        namespace,
        Object.keys(i.namespaces).map((n) => h('option', { value: n }, n === '' ? '(default namespace)' : n)),
      );
      if (Object.keys(i.namespaces).includes(chosen)) namespace.value = chosen;
      const ns = i.namespaces[namespace.value] ?? { vectorCount: 0, pendingVectorCount: 0 };
      fill(
        info,
        table(
          ['type', 'dimension', 'metric', 'vectors', 'pending', 'namespace vectors', 'embedder'],
          [
            [
              i.indexType,
              String(i.dimension ?? ''),
              i.similarityFunction,
              String(i.vectorCount),
              String(i.pendingVectorCount),
              String(ns.vectorCount),
              i.denseIndex?.embeddingModel ?? i.sparseIndex?.embeddingModel ?? 'none',
            ],
          ],
        ),
      );
    } catch (err) {
      fill(info, note('error', err.message));
    }
  }
  index.addEventListener('change', () => ((namespace.value = ''), loadInfo()));
  namespace.addEventListener('change', loadInfo);
  const views = { query: (el) => queryTab(el, ix), fetch: (el) => fetchTab(el, ix), range: (el) => rangeTab(el, ix) };
  if (canWrite) Object.assign(views, { upsert: (el) => upsertTab(el, ix), delete: (el) => deleteTab(el, ix) });
  fill(root, h('div', { class: 'toolbar' }, h('span', null, 'Index'), index, h('span', null, 'Namespace'), namespace), info, body);
  tabs(body, 'vector', views);
  loadInfo();
}

/** Records (from query, fetch or range) as a table of id, score, metadata and data. */
function records(list, withScore) {
  if (list.length === 0) return note('info', 'no vectors');
  const head = withScore ? ['id', 'score', 'metadata', 'data'] : ['id', 'metadata', 'data', 'vector'];
  const rows = list.map((r) =>
    r === null
      ? ['(not found)', '', '', '']
      : withScore
        ? [r.id, r.score.toFixed(4), r.metadata ? jsonTree(r.metadata) : '', r.data ?? '']
        : [r.id, r.metadata ? jsonTree(r.metadata) : '', r.data ?? '', r.vector ? `[${r.vector.length} values]` : ''],
  );
  return table(head, rows, { class: 'records' });
}

/** Wraps a form handler: runs it and shows its result or error in `out`. */
const showing = (out, run) => async (e) => {
  e.preventDefault();
  try {
    fill(out, await run());
  } catch (err) {
    fill(out, note('error', err.message));
  }
};

function queryTab(el, ix) {
  const mode = select({ name: 'query-mode' }, [
    ['data', 'by text (embedder)'],
    ['vector', 'by vector'],
  ]);
  const input = field('Text, or the vector as a JSON array', { name: 'query', rows: 2 });
  const topK = field('Top K', { name: 'topK', type: 'number', min: '1', value: '10' });
  const filter = field('Metadata filter', { name: 'filter', placeholder: "genre = 'drama' AND year > 2000" });
  const out = h('div', { id: 'query-results' });
  const run = async () => {
    const body = { topK: Number(topK.input.value), includeMetadata: true, includeData: true };
    if (filter.input.value) body.filter = filter.input.value;
    if (mode.value === 'data') body.data = input.input.value;
    else body.vector = JSON.parse(input.input.value);
    return records(await ix.run(mode.value === 'data' ? 'query-data' : 'query', body), true);
  };
  fill(
    el,
    h(
      'form',
      { id: 'query-form', class: 'card', onsubmit: showing(out, run) },
      mode,
      input,
      topK,
      filter,
      h('button', { type: 'submit' }, 'Query'),
    ),
    out,
  );
}

function fetchTab(el, ix) {
  const ids = field('Ids (comma-separated) or a prefix ending in *', { name: 'ids', placeholder: 'doc-1, doc-2  or  doc-*' });
  const out = h('div', { id: 'fetch-results' });
  const run = async () => {
    const text = ids.input.value.trim();
    const body = { includeMetadata: true, includeData: true, includeVectors: true };
    if (text.endsWith('*')) body.prefix = text.slice(0, -1);
    else
      body.ids = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    return records(await ix.run('fetch', body), false);
  };
  fill(
    el,
    h('form', { id: 'fetch-form', class: 'toolbar', onsubmit: showing(out, run) }, ids, h('button', { type: 'submit' }, 'Fetch')),
    out,
  );
}

function rangeTab(el, ix) {
  const prefix = h('input', { name: 'prefix', placeholder: 'id prefix (optional)' });
  const out = h('div', { id: 'range-results' });
  const more = h('div', { class: 'pager' });
  const page = async (cursor) => {
    const body = { cursor, limit: 50, includeMetadata: true, includeData: true };
    if (prefix.value) body.prefix = prefix.value;
    const { nextCursor, vectors } = await ix.run('range', body);
    fill(more, nextCursor && h('button', { type: 'button', onclick: () => page(nextCursor).then((t) => out.append(t)) }, 'More'));
    return records(vectors, false);
  };
  fill(
    el,
    h(
      'form',
      { id: 'range-form', class: 'toolbar', onsubmit: showing(out, () => page('0')) },
      prefix,
      h('button', { type: 'submit' }, 'Range'),
    ),
    out,
    more,
  );
}

function upsertTab(el, ix) {
  const items = field('Vectors (JSON array of {id, vector or data, metadata})', {
    name: 'vectors',
    rows: 8,
    value: '[\n  {"id": "doc-1", "data": "a short text", "metadata": {"genre": "drama"}}\n]',
  });
  const out = h('div', { id: 'upsert-result' });
  const run = async () => {
    const list = JSON.parse(items.input.value);
    const byData = Array.isArray(list) && list.every((v) => v.vector === undefined && v.sparseVector === undefined);
    await ix.run(byData ? 'upsert-data' : 'upsert', list);
    ix.refresh();
    return note('ok', `upserted ${list.length} vectors`);
  };
  fill(
    el,
    h('form', { id: 'upsert-form', class: 'card', onsubmit: showing(out, run) }, items, h('button', { type: 'submit' }, 'Upsert')),
    out,
  );
}

function deleteTab(el, ix) {
  const ids = h('input', { name: 'delete-ids', placeholder: 'ids (comma-separated) or prefix*' });
  const out = h('div', { id: 'delete-result' });
  const del = async () => {
    const text = ids.value.trim();
    const body = text.endsWith('*')
      ? { prefix: text.slice(0, -1) }
      : {
          ids: text
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        };
    const { deleted } = await ix.run('delete', body, { method: 'DELETE' });
    fill(out, note('ok', `deleted ${deleted}`));
    ix.refresh();
  };
  const reset = async () => {
    await ix.run('reset', undefined, { method: 'DELETE' });
    fill(out, note('ok', 'namespace reset'));
    ix.refresh();
  };
  fill(
    el,
    h(
      'div',
      { class: 'toolbar' },
      ids,
      actionButton('Delete vectors', { class: 'danger', id: 'delete-vectors' }, 'Delete these vectors?', del, out),
    ),
    h(
      'div',
      { class: 'toolbar' },
      actionButton('Reset the namespace', { class: 'danger', id: 'reset-namespace' }, 'Remove every vector of this namespace?', reset, out),
    ),
    out,
  );
}
