// Connections of one Redis user (a principal): one shared pipelined connection for ordinary
// commands, and exclusive connections lent out for work that holds connection state
// (MULTI…EXEC, SUBSCRIBE, MONITOR, WAIT).
import { RedisConnection, type RedisEndpoint } from './connection.js';

export class RedisPool {
  private sharedConn: Promise<RedisConnection> | undefined;
  /** The shared connection once open (and until it closes): used without an await per request. */
  private sharedOpen: RedisConnection | undefined;
  private readonly idle: RedisConnection[] = [];
  private lent = 0;
  private readonly waiters: Array<(conn: Promise<RedisConnection>) => void> = [];
  private closed = false;

  constructor(
    readonly endpoint: RedisEndpoint,
    private readonly maxExclusive = 64,
  ) {}

  /** The shared connection, reopened after a failure. */
  shared(): Promise<RedisConnection> {
    if (this.closed) return Promise.reject(new Error('platform is shutting down'));
    if (!this.sharedConn) {
      const opening = RedisConnection.open(this.endpoint);
      this.sharedConn = opening;
      opening.then(
        (conn) => {
          if (this.sharedConn === opening && !conn.closed) this.sharedOpen = conn;
          conn.onClose = () => {
            if (this.sharedOpen === conn) this.sharedOpen = undefined;
            if (this.sharedConn === opening) this.sharedConn = undefined;
          };
        },
        () => {
          if (this.sharedConn === opening) this.sharedConn = undefined;
        },
      );
    }
    return this.sharedConn;
  }

  /** The shared connection when it is open now, without a promise; undefined otherwise (then `shared()`). */
  sharedNow(): RedisConnection | undefined {
    return this.closed ? undefined : this.sharedOpen;
  }

  /** Borrows a connection nobody else uses until `release`. Waits when all are lent. */
  acquire(): Promise<RedisConnection> {
    if (this.closed) return Promise.reject(new Error('platform is shutting down'));
    while (this.idle.length > 0) {
      const conn = this.idle.pop()!;
      if (!conn.closed) {
        this.lent++;
        return Promise.resolve(conn);
      }
    }
    if (this.lent < this.maxExclusive) {
      this.lent++;
      return RedisConnection.open(this.endpoint).catch((err) => {
        this.lent--;
        this.wakeOne();
        throw err;
      });
    }
    return new Promise((resolve) => this.waiters.push(resolve)).then((p) => p as Promise<RedisConnection>);
  }

  /** Returns a borrowed connection; `reusable` false closes it (its state is unknown). */
  release(conn: RedisConnection, reusable: boolean): void {
    this.lent--;
    if (reusable && !conn.closed && !this.closed) this.idle.push(conn);
    else conn.close();
    this.wakeOne();
  }

  private wakeOne(): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.acquire());
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const conn of this.idle.splice(0)) conn.close();
    const shared = this.sharedConn;
    this.sharedConn = undefined;
    this.sharedOpen = undefined;
    if (shared) (await shared.catch(() => undefined))?.close();
  }
}
