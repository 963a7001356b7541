// Who a REST token acts as. Every token maps to a Redis ACL user, and its commands run on
// connections authenticated as that user, so Redis itself enforces the permissions:
//   Standard token  → the data store's own user (`default` in the embedded store),
//   Read Only token → `default_ro` (read commands only, no KEYS/SCAN), as on the real service,
//   ACL RESTTOKEN   → the named ACL user, after Redis accepted its password.
import { createHash, createHmac } from 'node:crypto';
import { RedisConnection, errorText, type RedisEndpoint } from '../redis/connection.js';
import { RedisPool } from '../redis/pool.js';
import type { InternalStore } from '../internal-store.js';

export interface Principal {
  /** Redis ACL user name, for logs and errors. */
  user: string;
  pool: RedisPool;
}

export const READONLY_USER = 'default_ro';

/** ACL rules of the Read Only user: reads, minus the powerful ones the real service also refuses. */
export const READONLY_ACL = [
  'on',
  '~*',
  '&*',
  '+@read',
  '-@dangerous',
  '-keys',
  '-scan',
  '+ping',
  '+echo',
  '+time',
  '+eval_ro',
  '+evalsha_ro',
  '+fcall_ro',
  '+subscribe',
  '+psubscribe',
  '+unsubscribe',
  '+punsubscribe',
  '+ssubscribe',
  '+sunsubscribe',
  // Its connections to the platform's database n (/db/<n>, platform/databases.ts) select it; REST
  // clients cannot send SELECT (the platform refuses connection commands).
  '+select',
];

export class Principals {
  private readonly byToken = new Map<string, Principal>();
  private readonly byUser = new Map<string, Principal>();
  /** The Standard token's principal (the store's own user). */
  private standard: Principal | undefined;
  /** Tokens configured at start; never forgotten. */
  private readonly configured = new Set<string>();

  constructor(
    private readonly dataAdmin: RedisEndpoint,
    private readonly internal: InternalStore,
  ) {}

  /** Registers the Standard and Read Only tokens; creates the Read Only user in the data store. */
  async init(standardToken: string, readonlyToken: string): Promise<void> {
    this.standard = this.principalFor(this.dataAdmin.username ?? 'default', this.dataAdmin);
    this.register(standardToken, this.standard);
    this.configured.add(standardToken);
    // Derived from the token, so every platform process sharing a store agrees on the password.
    const roPassword = createHmac('sha256', 'respgate default_ro').update(readonlyToken).digest('base64url');
    const admin = await RedisConnection.open(this.dataAdmin);
    try {
      const [reply] = await admin.send([['ACL', 'SETUSER', READONLY_USER, 'reset', ...READONLY_ACL, `>${roPassword}`]]);
      const err = errorText(reply);
      if (err)
        throw new Error(
          `cannot create the Read Only user '${READONLY_USER}' in the data store (${err}); the Redis user of --redis-url needs ACL permissions`,
        );
    } finally {
      admin.close();
    }
    this.register(readonlyToken, this.principalFor(READONLY_USER, { ...this.dataAdmin, username: READONLY_USER, password: roPassword }));
    this.configured.add(readonlyToken);
  }

  /** Runs `fn` on the shared connection of the store's own user. */
  async admin<T>(fn: (conn: RedisConnection) => Promise<T>): Promise<T> {
    if (!this.standard) throw new Error('the platform has not started');
    return fn(await this.standard.pool.shared());
  }

  /**
   * After ACL SETUSER or ACL DELUSER of `user`: its pooled connections close and its ACL RESTTOKEN
   * tokens are checked against Redis again on their next use, so a changed password or a deleted user
   * stops them at once instead of when the connections happen to close.
   */
  revokeUser(user: string): void {
    for (const [token, principal] of this.byToken) {
      if (principal.user === user && !this.configured.has(token)) this.byToken.delete(token);
    }
    for (const [key, principal] of this.byUser) {
      if (principal.user !== user || principal === this.standard) continue;
      if ([...this.byToken.values()].includes(principal)) continue; // a configured token's user
      this.byUser.delete(key);
      void principal.pool.close();
    }
  }

  /** The principal of a token: a configured one, or one made earlier by ACL RESTTOKEN (kept in the internal store). */
  /** The principal of a token already seen, without a promise (the per-request path); else `resolve`. */
  known(token: string): Principal | undefined {
    return this.byToken.get(token);
  }

  async resolve(token: string): Promise<Principal | undefined> {
    const known = this.byToken.get(token);
    if (known) return known;
    const stored = await this.internal.getRestToken(tokenKey(token));
    if (!stored) return undefined;
    const principal = this.principalFor(stored.user, { ...this.dataAdmin, username: stored.user, password: stored.password });
    this.byToken.set(token, principal);
    return principal;
  }

  /** ACL RESTTOKEN user pass: checks the pair with Redis itself, then returns a token for it. */
  async restToken(user: string, password: string): Promise<{ token: string } | { error: string }> {
    let conn: RedisConnection;
    try {
      conn = await RedisConnection.open({ ...this.dataAdmin, username: user, password });
    } catch (err) {
      if (/WRONGPASS|NOPERM|disabled/i.test(String(err))) return { error: `ERR Wrong password or user "${user}" does not exist` };
      throw err;
    }
    conn.close();
    // The same user and password always give the same token (keyed by the store's own secret).
    const secret = await this.internal.secret();
    const token = 'A' + createHmac('sha256', secret).update(user).update('\0').update(password).digest('base64url');
    await this.internal.putRestToken(tokenKey(token), { user, password });
    return { token };
  }

  async close(): Promise<void> {
    await Promise.all([...this.byUser.values()].map((p) => p.pool.close()));
  }

  private register(token: string, principal: Principal): void {
    this.byToken.set(token, principal);
  }

  private principalFor(user: string, endpoint: RedisEndpoint): Principal {
    const key = `${user}\0${endpoint.password ?? ''}`;
    let principal = this.byUser.get(key);
    if (!principal) {
      principal = { user, pool: new RedisPool(endpoint) };
      this.byUser.set(key, principal);
    }
    return principal;
  }
}

/** Tokens are stored hashed: the internal store never holds a usable token. */
function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
