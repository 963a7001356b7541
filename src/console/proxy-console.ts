// `respgate proxy`'s own console: the Proxy page alone, at /console/ on its --metrics-port server
// (docs/console.md). The login is the proxy's password, and the console asks the proxy with it over
// RESP on loopback, as a client would: AUTH decides (--requirepass, or in pass-through mode a REST
// token the upstream accepts), so the page can never see more than `redis-cli -a <password>` could.
// A proxy that asks no password keeps its console shut: it has nothing to check a login against.
import type http from 'node:http';
import { ProxyOps } from './proxy-ops.js';
import { ReplyError } from './resp-link.js';
import { bearerToken, json, serveConsoleFile } from './static-files.js';

export interface ProxyConsoleOptions {
  /** Where the proxy listens (a wildcard host is reached on loopback). */
  host: string;
  port: number;
  /** Whether the proxy makes clients AUTH (--requirepass or pass-through): the console opens only then. */
  authRequired: boolean;
}

/** Logged-in passwords kept with their connection; past this many the oldest is closed. */
const MAX_SESSIONS = 8;

export class ProxyConsole {
  private readonly sessions = new Map<string, ProxyOps>();

  constructor(private readonly options: ProxyConsoleOptions) {}

  /** Answers /console and below; false for any other path (the caller answers it). */
  handle(req: http.IncomingMessage, res: http.ServerResponse, path: string): boolean {
    if (path !== '/console' && !path.startsWith('/console/')) return false;
    const subpath = path.slice('/console'.length);
    const done = (p: Promise<void>) =>
      void p.catch((err) => {
        if (!res.headersSent) json(res, 500, { error: String((err as Error)?.message ?? err) });
        else res.destroy();
      });
    if (subpath === '/api/about') json(res, 200, { kind: 'proxy', pages: ['proxy'] });
    else if (subpath === '/api/session') done(this.session(req, res));
    else if (subpath === '/api/proxy') done(this.snapshot(req, res));
    else done(serveConsoleFile(req, res, subpath));
    return true;
  }

  close(): void {
    for (const ops of this.sessions.values()) ops.close();
    this.sessions.clear();
  }

  private async session(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const ops = await this.login(req, res);
    if (ops) json(res, 200, { role: 'proxy', user: 'default', vectorIndexes: [], proxy: true, pages: ['proxy'] });
  }

  private async snapshot(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const ops = await this.login(req, res);
    if (!ops) return;
    try {
      json(res, 200, await ops.snapshot());
    } catch (err) {
      json(res, 502, { error: `cannot read the proxy's state: ${(err as Error).message}` });
    }
  }

  /** The connection of the request's password, authenticated by the proxy; else answers 401/403. */
  private async login(req: http.IncomingMessage, res: http.ServerResponse): Promise<ProxyOps | undefined> {
    if (!this.options.authRequired) {
      json(res, 403, {
        error: 'this proxy asks its clients no password, so its console stays shut: start it with --requirepass (or in pass-through mode)',
      });
      return undefined;
    }
    const password = bearerToken(req);
    if (!password) {
      json(res, 401, { error: "Unauthorized: give the console the proxy's password" });
      return undefined;
    }
    let ops = this.sessions.get(password);
    if (!ops) {
      ops = new ProxyOps({ host: loopback(this.options.host), port: this.options.port, password });
      try {
        await ops.check();
      } catch (err) {
        ops.close();
        const refused = err instanceof ReplyError;
        json(res, refused ? 401 : 502, {
          error: refused ? `Unauthorized: the proxy answered ${err.message}` : `cannot reach the proxy: ${(err as Error).message}`,
        });
        return undefined;
      }
      this.sessions.set(password, ops);
      for (const [old, oldOps] of this.sessions) {
        if (this.sessions.size <= MAX_SESSIONS) break;
        oldOps.close();
        this.sessions.delete(old);
      }
    }
    return ops;
  }
}

function loopback(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}
