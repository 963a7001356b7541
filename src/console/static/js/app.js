// The console's shell: the login form (the token is checked by /console/api/session and kept in
// sessionStorage), the navigation between pages, and who is logged in. The same page serves the
// platform (every page) and `respgate proxy` (the Proxy page alone, its password as the token).
import { about, auth, session } from './api.js';
import { fill, h, note } from './dom.js';
import { dataPage } from './kv.js';
import { queuePage } from './queue.js';
import { vectorPage } from './vector.js';
import { accountPage } from './account.js';
import { proxyPage } from './proxy.js';

const PAGES = { data: dataPage, queue: queuePage, vector: vectorPage, account: accountPage, proxy: proxyPage };
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const logout = document.getElementById('logout');
let current;
/** {kind: 'platform' | 'proxy', pages?}: what serves this console, asked before logging in. */
let server = { kind: 'platform' };

const LOGIN = {
  platform: {
    text: 'Paste a token of the platform: the Standard token may change data, the Read Only token only sees it.',
    label: 'Token',
    refused: 'That token is not accepted by the platform.',
  },
  proxy: {
    text: "This is respgate proxy's console: give the proxy's password (its --requirepass; in pass-through mode, a REST token the upstream accepts).",
    label: 'Password',
    refused: 'That password is not accepted by the proxy.',
  },
  /** `respgate proxy --acl-users`: a user name too, as `AUTH <user> <password>`. */
  proxyUsers: {
    text: "This is respgate proxy's console: log in as an ACL user of the upstream with its password (as redis-cli --user … --pass …), or leave the user empty for the proxy's own password.",
    label: 'Password',
    refused: 'That user and password are not accepted by the proxy.',
  },
};

function loginWords() {
  if (server.kind === 'proxy' && server.users) return LOGIN.proxyUsers;
  return LOGIN[server.kind] ?? LOGIN.platform;
}

function loginForm(message) {
  const words = loginWords();
  nav.hidden = true;
  logout.hidden = true;
  fill(who);
  const token = h('input', { type: 'password', name: 'token', id: 'token', autocomplete: 'off', required: true });
  const user = server.users ? h('input', { type: 'text', name: 'user', id: 'user', autocomplete: 'off' }) : undefined;
  const form = h(
    'form',
    { id: 'login', class: 'card' },
    h('h1', null, 'Log in'),
    h('p', null, words.text),
    user && h('label', null, h('span', null, 'User'), user),
    h('label', null, h('span', null, words.label), token),
    h('button', { type: 'submit' }, 'Log in'),
    message && note('error', message),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    auth.user = user?.value.trim() ?? '';
    auth.token = token.value.trim();
    await start();
  });
  fill(main, form);
  (user ?? token).focus();
}

async function start() {
  if (!auth.token) return loginForm();
  let me;
  try {
    me = await session();
  } catch (err) {
    auth.token = '';
    auth.user = '';
    return loginForm(err.status === 401 ? loginWords().refused : String(err.message));
  }
  current = me;
  document.body.dataset.role = me.role;
  nav.hidden = false;
  // Only the pages this server offers (the proxy: its own page); the platform shows Proxy with a proxy.
  for (const a of nav.querySelectorAll('a'))
    a.hidden = me.pages ? !me.pages.includes(a.dataset.page) : a.dataset.page === 'proxy' && !me.proxy;
  logout.hidden = false;
  const role = me.role === 'readonly' ? 'read only' : me.role;
  fill(who, h('span', { class: `role role-${me.role}` }, role), ' ', me.user);
  route();
}

function route() {
  if (!current) return;
  const offered = current.pages ?? Object.keys(PAGES);
  const asked = location.hash.slice(1).split('/')[0];
  const name = offered.includes(asked) ? asked : offered[0];
  const page = PAGES[name];
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.page === name);
  const root = h('section', { class: 'page', id: `page-${name}` });
  fill(main, root);
  page(root, current);
}

logout.addEventListener('click', () => {
  auth.token = '';
  auth.user = '';
  auth.account = undefined;
  auth.queueToken = '';
  current = undefined;
  loginForm();
});
window.addEventListener('hashchange', route);
about().then((a) => {
  server = a;
  start();
});
