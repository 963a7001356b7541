// What the queue page's tabs share: the API's base path and the handling of a refused token.
import { ApiError, auth } from './api.js';
import { fill, h, note } from './dom.js';

export const Q = '/queue/v2';
export const enc = encodeURIComponent;

/**
 * Runs `load` into `el`; an unknown token (401) gets the reason and a field for the queue's own token.
 * The Read Only token reads (GET) but is refused changes and the signing keys with a 403, shown as is.
 */
export async function guarded(el, load) {
  try {
    await load();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401) return el.prepend(note('error', err.message));
    const token = h('input', { type: 'password', name: 'queue-token', placeholder: 'QSTASH_TOKEN' });
    fill(
      el,
      note(
        'error',
        "The queue API refused this token: it takes the queue token (QSTASH_TOKEN), or the platform's Read Only token to read.",
      ),
      h(
        'form',
        { class: 'toolbar', onsubmit: (e) => (e.preventDefault(), (auth.queueToken = token.value), location.reload()) },
        token,
        h('button', { type: 'submit' }, 'Use this queue token'),
      ),
    );
  }
}
