// One key: its type, TTL and value by type, with rename, expire, delete and per-type edits when the
// token may write. Every edit is a Redis command on the REST API, and the view reloads after it.
import { kv } from './api.js';
import { asText, fromHex, label, toHex } from './bytes.js';
import { field, fill, h, jsonTree, note, select, table } from './dom.js';
import { bytesNode } from './reply.js';

/** Renders `key` (Uint8Array or string) into `el`; `changed` is called after a rename or delete. */
export async function keyView(el, key, canWrite, changed) {
  const reload = (message) => keyView(el, key, canWrite, changed).then(() => message && el.prepend(note('ok', message)));
  const act = (fn, message) => async (e) => {
    e?.preventDefault?.();
    try {
      await fn();
      await reload(message);
    } catch (err) {
      el.prepend(note('error', err.message));
    }
  };
  let type, ttl;
  try {
    [type, ttl] = await Promise.all([kv('TYPE', key).then(label), kv('TTL', key)]);
  } catch (err) {
    return fill(el, note('error', err.message));
  }
  if (type === 'none') return fill(el, note('info', `${label(asBytes(key))}: no such key`));
  const body = h('div', { class: 'value' });
  fill(
    el,
    h(
      'div',
      { class: 'key-head' },
      h('h2', { id: 'key-title' }, label(asBytes(key))),
      h('span', { class: 'badge', id: 'key-type' }, type),
      h('span', { id: 'key-ttl' }, ttl === -1 ? 'no expiry' : `TTL ${ttl} s`),
    ),
    canWrite && keyActions(key, act, changed, el),
    body,
  );
  try {
    await (VIEWS[type] ?? unknownView)(body, key, canWrite, act);
  } catch (err) {
    body.append(note('error', err.message));
  }
}

function asBytes(key) {
  return typeof key === 'string' ? new TextEncoder().encode(key) : key;
}

function keyActions(key, act, changed, el) {
  const newName = h('input', { name: 'rename', placeholder: 'new name' });
  const seconds = h('input', { name: 'expire', type: 'number', min: '1', placeholder: 'seconds' });
  return h(
    'div',
    { class: 'toolbar key-actions' },
    newName,
    h(
      'button',
      {
        type: 'button',
        id: 'rename',
        onclick: async () => {
          try {
            await kv('RENAME', key, newName.value);
            await keyView(el, newName.value, true, changed);
            changed();
          } catch (err) {
            el.prepend(note('error', err.message));
          }
        },
      },
      'Rename',
    ),
    seconds,
    h('button', { type: 'button', id: 'expire', onclick: act(() => kv('EXPIRE', key, seconds.value), 'expiry set') }, 'Expire'),
    h('button', { type: 'button', id: 'persist', onclick: act(() => kv('PERSIST', key), 'expiry removed') }, 'Persist'),
    h(
      'button',
      {
        type: 'button',
        id: 'delete',
        class: 'danger',
        onclick: async () => {
          if (!confirm(`Delete the key ${label(asBytes(key))}?`)) return;
          try {
            await kv('DEL', key);
            fill(el, note('ok', `deleted ${label(asBytes(key))}`));
            changed();
          } catch (err) {
            el.prepend(note('error', err.message));
          }
        },
      },
      'Delete',
    ),
  );
}

/** A small form of inputs whose values go to `run(...values)`. */
function addForm(id, names, button, run) {
  const inputs = names.map((n) => h('input', { name: n, placeholder: n }));
  return h(
    'form',
    { class: 'toolbar', id, onsubmit: run(() => inputs.map((i) => i.value)) },
    inputs,
    h('button', { type: 'submit' }, button),
  );
}

async function stringView(body, key, canWrite, act) {
  const value = await kv('GET', key);
  const text = asText(value);
  const show = h('pre', { id: 'string-value', class: 'value-text' });
  const mode = select({ name: 'mode' }, ['text', 'json', 'hex']);
  mode.value = text === undefined ? 'hex' : 'text';
  const render = () => {
    if (mode.value === 'hex' || text === undefined) return fill(show, toHex(value));
    if (mode.value === 'json') {
      try {
        return fill(show, jsonTree(JSON.parse(text)));
      } catch {
        return fill(show, note('info', 'not JSON'), text);
      }
    }
    fill(show, text);
  };
  mode.addEventListener('change', render);
  render();
  body.append(h('div', { class: 'toolbar' }, h('span', null, `${value.length} bytes, shown as`), mode), show);
  if (!canWrite) return;
  const edit = field('New value', { name: 'value', rows: 4, value: text ?? toHex(value) });
  const asHex = select({ name: 'edit-as' }, [
    ['text', 'as text'],
    ['hex', 'as hex'],
  ]);
  asHex.value = text === undefined ? 'hex' : 'text';
  body.append(
    h(
      'form',
      {
        id: 'edit-string',
        onsubmit: act(() => kv('SET', key, asHex.value === 'hex' ? fromHex(edit.input.value) : edit.input.value, 'KEEPTTL'), 'saved'),
      },
      edit,
      asHex,
      h('button', { type: 'submit' }, 'Save'),
    ),
  );
}

async function scanAll(cmd, key, limit = 1000) {
  const out = [];
  let cursor = '0';
  do {
    const [c, items] = await kv(cmd, key, cursor, 'COUNT', '200');
    out.push(...items);
    cursor = label(c);
  } while (cursor !== '0' && out.length < limit);
  return out;
}

function pairs(flat) {
  const out = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

const removeButton = (canWrite, act, fn) =>
  canWrite ? h('button', { type: 'button', class: 'small danger', onclick: act(fn, 'removed') }, '×') : '';

const VIEWS = {
  string: stringView,
  async hash(body, key, canWrite, act) {
    const rows = pairs(await scanAll('HSCAN', key)).map(([f, v]) => [
      bytesNode(f),
      bytesNode(v),
      removeButton(canWrite, act, () => kv('HDEL', key, f)),
    ]);
    body.append(table(['field', 'value', ''], rows, { id: 'members' }));
    if (canWrite)
      body.append(addForm('add-member', ['field', 'value'], 'Set field', (get) => act(() => kv('HSET', key, ...get()), 'saved')));
  },
  async list(body, key, canWrite, act) {
    const [len, items] = await Promise.all([kv('LLEN', key), kv('LRANGE', key, '0', '199')]);
    body.append(h('p', null, `${len} elements${len > 200 ? ', the first 200 shown' : ''}`));
    const rows = items.map((v, i) => [String(i), bytesNode(v), removeButton(canWrite, act, () => kv('LREM', key, '1', v))]);
    body.append(table(['index', 'element', ''], rows, { id: 'members' }));
    if (canWrite) body.append(addForm('add-member', ['element'], 'Push', (get) => act(() => kv('RPUSH', key, ...get()), 'saved')));
  },
  async set(body, key, canWrite, act) {
    const rows = (await scanAll('SSCAN', key)).map((m) => [bytesNode(m), removeButton(canWrite, act, () => kv('SREM', key, m))]);
    body.append(table(['member', ''], rows, { id: 'members' }));
    if (canWrite) body.append(addForm('add-member', ['member'], 'Add', (get) => act(() => kv('SADD', key, ...get()), 'saved')));
  },
  async zset(body, key, canWrite, act) {
    const [card, flat] = await Promise.all([kv('ZCARD', key), kv('ZRANGE', key, '0', '199', 'WITHSCORES')]);
    body.append(h('p', null, `${card} members${card > 200 ? ', the first 200 shown' : ''}`));
    const rows = pairs(flat).map(([m, s]) => [bytesNode(m), label(s), removeButton(canWrite, act, () => kv('ZREM', key, m))]);
    body.append(table(['member', 'score', ''], rows, { id: 'members' }));
    if (canWrite) body.append(addForm('add-member', ['score', 'member'], 'Add', (get) => act(() => kv('ZADD', key, ...get()), 'saved')));
  },
  async stream(body, key, canWrite, act) {
    const [len, entries] = await Promise.all([kv('XLEN', key), kv('XRANGE', key, '-', '+', 'COUNT', '100')]);
    body.append(h('p', null, `${len} entries${len > 100 ? ', the first 100 shown' : ''}`));
    const rows = entries.map(([id, fields]) => [
      label(id),
      h(
        'dl',
        null,
        pairs(fields).map(([f, v]) => [h('dt', null, bytesNode(f)), h('dd', null, bytesNode(v))]),
      ),
      removeButton(canWrite, act, () => kv('XDEL', key, id)),
    ]);
    body.append(table(['id', 'fields', ''], rows, { id: 'members' }));
    if (canWrite)
      body.append(addForm('add-member', ['field', 'value'], 'Add entry', (get) => act(() => kv('XADD', key, '*', ...get()), 'saved')));
  },
  async 'ReJSON-RL'(body, key, canWrite, act) {
    const text = label(await kv('JSON.GET', key));
    body.append(h('div', { id: 'json-value' }, jsonTree(JSON.parse(text))));
    if (!canWrite) return;
    const edit = field('Document', { name: 'value', rows: 6, value: JSON.stringify(JSON.parse(text), null, 2) });
    body.append(
      h(
        'form',
        { id: 'edit-json', onsubmit: act(() => kv('JSON.SET', key, '$', edit.input.value), 'saved') },
        edit,
        h('button', { type: 'submit' }, 'Save'),
      ),
    );
  },
};

async function unknownView(body, key) {
  body.append(note('info', `no view for this type; DUMP is ${toHex((await kv('DUMP', key)) ?? new Uint8Array())}`));
}

const FIRST_VALUE = {
  string: ['SET', ['value']],
  hash: ['HSET', ['field', 'value']],
  list: ['RPUSH', ['element']],
  set: ['SADD', ['member']],
  zset: ['ZADD', ['score', 'member']],
  stream: ['XADD', ['field', 'value']],
  'ReJSON-RL': ['JSON.SET', ['document']],
};

/** A form for a new key of any type, with its first value. */
export function addKeyForm(el, open) {
  const type = select({ name: 'new-type' }, Object.keys(FIRST_VALUE));
  const name = h('input', { name: 'new-key', placeholder: 'key name', required: true });
  const parts = h('span');
  const inputs = () => [...parts.querySelectorAll('input')].map((i) => i.value);
  const shape = () =>
    fill(
      parts,
      FIRST_VALUE[type.value][1].map((n) => h('input', { name: `new-${n}`, placeholder: n })),
    );
  type.addEventListener('change', shape);
  shape();
  const create = async (e) => {
    e.preventDefault();
    const [cmd] = FIRST_VALUE[type.value];
    const extra = cmd === 'XADD' ? ['*'] : cmd === 'JSON.SET' ? ['$'] : [];
    try {
      const exists = await kv('EXISTS', name.value);
      if (exists) throw new Error(`the key ${name.value} exists already`);
      await kv(cmd, name.value, ...extra, ...inputs());
      await open(name.value);
    } catch (err) {
      el.prepend(note('error', err.message));
    }
  };
  fill(
    el,
    h(
      'form',
      { id: 'new-key-form', class: 'card', onsubmit: create },
      h('h2', null, 'New key'),
      type,
      name,
      parts,
      h('button', { type: 'submit' }, 'Create'),
    ),
  );
}
