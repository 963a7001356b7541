// The web console at /console (docs/console.md): static files shipped in the package beside this module
// (no CDN, works offline) and one JSON call, /console/api/session, that tells the page what its token
// may do. Every other call of the page goes to the platform's own APIs with the same token, so the
// console can never do more than its token could with curl.
import type http from 'node:http';
import { ProxyOps } from '../../console/proxy-ops.js';
import { PROXY_ACTIONS, readAction } from '../../console/proxy-actions.js';
import { bearerToken, json, serveConsoleFile } from '../../console/static-files.js';
import type { RedisEndpoint } from '../redis/connection.js';
import { listMessages, messageDetail, queueDepth, type QueueSource } from './queue-inspect.js';

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
  /** The queue area, for the queue page's list of pending messages (queue-inspect.ts). */
  queue?: QueueSource;
  /** Which queue token a bearer token is (QSTASH_TOKEN: 'full', the Read Only token: 'readonly'). */
  queueAccess?(token: string): 'full' | 'readonly' | undefined;
}

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
    if (subpath === '/api/about') return json(res, 200, { kind: 'platform' });
    if (subpath === '/api/session') return this.session(req, res);
    if (subpath === '/api/proxy') return this.proxyStats(req, res);
    if (subpath === '/api/proxy/action') return this.proxyAction(req, res);
    if (subpath.startsWith('/api/queue/')) return this.queue(req, res, subpath.slice('/api/queue/'.length));
    return serveConsoleFile(req, res, subpath);
  }

  private async session(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const token = bearerToken(req);
    const session = token ? await this.deps.session(token) : undefined;
    if (!session) return json(res, 401, { error: 'Unauthorized: give the console a token of the platform (Standard or Read Only)' });
    // The Proxy page's actions: the Standard token's alone.
    const actions = this.proxy && session.role === 'standard' ? [...PROXY_ACTIONS] : [];
    json(res, 200, { ...session, vectorIndexes: this.deps.vectorIndexes, proxy: this.proxy !== undefined, actions });
  }

  private async proxyStats(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const token = bearerToken(req);
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

  /** The Proxy page's actions (kill a client, reset the slowlog or the statistics): the Standard token only. */
  private async proxyAction(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') return json(res, 405, { error: 'POST an action: {"action": "client-kill", "id": "12"}' });
    const token = bearerToken(req);
    const session = token ? await this.deps.session(token) : undefined;
    if (!session) return json(res, 401, { error: 'Unauthorized: give the console a token of the platform' });
    if (session.role !== 'standard')
      return json(res, 403, { error: 'Forbidden: only the Standard token acts on the proxy; this token may look' });
    if (!this.proxy)
      return json(res, 404, { error: 'no proxy runs in this process: the Proxy page is part of the dev stack (respgate dev)' });
    const action = await readAction(req);
    if ('error' in action) return json(res, 400, action);
    try {
      json(res, 200, { result: await this.proxy.act(action) });
    } catch (err) {
      json(res, 502, { error: (err as Error).message });
    }
  }

  /** The queue page's reads that QStash's API lacks (queue-inspect.ts), behind the queue API's tokens. */
  private async queue(req: http.IncomingMessage, res: http.ServerResponse, rest: string): Promise<void> {
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'the console reads the queue with GET only' });
    const token = bearerToken(req);
    if (!token || !this.deps.queueAccess?.(token))
      return json(res, 401, { error: "Unauthorized: give the queue API's token (QSTASH_TOKEN) or the Read Only token" });
    const queue = this.deps.queue;
    if (!queue) return json(res, 404, { error: 'no queue runs in this platform' });
    if (rest === 'depth') return json(res, 200, await queueDepth(queue));
    if (rest === 'messages') return json(res, 200, await listMessages(queue));
    if (rest.startsWith('messages/')) {
      const id = decodeURIComponent(rest.slice('messages/'.length));
      const detail = await messageDetail(queue, id);
      return detail ? json(res, 200, detail) : json(res, 404, { error: `message ${id} not found: neither pending nor in the logs` });
    }
    json(res, 404, { error: `no such console call: /console/api/queue/${rest}` });
  }
}
