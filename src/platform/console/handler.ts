// The web console at /console (docs/console.md): static files shipped in the package beside this module
// (no CDN, works offline) and one JSON call, /console/api/session, that tells the page what its token
// may do. Every other call of the page goes to the platform's own APIs with the same token, so the
// console can never do more than its token could with curl.
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { RedisEndpoint } from '../redis/connection.js';
import { ProxyOps } from './proxy-ops.js';

/** What a token is to the console: the KV API's role for it, or undefined when no API knows it. */
export interface ConsoleSession {
  /** 'standard' may change data; 'readonly' sees only; 'acl' is an ACL RESTTOKEN user (Redis decides). */
  role: 'standard' | 'readonly' | 'acl';
  user: string;
}

export interface ConsoleDeps {
  /** Resolves a bearer token as the KV API does. */
  session(token: string): Promise<ConsoleSession | undefined>;
  /** Names of the vector indexes under /vector/<name>. */
  vectorIndexes: string[];
}

const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

// No inline script or style, nothing from another origin: even a value that slipped past the
// page's escaping could not run (the page builds its DOM with textContent only).
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

export class ConsoleHandler {
  private proxy: ProxyOps | undefined;

  constructor(private readonly deps: ConsoleDeps) {}

  /** The dev stack's proxy, for the console's Proxy page (any token of the platform may look). */
  attachProxy(endpoint: RedisEndpoint): void {
    this.proxy?.close();
    this.proxy = new ProxyOps(endpoint);
  }

  close(): void {
    this.proxy?.close();
  }

  /** `subpath` is what follows /console ('' or '/…'). */
  async handle(req: http.IncomingMessage, res: http.ServerResponse, subpath: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (subpath === '/api/session') return this.session(req, res);
    if (subpath === '/api/proxy') return this.proxyStats(req, res);
    if (method !== 'GET' && method !== 'HEAD') return text(res, 405, 'the console serves GET only', { Allow: 'GET, HEAD' });
    if (subpath === '') {
      // Relative asset URLs resolve under /console/ only with the trailing slash.
      res.writeHead(308, { Location: '/console/' });
      return void res.end();
    }
    const name = subpath === '/' ? 'index.html' : decodeURIComponentSafe(subpath.slice(1));
    const file = name === undefined ? undefined : path.resolve(STATIC_DIR, name);
    const type = file && TYPES[path.extname(file)];
    if (!file || !type || !file.startsWith(STATIC_DIR)) return text(res, 404, `no such console file: ${subpath}`);
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      return text(res, 404, `no such console file: ${subpath}`);
    }
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length, ...SECURITY_HEADERS });
    res.end(method === 'HEAD' ? undefined : body);
  }

  private async session(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    const session = token ? await this.deps.session(token) : undefined;
    if (!session) return json(res, 401, { error: 'Unauthorized: give the console a token of the platform (Standard or Read Only)' });
    json(res, 200, { ...session, vectorIndexes: this.deps.vectorIndexes, proxy: this.proxy !== undefined });
  }

  private async proxyStats(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    if (!token || !(await this.deps.session(token)))
      return json(res, 401, { error: 'Unauthorized: give the console a token of the platform' });
    if (!this.proxy)
      return json(res, 404, { error: 'no proxy runs in this process: the Proxy page is part of the dev stack (respgate dev)' });
    try {
      json(res, 200, await this.proxy.snapshot());
    } catch (err) {
      json(res, 502, { error: `cannot read the proxy's state: ${(err as Error).message}` });
    }
  }
}

function decodeURIComponentSafe(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function json(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...SECURITY_HEADERS });
  res.end(body);
}

function text(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers, ...SECURITY_HEADERS });
  res.end(message);
}
