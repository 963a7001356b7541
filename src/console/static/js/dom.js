// DOM building without innerHTML: every piece of text becomes a text node, so user data (key names,
// values, message bodies) is always shown as text and never parsed as HTML.

/**
 * h('div', {class: 'x', onclick: fn, 'data-id': id}, 'text', child, [more]) → an element.
 * Attributes starting with "on" take functions (listeners); every other value is set with setAttribute.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value') el.value = value;
    else if (name === 'checked' || name === 'disabled' || name === 'selected') el[name] = Boolean(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A status line: `kind` is 'error', 'ok' or 'info'. */
export function note(kind, text) {
  return h('p', { class: `note ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A table from a header row and rows of cells (strings or nodes). */
export function table(headers, rows, attrs = {}) {
  return h(
    'table',
    attrs,
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        headers.map((x) => h('th', null, x)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((r) =>
        h(
          'tr',
          null,
          r.map((c) => h('td', null, c)),
        ),
      ),
    ),
  );
}

/** A labelled input; returns the label, whose `input` property is the field. */
export function field(label, attrs = {}) {
  const input = h(attrs.rows ? 'textarea' : 'input', attrs);
  const el = h('label', null, h('span', null, label), input);
  el.input = input;
  return el;
}

/** A <select> of options (values shown as themselves, or [value, label] pairs). */
export function select(attrs, options) {
  return h(
    'select',
    attrs,
    options.map((o) => (Array.isArray(o) ? h('option', { value: o[0] }, o[1]) : h('option', { value: o }, o))),
  );
}

/** A JSON value as a collapsible tree of text nodes. */
export function jsonTree(value) {
  if (value === null || typeof value !== 'object')
    return h('span', { class: `json-${value === null ? 'null' : typeof value}` }, JSON.stringify(value));
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  const label = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return h(
    'details',
    { class: 'json', open: true },
    h('summary', null, label),
    h(
      'ul',
      null,
      entries.map(([k, v]) => h('li', null, h('span', { class: 'json-key' }, k), ': ', jsonTree(v))),
    ),
  );
}
