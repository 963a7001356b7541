// Keeps the indexes in step with the data store, as the service does: every write to a key an index covers
// updates it, whatever wrote it (any command, a script, a transaction, expiry, eviction, FLUSHALL).
// redis-server's client-side-caching invalidations name each changed key; the key is then read again (type
// and value) and each index covering it takes the new document or drops the old one. Like the service,
// indexing runs behind the writes; `received` (SEARCH.WAITINDEXING, and every query here) waits until all
// writes acknowledged before it are heard of: a PING on the tracking connection is answered after every
// invalidation Redis queued before it.
import { encodeCommands } from '../../../resp/request-writer.js';
import { arrayElements } from '../../../resp/reply-scanner.js';
import { RedisConnection, errorText, type RedisEndpoint } from '../../redis/connection.js';
import { JSON_MAGIC_LUA, rewriteJsonCommand } from '../json/rewrite.js';
import { jsonSource, type Source } from './documents.js';

export type KeyValue =
  { kind: 'hash'; source: Source } | { kind: 'json'; source: Source } | { kind: 'string'; source?: Source } | { kind: 'other' };

/** The text of a bulk reply, undefined for nil or another type. */
export function bulkText(reply: Buffer): string | undefined {
  if (reply[0] !== 0x24 || reply[1] === 0x2d) return undefined;
  const headerEnd = reply.indexOf(13);
  return reply.toString('utf8', headerEnd + 2, reply.length - 2);
}

function simpleText(reply: Buffer): string {
  return reply.toString('latin1', 1, reply.length - 2);
}

/** Reads keys' current values: hashes, JSON documents (the JSON library's or RedisJSON's), strings. */
export async function readKeys(conn: RedisConnection, keys: string[]): Promise<Map<string, KeyValue>> {
  const out = new Map<string, KeyValue>();
  if (keys.length === 0) return out;
  const types = await conn.send(keys.map((k) => ['TYPE', k]));
  const reads: Array<{ key: string; type: string }> = [];
  keys.forEach((key, i) => {
    const type = simpleText(types[i]);
    if (type === 'hash' || type === 'string' || type === 'ReJSON-RL') reads.push({ key, type });
    else out.set(key, { kind: 'other' });
  });
  const values = await conn.send(
    reads.map(({ key, type }) => (type === 'hash' ? ['HGETALL', key] : type === 'string' ? ['GET', key] : ['JSON.GET', key])),
  );
  const jsonDocs: string[] = [];
  reads.forEach(({ key, type }, i) => {
    const reply = values[i];
    if (type === 'hash') {
      const items = (arrayElements(reply) ?? []).map((b) => bulkText(b) ?? '');
      const pairs: Array<[string, string]> = [];
      for (let j = 0; j + 1 < items.length; j += 2) pairs.push([items[j], items[j + 1]]);
      out.set(key, { kind: 'hash', source: { kind: 'hash', pairs } });
      return;
    }
    const text = bulkText(reply);
    if (text === undefined) out.set(key, { kind: 'other' });
    else if (type === 'ReJSON-RL') out.set(key, { kind: 'json', source: jsonSource(text) ?? { kind: 'json', text, value: {} } });
    else if (text.startsWith(JSON_MAGIC_LUA)) jsonDocs.push(key);
    else out.set(key, { kind: 'string', source: jsonSource(text) });
  });
  if (jsonDocs.length > 0) {
    const docs = await conn.send(jsonDocs.map((k) => rewriteJsonCommand(['JSON.GET', k])!.command));
    jsonDocs.forEach((key, i) => {
      const text = bulkText(docs[i]);
      const source = text === undefined ? undefined : jsonSource(text);
      out.set(key, source ? { kind: 'json', source } : { kind: 'other' });
    });
  }
  return out;
}

/**
 * Hears of every changed key through client-side-caching invalidations: a RESP3 connection with
 * `CLIENT TRACKING ON BCAST` (no prefix: every key) gets an `invalidate` push naming each key written,
 * expired or evicted, and `invalidate` with no keys after FLUSHALL / FLUSHDB. Nothing of it shows to users
 * (no subscription in PUBSUB, no change of notify-keyspace-events), and Redis queues the push before the
 * reply of the write that caused it.
 */
export class KeyspaceListener {
  private conn: RedisConnection | undefined;
  private readonly pongs: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly endpoint: RedisEndpoint,
    private readonly onKey: (key: string) => void,
    /** After FLUSHALL / FLUSHDB, and after a reconnection (invalidations may have been missed). */
    private readonly onResync: () => void,
  ) {}

  async start(): Promise<void> {
    const conn = await RedisConnection.open(this.endpoint);
    const [hello, tracking] = await conn.send([
      ['HELLO', '3'],
      ['CLIENT', 'TRACKING', 'ON', 'BCAST'],
    ]);
    const err = errorText(hello) ?? errorText(tracking);
    if (err) {
      conn.close();
      throw new Error(`the data store refused client tracking, which search indexing needs (${err}); Redis 6 or newer is required`);
    }
    conn.onPush = (reply) => this.receive(reply);
    conn.onClose = () => this.reconnect();
    this.conn = conn;
  }

  private receive(reply: Buffer): void {
    if (reply[0] === 0x2b /* + */) {
      this.pongs.shift()?.(); // +PONG of received()
      return;
    }
    if (reply[0] !== 0x3e /* > */) return;
    const items = arrayElements(Buffer.concat([Buffer.from('*'), reply.subarray(1)]));
    if (!items || items.length < 2 || bulkText(items[0]) !== 'invalidate') return;
    const keys = arrayElements(items[1]);
    if (!keys) {
      this.onResync(); // FLUSHALL / FLUSHDB: a null key list
      return;
    }
    for (const k of keys) {
      const key = bulkText(k);
      if (key !== undefined) this.onKey(key);
    }
  }

  private reconnect(): void {
    this.conn = undefined;
    for (const resolve of this.pongs.splice(0)) resolve();
    if (this.stopped) return;
    setTimeout(() => {
      if (this.stopped) return;
      this.start().then(this.onResync, () => this.reconnect());
    }, 500).unref();
  }

  /** Resolves once every invalidation of a write acknowledged before this call has been received. */
  received(): Promise<void> {
    const conn = this.conn;
    if (!conn) return Promise.resolve();
    return new Promise((resolve) => {
      this.pongs.push(resolve);
      conn.writeRaw(encodeCommands([['PING']]));
    });
  }

  stop(): void {
    this.stopped = true;
    this.conn?.close();
  }
}
