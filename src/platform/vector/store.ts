// Vector records kept in the platform's internal redis-server, so a restart loses nothing: one hash per
// namespace (`respgate:vector:<index>:ns:<namespace>`, field = id, value = encoded record), a set of
// namespaces, and the index's configuration (to refuse a restart with another dimension or kind).
import type { RedisPool } from '../redis/pool.js';
import { errorText } from '../redis/connection.js';
import type { Metadata } from './filter.js';
import type { SparseVector } from './scores.js';

export interface StoredRecord {
  id: string;
  dense?: Float32Array;
  sparse?: SparseVector;
  metadata?: Metadata;
  data?: string;
}

/** [u32 length of JSON][JSON {m, d, s}][float32 LE dense vector]: vectors stay binary, 4 bytes a value. */
export function encodeRecord(r: Omit<StoredRecord, 'id'>): Buffer {
  const json = Buffer.from(JSON.stringify({ m: r.metadata, d: r.data, s: r.sparse ? [r.sparse.indices, r.sparse.values] : undefined }));
  const dense = r.dense ? Buffer.from(r.dense.buffer, r.dense.byteOffset, r.dense.byteLength) : Buffer.alloc(0);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(json.length, 0);
  return Buffer.concat([head, json, dense]);
}

export function decodeRecord(id: string, buf: Buffer): StoredRecord {
  const jsonLength = buf.readUInt32LE(0);
  const meta = JSON.parse(buf.toString('utf8', 4, 4 + jsonLength)) as { m?: Metadata; d?: string; s?: [number[], number[]] };
  const denseBytes = buf.length - 4 - jsonLength;
  let dense: Float32Array | undefined;
  if (denseBytes > 0) {
    dense = new Float32Array(denseBytes / 4);
    Buffer.from(dense.buffer).set(buf.subarray(4 + jsonLength));
  }
  return { id, dense, sparse: meta.s ? { indices: meta.s[0], values: meta.s[1] } : undefined, metadata: meta.m, data: meta.d };
}

export type Resp = string | number | Buffer | null | Resp[];

/** Decodes one RESP2 reply (bulk strings stay Buffers). */
function decode(buf: Buffer, pos = 0): { value: Resp; end: number } {
  const lineEnd = buf.indexOf('\r\n', pos);
  const line = buf.toString('latin1', pos + 1, lineEnd);
  switch (buf[pos]) {
    case 0x2b: // +
      return { value: line, end: lineEnd + 2 };
    case 0x2d: // -
      throw new Error(`internal store: ${line}`);
    case 0x3a: // :
      return { value: Number(line), end: lineEnd + 2 };
    case 0x24: {
      // $
      const n = Number(line);
      if (n < 0) return { value: null, end: lineEnd + 2 };
      return { value: buf.subarray(lineEnd + 2, lineEnd + 2 + n), end: lineEnd + 4 + n };
    }
    default: {
      // *
      const n = Number(line);
      const items: Resp[] = [];
      let at = lineEnd + 2;
      for (let i = 0; i < n; i++) {
        const d = decode(buf, at);
        items.push(d.value);
        at = d.end;
      }
      return { value: n < 0 ? null : items, end: at };
    }
  }
}

/** Sends commands to the internal Redis on the shared connection; an error reply throws. */
export async function runInternal(pool: RedisPool, commands: (string | Buffer)[][]): Promise<Resp[]> {
  const conn = await pool.shared();
  const replies = await conn.send(commands);
  return replies.map((r) => {
    const err = errorText(r);
    if (err) throw new Error(`internal store: ${err}`);
    return decode(r).value;
  });
}

export class VectorStore {
  private readonly prefix: string;
  constructor(
    private readonly pool: RedisPool,
    indexName: string,
  ) {
    this.prefix = `respgate:vector:${indexName}:`;
  }

  private nsKey(namespace: string): string {
    return `${this.prefix}ns:${namespace}`;
  }

  private run(...commands: (string | Buffer)[][]): Promise<Resp[]> {
    return runInternal(this.pool, commands);
  }

  /** Stores the index configuration the first time; returns the one stored before (if any). */
  async claimConfig(config: string): Promise<string> {
    const [, stored] = await this.run(['SET', `${this.prefix}config`, config, 'NX'], ['GET', `${this.prefix}config`]);
    return (stored as Buffer).toString();
  }

  async put(namespace: string, records: StoredRecord[]): Promise<void> {
    const hset: (string | Buffer)[] = ['HSET', this.nsKey(namespace)];
    for (const r of records) hset.push(r.id, encodeRecord(r));
    await this.run(hset, ['SADD', `${this.prefix}namespaces`, namespace]);
  }

  async remove(namespace: string, ids: string[]): Promise<void> {
    if (ids.length > 0) await this.run(['HDEL', this.nsKey(namespace), ...ids]);
  }

  async createNamespace(namespace: string): Promise<void> {
    await this.run(['SADD', `${this.prefix}namespaces`, namespace]);
  }

  async resetNamespace(namespace: string): Promise<void> {
    await this.run(['DEL', this.nsKey(namespace)]);
  }

  async deleteNamespace(namespace: string): Promise<void> {
    await this.run(['DEL', this.nsKey(namespace)], ['SREM', `${this.prefix}namespaces`, namespace]);
  }

  /** Moves a namespace's records to another name, replacing what that name held. */
  async renameNamespace(from: string, to: string): Promise<void> {
    const [exists] = await this.run(['EXISTS', this.nsKey(from)]);
    await this.run(
      exists ? ['RENAME', this.nsKey(from), this.nsKey(to)] : ['DEL', this.nsKey(to)],
      ['SREM', `${this.prefix}namespaces`, from],
      ['SADD', `${this.prefix}namespaces`, to],
    );
  }

  async namespaces(): Promise<string[]> {
    const [members] = await this.run(['SMEMBERS', `${this.prefix}namespaces`]);
    return (members as Buffer[]).map((b) => b.toString());
  }

  /** Every record of a namespace, a thousand at a time. */
  async *scan(namespace: string): AsyncGenerator<StoredRecord[]> {
    let cursor = '0';
    do {
      const [reply] = await this.run(['HSCAN', this.nsKey(namespace), cursor, 'COUNT', '1000']);
      const [next, flat] = reply as [Buffer, Buffer[]];
      cursor = next.toString();
      const batch: StoredRecord[] = [];
      for (let i = 0; i < flat.length; i += 2) batch.push(decodeRecord(flat[i].toString(), flat[i + 1]));
      if (batch.length) yield batch;
    } while (cursor !== '0');
  }
}
