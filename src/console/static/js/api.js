// The console's calls to the platform's APIs, with the token the user logged in with (kept in
// sessionStorage: gone when the tab closes). Nothing here can do more than the token allows.
import { fromBase64, pathSegment, toBase64, toUtf8 } from './bytes.js';

const TOKEN = 'respgate.console.token';
const ACCOUNT = 'respgate.console.account';
const QUEUE_TOKEN = 'respgate.console.queue-token';
const USER = 'respgate.console.user';

export const auth = {
  get token() {
    return sessionStorage.getItem(TOKEN) ?? '';
  },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN, value);
    else sessionStorage.removeItem(TOKEN);
  },
  /** `respgate proxy --acl-users`: the ACL user logging in with `token` as its password ('' for none). */
  get user() {
    return sessionStorage.getItem(USER) ?? '';
  },
  set user(value) {
    if (value) sessionStorage.setItem(USER, value);
    else sessionStorage.removeItem(USER);
  },
  /** The queue API's own token when it differs from the platform's (--queue-token). */
  get queueToken() {
    return sessionStorage.getItem(QUEUE_TOKEN) ?? '';
  },
  set queueToken(value) {
    if (value) sessionStorage.setItem(QUEUE_TOKEN, value);
    else sessionStorage.removeItem(QUEUE_TOKEN);
  },
  /** {email, key} for the account API, or undefined. */
  get account() {
    const raw = sessionStorage.getItem(ACCOUNT);
    return raw ? JSON.parse(raw) : undefined;
  },
  set account(value) {
    if (value) sessionStorage.setItem(ACCOUNT, JSON.stringify(value));
    else sessionStorage.removeItem(ACCOUNT);
  },
};

/** An error answer of an API, with its HTTP status. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** What serves this console, before any login: the platform answers 404 here (every page), the proxy {kind: 'proxy'}. */
export async function about() {
  const res = await fetch('api/about').catch(() => undefined);
  return res?.ok ? await res.json() : { kind: 'platform' };
}

/** The console's own calls' credentials: the token, or an ACL user and its password (HTTP Basic, UTF-8). */
export function authHeader() {
  if (!auth.user) return { Authorization: `Bearer ${auth.token}` };
  return { Authorization: `Basic ${toBase64(toUtf8(`${auth.user}:${auth.token}`))}` };
}

/** Who the token is: {role, user, vectorIndexes}; throws ApiError(401) for an unknown token. */
export async function session() {
  const res = await fetch('api/session', { headers: authHeader() });
  const body = await res.json();
  if (!res.ok) throw new ApiError(res.status, body.error);
  return body;
}

/**
 * Runs one Redis command on the KV API. Arguments are strings (sent as UTF-8) or Uint8Array (sent as
 * they are): the path form carries any byte. Replies come base64-encoded and are decoded here:
 * strings become Uint8Array, integers numbers, arrays arrays, nil null. An error reply throws.
 */
export async function kv(...args) {
  const path = args.map((a) => pathSegment(typeof a === 'string' ? toUtf8(a) : a)).join('/');
  const res = await fetch(`../${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${auth.token}`, 'Upstash-Encoding': 'base64' },
  });
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (body.error !== undefined) throw new ApiError(res.status, body.error);
  return decodeReply(body.result, true);
}

function decodeReply(value, top) {
  if (Array.isArray(value)) return value.map((v) => decodeReply(v, false));
  if (typeof value !== 'string') return value;
  // A top-level status OK is sent as it is; base64 of any value has a length divisible by 4.
  if (top && value === 'OK') return toUtf8('OK');
  try {
    return fromBase64(value);
  } catch {
    return toUtf8(value);
  }
}

/** A JSON call to the queue or vector API: {status, body}; a non-2xx answer throws ApiError. */
export async function call(method, url, body, headers = {}) {
  const token = (url.startsWith('/queue/') || url.startsWith('/console/api/queue/')) && auth.queueToken ? auth.queueToken : auth.token;
  const init = { method, headers: { Authorization: `Bearer ${token}`, ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    if (!init.headers['Content-Type']) init.headers['Content-Type'] = 'application/json';
  }
  return answer(await fetch(`..${url}`, init));
}

/** A call to the account API with HTTP Basic email:key. */
export async function accountCall(method, url, body) {
  const acc = auth.account ?? { email: '', key: '' };
  const headers = { Authorization: `Basic ${btoa(`${acc.email}:${acc.key}`)}` };
  const init = { method, headers };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  return answer(await fetch(`..${url}`, init));
}

async function answer(res) {
  const text = await res.text();
  let parsed = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  if (!res.ok) {
    const message = typeof parsed === 'object' && parsed && 'error' in parsed ? parsed.error : String(parsed ?? `HTTP ${res.status}`);
    throw new ApiError(res.status, message);
  }
  return parsed;
}
