// The data browser: SCAN with a pattern and a type filter, page by page; one key's view by type
// (key-view.js); a command box that runs any command over the REST API and shows its reply.
import { kv } from './api.js';
import { label, toHex } from './bytes.js';
import { splitCommandLine } from './command-line.js';
import { field, fill, h, note, select } from './dom.js';
import { addKeyForm, keyView } from './key-view.js';
import { replyNode } from './reply.js';

const TYPES = ['', 'string', 'hash', 'list', 'set', 'zset', 'stream', 'ReJSON-RL'];
const PAGE_SIZE = 50;

export function dataPage(root, me) {
  const canWrite = me.role !== 'readonly';
  const pattern = h('input', { name: 'pattern', value: '*', placeholder: 'pattern, e.g. user:*' });
  const type = select(
    { name: 'type' },
    TYPES.map((t) => [t, t || 'any type']),
  );
  const keys = h('ul', { id: 'keys', class: 'keys' });
  const pager = h('div', { class: 'pager' });
  const detail = h('div', { id: 'detail', class: 'detail' });
  const status = h('div', { class: 'status' });
  const openName = h('input', { name: 'open', placeholder: 'key name' });

  const open = (key) => keyView(detail, key, canWrite, () => scan(0));
  let cursor = '0';
  // Only the newest scan draws: an older one still in flight must not overwrite its answer.
  let generation = 0;

  async function scan(from) {
    const mine = ++generation;
    fill(status);
    try {
      const found = [];
      // SCAN may return a key twice while Redis resizes its table (after many deletes): shown once.
      const seen = new Set();
      let next = String(from);
      // SCAN may return few keys per call with a MATCH: go on until a page is full or the end.
      for (let rounds = 0; rounds < 50 && found.length < PAGE_SIZE; rounds++) {
        const args = ['SCAN', next, 'MATCH', pattern.value || '*', 'COUNT', String(PAGE_SIZE)];
        if (type.value) args.push('TYPE', type.value);
        const [c, batch] = await kv(...args);
        for (const k of batch) {
          const bytes = toHex(k, '');
          if (seen.has(bytes)) continue;
          seen.add(bytes);
          found.push(k);
        }
        next = label(c);
        if (next === '0') break;
      }
      const types = await Promise.all(found.map((k) => kv('TYPE', k).catch(() => new TextEncoder().encode('?'))));
      if (mine !== generation) return;
      cursor = next;
      fill(
        keys,
        found.map((k, i) =>
          h(
            'li',
            null,
            h(
              'button',
              { type: 'button', class: 'key', onclick: () => open(k) },
              h('span', { class: 'key-name' }, label(k)),
              h('span', { class: 'badge' }, label(types[i])),
            ),
          ),
        ),
      );
      if (found.length === 0) keys.append(h('li', { class: 'empty' }, 'no keys match'));
      fill(
        pager,
        from !== 0 && h('button', { type: 'button', onclick: () => scan(0) }, 'First page'),
        cursor !== '0' && h('button', { type: 'button', id: 'next-page', onclick: () => scan(cursor) }, 'Next page'),
      );
    } catch (err) {
      if (mine !== generation) return;
      fill(keys);
      fill(
        status,
        note('error', err.message),
        me.role === 'readonly' && note('info', 'The Read Only token may not SCAN (as on the hosted service): open a key by its name.'),
      );
    }
  }

  fill(
    root,
    h(
      'form',
      { class: 'toolbar', id: 'scan-form', onsubmit: (e) => (e.preventDefault(), scan(0)) },
      pattern,
      type,
      h('button', { type: 'submit', id: 'scan' }, 'Scan'),
      h('span', { class: 'sep' }),
      openName,
      h('button', { type: 'button', id: 'open', onclick: () => openName.value && open(openName.value) }, 'Open'),
      canWrite && h('button', { type: 'button', id: 'add-key', onclick: () => addKeyForm(detail, open) }, 'Add key'),
    ),
    status,
    h('div', { class: 'split' }, h('div', { class: 'list' }, keys, pager), detail),
    commandBox(),
  );
  scan(0);
}

function commandBox() {
  const line = field('Command', { name: 'command', placeholder: 'e.g. HGETALL user:1', autocomplete: 'off' });
  const out = h('div', { id: 'command-reply', class: 'reply' });
  const run = async (e) => {
    e.preventDefault();
    let args;
    try {
      args = splitCommandLine(line.input.value);
    } catch (err) {
      return fill(out, note('error', `ERR ${err.message}`));
    }
    if (args.length === 0) return fill(out);
    try {
      fill(out, replyNode(await kv(...args)));
    } catch (err) {
      fill(out, note('error', err.message));
    }
  };
  return h(
    'form',
    { class: 'card command', id: 'command-form', onsubmit: run },
    h('h2', null, 'Command'),
    line,
    h('button', { type: 'submit', id: 'run' }, 'Run'),
    out,
  );
}
