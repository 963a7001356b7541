// The vector index seen as a Redis keyspace: the key is the namespace, a namespace that never had a
// vector reads as an empty key, and the service's errors become Redis' texts where Redis has one.
import { RestError } from '../../upstream/rest-json.js';
import type { IndexInfo, VectorClient } from '../../upstream/vector-client.js';
import { CommandError, utf8Arg } from '../args.js';
import type { Quant } from './quantization.js';
import type { Call } from '../port-command.js';
import { elementId } from './element-names.js';
import { hasVectors, type IndexRouter } from './routing.js';

/** What every vector-set handler works with. */
export interface VectorContext {
  /** The indexes as one client (each key's calls go to its index), missing namespaces read as empty. */
  client: VectorClient;
  /** Which index holds which key (several indexes: one per dimension). */
  router: IndexRouter;
  /** Sets' quantizations (and projections) lately seen, so a VADD need not read an element of the set each time. */
  setQuants: SetQuants;
}

/** What a set fixes at its first VADD and the service does not keep: quantization, projection input (0: none), M. */
export interface SetShape {
  quant: Quant;
  proj: number;
  /** The M it was created with (Redis refuses a VADD with another). */
  m: number;
}

/**
 * Recently learned quantization per namespace, forgotten when this port deletes from the namespace and
 * after a few seconds (another client may delete and re-create the set meanwhile).
 */
export class SetQuants {
  private readonly seen = new Map<string, { shape: SetShape; at: number }>();
  constructor(private readonly ttlMs = 5000) {}

  get(ns: string): SetShape | undefined {
    const e = this.seen.get(ns);
    if (e && Date.now() - e.at < this.ttlMs) return e.shape;
    this.seen.delete(ns);
    return undefined;
  }

  set(ns: string, shape: SetShape): void {
    this.seen.set(ns, { shape, at: Date.now() });
  }

  forget(ns: string): void {
    this.seen.delete(ns);
  }
}

/** The key (namespace) of a request. */
export const keyOf = (c: Call): string => utf8Arg(c.args[1], 'the key (namespace)');

/** The record id of an element name (any bytes, see element-names.ts). */
export const elementOf = (b: Buffer): string => elementId(b);

/** The /info of the key's index and the key's entry there (undefined when it does not exist). */
export async function namespaceInfo(
  ctx: VectorContext,
  ns: string,
): Promise<{ info: IndexInfo; entry: IndexInfo['namespaces'][string] | undefined }> {
  const { info, entry } = await ctx.router.locate(ns);
  return { info, entry };
}

/**
 * Whether a namespace is a key: Redis deletes a vector set when its last element goes, while the
 * service keeps an empty namespace, so only a namespace with vectors (or pending ones) exists.
 */
export const exists = hasVectors;

/** The service's dimension error in Redis' words; other errors unchanged. */
export function toVectorError(err: unknown): Error {
  if (err instanceof RestError) {
    const m = /Invalid vector dimension: (\d+), expected: (\d+)/.exec(err.message);
    if (m) return new CommandError(`ERR Vector dimension mismatch - got ${m[1]} but set has ${m[2]}`);
  }
  return err as Error;
}

/**
 * A key that does not exist reads as empty in Redis; the service answers 404 "Namespace … does not
 * exist" for a namespace that never had a vector. Reads and deletes on it get the empty answer.
 */
async function orEmpty<T>(call: Promise<T>, empty: T): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof RestError && err.status === 404 && /^Namespace .* does not exist/.test(err.message)) return empty;
    throw err;
  }
}

/** The client with missing namespaces read as empty; `onDelete` hears of every delete from a namespace. */
export function keyspaceView(client: VectorClient, onDelete: (ns: string) => void = () => {}): VectorClient {
  return Object.assign(Object.create(client) as VectorClient, {
    reset: (ns: string) => (onDelete(ns), client.reset(ns)),
    deleteNamespace: (ns: string) => (onDelete(ns), client.deleteNamespace(ns)),
    fetch: (ns: string, what: Parameters<VectorClient['fetch']>[1]) =>
      orEmpty(client.fetch(ns, what), 'ids' in what ? what.ids.map(() => null) : []),
    query: (ns: string, q: Parameters<VectorClient['query']>[1]) => orEmpty(client.query(ns, q), []),
    queryData: (ns: string, q: Parameters<VectorClient['queryData']>[1]) => orEmpty(client.queryData(ns, q), []),
    range: (ns: string, page: Parameters<VectorClient['range']>[1]) => orEmpty(client.range(ns, page), { nextCursor: '', vectors: [] }),
    delete: (ns: string, what: Parameters<VectorClient['delete']>[1]) => (onDelete(ns), orEmpty(client.delete(ns, what), { deleted: 0 })),
    update: (ns: string, change: Parameters<VectorClient['update']>[1]) => orEmpty(client.update(ns, change), { updated: 0 }),
    random: (ns: string) => orEmpty(client.random(ns), null),
  });
}

/** Every id of a namespace, by /range pages (bounded: VRANGE and VRANDMEMBER read whole namespaces). */
export async function allIds(ctx: VectorContext, ns: string, limit: number): Promise<{ ids: string[]; complete: boolean }> {
  const ids: string[] = [];
  let cursor = '0';
  do {
    const page = await ctx.client.range(ns, { cursor, limit: 1000 });
    for (const v of page.vectors) ids.push(v.id);
    cursor = page.nextCursor;
  } while (cursor !== '' && ids.length < limit);
  return { ids, complete: cursor === '' };
}
