// The web console at /console (docs/console.md): static files shipped in the package beside this module
// (no CDN, works offline) and one JSON call, /console/api/session, that tells the page what its token
// may do. Every other call of the page goes to the platform's own APIs with the same token, so the
// console can never do more than its token could with curl.
import type http from 'node:http';
import { ProxyOps } from '../../console/proxy-ops.js';
import { bearerToken, json, serveConsoleFile } from '../../console/static-files.js';
import type { RedisEndpoint } from '../redis/connection.js';

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
    return serveConsoleFile(req, res, subpath);
  }

  private async session(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const token = bearerToken(req);
    const session = token ? await this.deps.session(token) : undefined;
    if (!session) return json(res, 401, { error: 'Unauthorized: give the console a token of the platform (Standard or Read Only)' });
    json(res, 200, { ...session, vectorIndexes: this.deps.vectorIndexes, proxy: this.proxy !== undefined });
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
}
