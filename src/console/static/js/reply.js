// A decoded KV reply (api.js kv) as nodes, in redis-cli's words: (integer), (nil), numbered arrays;
// binary strings in hex.
import { asText, toHex } from './bytes.js';
import { h } from './dom.js';

export function replyNode(reply) {
  if (reply === null) return h('span', { class: 'nil' }, '(nil)');
  if (typeof reply === 'number') return h('span', { class: 'int' }, `(integer) ${reply}`);
  if (reply instanceof Uint8Array) return bytesNode(reply);
  if (Array.isArray(reply)) {
    if (reply.length === 0) return h('span', { class: 'nil' }, '(empty array)');
    return h(
      'ol',
      { class: 'array', start: 1 },
      reply.map((r) => h('li', null, replyNode(r))),
    );
  }
  return h('span', null, JSON.stringify(reply));
}

/** Text when printable UTF-8, else hex with a marker. */
export function bytesNode(bytes) {
  const text = asText(bytes);
  if (text !== undefined) return h('span', { class: 'str' }, text);
  return h('span', { class: 'bin', title: `${bytes.length} bytes, not text` }, h('span', { class: 'badge' }, 'hex'), ' ', toHex(bytes));
}
