// Tabs inside a page, remembered in the URL (#page/tab) so a reload or a link opens the same tab.
import { fill, h } from './dom.js';

/** `views` maps a tab name to (el) => void; draws the tab named in the hash, else the first. */
export function tabs(root, page, views) {
  const names = Object.keys(views);
  const wanted = location.hash.slice(1).split('/')[1];
  const bar = h('div', { class: 'tabs', role: 'tablist' });
  const body = h('div', { class: 'tab-body' });
  const show = (name) => {
    for (const b of bar.children) b.classList.toggle('active', b.dataset.tab === name);
    history.replaceState(null, '', `#${page}/${name}`);
    fill(body);
    views[name](body);
  };
  for (const name of names)
    bar.append(h('button', { type: 'button', role: 'tab', 'data-tab': name, id: `tab-${name}`, onclick: () => show(name) }, name));
  fill(root, bar, body);
  show(names.includes(wanted) ? wanted : names[0]);
}

/** A button that asks before it acts, then reports errors in `where`. */
export function actionButton(text, attrs, question, act, where) {
  return h(
    'button',
    {
      type: 'button',
      ...attrs,
      onclick: async () => {
        if (question && !confirm(question)) return;
        try {
          await act();
        } catch (err) {
          where.prepend(h('p', { class: 'note error', role: 'alert' }, err.message));
        }
      },
    },
    text,
  );
}

/** Milliseconds since the epoch as a local date and time. */
export function when(ms) {
  return ms ? new Date(Number(ms)).toLocaleString() : '';
}
