// The platform's own bookkeeping (REST tokens made by ACL RESTTOKEN, usage counters, a secret),
// kept in a separate Redis from the Area B data, so no user command can see or flush it.
import { randomBytes } from 'node:crypto';
import { errorText, type RedisEndpoint } from './redis/connection.js';
import { RedisPool } from './redis/pool.js';

const KEY = {
  secret: 'respgate:secret',
  restTokens: 'respgate:rest-tokens',
  usage: (day: string) => `respgate:usage:${day}`,
};

export interface StoredRestToken {
  user: string;
  password: string;
}

export class InternalStore {
  readonly pool: RedisPool;
  private cachedSecret: Promise<string> | undefined;

  constructor(readonly endpoint: RedisEndpoint) {
    this.pool = new RedisPool(endpoint);
  }

  private async run(...command: string[]): Promise<Buffer> {
    const conn = await this.pool.shared();
    const [reply] = await conn.send([command]);
    const err = errorText(reply);
    if (err) throw new Error(`internal store: ${err}`);
    return reply;
  }

  /** A random secret made once per store and kept there. */
  secret(): Promise<string> {
    this.cachedSecret ??= (async () => {
      await this.run('SET', KEY.secret, randomBytes(32).toString('base64url'), 'NX');
      return bulkText(await this.run('GET', KEY.secret))!;
    })().catch((err) => {
      this.cachedSecret = undefined;
      throw err;
    });
    return this.cachedSecret;
  }

  async getRestToken(key: string): Promise<StoredRestToken | undefined> {
    const text = bulkText(await this.run('HGET', KEY.restTokens, key));
    return text === undefined ? undefined : (JSON.parse(text) as StoredRestToken);
  }

  async putRestToken(key: string, value: StoredRestToken): Promise<void> {
    await this.run('HSET', KEY.restTokens, key, JSON.stringify(value));
  }

  /** Adds `count` commands to today's (UTC) usage and returns the new total. */
  async addUsage(count: number, now = new Date()): Promise<number> {
    const key = KEY.usage(now.toISOString().slice(0, 10));
    const conn = await this.pool.shared();
    const [total] = await conn.send([
      ['INCRBY', key, String(count)],
      ['EXPIRE', key, String(3 * 86400)],
    ]);
    return Number(total.toString('latin1', 1, total.length - 2));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function bulkText(reply: Buffer): string | undefined {
  if (reply[0] !== 0x24 || reply[1] === 0x2d) return undefined;
  const headerEnd = reply.indexOf(13);
  return reply.toString('utf8', headerEnd + 2, reply.length - 2);
}
