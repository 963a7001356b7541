// `respgate proxy`'s own console: the Proxy page alone, at /console/ on its --metrics-port server
// (docs/console.md). The login is what a client of the proxy gives AUTH: the proxy's password, or with
// --acl-users an ACL user and its password. The console asks the proxy with it over RESP on loopback,
// as a client would, so AUTH decides (--requirepass, a pass-through REST token, an ACL user) and the
// page can never see more than `redis-cli -a <password>` could. Acting (kill a client, reset the
// slowlog or the statistics) needs more: the proxy's own password, or the upstream's word that the
// user may run that command (acl-check.ts). A proxy that asks no password keeps its console shut.
import type http from 'node:http';
import { allowedActions } from './acl-check.js';
import { PROXY_ACTIONS, readAction, type ProxyActionName } from './proxy-actions.js';
import { ProxyOps } from './proxy-ops.js';
import { ReplyError } from './resp-link.js';
import { bearerToken, json, serveConsoleFile } from './static-files.js';

export interface ProxyConsoleOptions {
  /** Where the proxy listens (a wildcard host is reached on loopback). */
  host: string;
  port: number;
  /** Whether the proxy makes clients AUTH (--requirepass, pass-through, --acl-users): the console opens only then. */
  authRequired: boolean;
  /** --requirepass is set: logging in with it (user default) is the operator, who may act. */
  requirepass: boolean;
  /** --acl-users: the login takes a user name. */
  aclUsers: boolean;
  /** The upstream REST URL, and the proxy's upstream token ('' in pass-through mode): who may act is asked there. */
  upstream: { url: string; token: string };
}

/** Who logged in: the password, and the ACL user when one was given. */
interface Login {
  user?: string;
  password: string;
}

/** Logged-in credentials kept with their connection; past this many the oldest is closed. */
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
    if (subpath === '/api/about') json(res, 200, { kind: 'proxy', pages: ['proxy'], users: this.options.aclUsers });
    else if (subpath === '/api/session') done(this.session(req, res));
    else if (subpath === '/api/proxy') done(this.snapshot(req, res));
    else if (subpath === '/api/proxy/action') done(this.action(req, res));
    else done(serveConsoleFile(req, res, subpath));
    return true;
  }

  close(): void {
    for (const ops of this.sessions.values()) ops.close();
    this.sessions.clear();
  }

  private async session(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const login = await this.login(req, res);
    if (!login) return;
    const actions = await this.actions(login.who);
    const role = actions.length === PROXY_ACTIONS.length ? 'proxy' : actions.length === 0 ? 'readonly' : 'limited';
    json(res, 200, { role, user: login.who.user ?? 'default', vectorIndexes: [], proxy: true, pages: ['proxy'], actions });
  }

  private async snapshot(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.resume();
    const login = await this.login(req, res);
    if (!login) return;
    try {
      json(res, 200, await login.ops.snapshot());
    } catch (err) {
      json(res, 502, { error: `cannot read the proxy's state: ${(err as Error).message}` });
    }
  }

  private async action(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      req.resume();
      return json(res, 405, { error: 'POST an action: {"action": "client-kill", "id": "12"}' });
    }
    const login = await this.login(req, res);
    if (!login) {
      req.resume();
      return;
    }
    const action = await readAction(req);
    if ('error' in action) return json(res, 400, action);
    // Asked again at each action: a user's rights changed upstream apply at once.
    if (!(await this.actions(login.who)).includes(action.action))
      return json(res, 403, { error: `Forbidden: ${login.who.user ?? 'this login'} may look but not ${action.action}` });
    try {
      json(res, 200, { result: await login.ops.act(action) });
    } catch (err) {
      json(res, 502, { error: (err as Error).message });
    }
  }

  /** What a login may do: all with the proxy's own password; else what the upstream's ACL lets its user run. */
  private actions(who: Login): Promise<ProxyActionName[]> {
    const { requirepass, upstream } = this.options;
    if ((who.user === undefined || who.user === 'default') && requirepass) return Promise.resolve([...PROXY_ACTIONS]);
    if (who.user !== undefined && who.user !== 'default') return allowedActions(upstream, upstream.token, who.user);
    // Pass-through: the token itself asks (its user by ACL WHOAMI).
    return upstream.token === '' ? allowedActions(upstream, who.password) : Promise.resolve([]);
  }

  /** The connection of the request's login, authenticated by the proxy; else answers 401/403. */
  private async login(req: http.IncomingMessage, res: http.ServerResponse): Promise<{ ops: ProxyOps; who: Login } | undefined> {
    if (!this.options.authRequired) {
      json(res, 403, {
        error: 'this proxy asks its clients no password, so its console stays shut: start it with --requirepass (or in pass-through mode)',
      });
      return undefined;
    }
    const who = credentials(req);
    if (!who) {
      json(res, 401, { error: "Unauthorized: give the console the proxy's password (or an ACL user and its password)" });
      return undefined;
    }
    const key = `${who.user ?? ''}\0${who.password}`;
    let ops = this.sessions.get(key);
    if (!ops) {
      ops = new ProxyOps({ host: loopback(this.options.host), port: this.options.port, password: who.password, user: who.user });
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
      this.sessions.set(key, ops);
      for (const [old, oldOps] of this.sessions) {
        if (this.sessions.size <= MAX_SESSIONS) break;
        oldOps.close();
        this.sessions.delete(old);
      }
    }
    return { ops, who };
  }
}

/** `Bearer <password>`, or `Basic base64(<user>:<password>)` (UTF-8) for an ACL user. */
function credentials(req: http.IncomingMessage): Login | undefined {
  const header = req.headers.authorization ?? '';
  if (header.startsWith('Basic ')) {
    const text = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon <= 0 || colon === text.length - 1) return undefined;
    return { user: text.slice(0, colon), password: text.slice(colon + 1) };
  }
  const password = bearerToken(req);
  return password ? { password } : undefined;
}

function loopback(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}
