// Several indexes behind one side port, routed by dimension: Redis fixes a vector set's dimension at its
// first VADD, while a service index has one dimension for all its namespaces. A key (namespace) lives in
// the index of its first VADD's dimension; later commands find that index (a small key → index map,
// filled from the indexes' /info when a key is unknown). With one index nothing is looked up. In the dev
// stack a new key of a dimension no index has gets a new index of that dimension (`create`), as Redis
// creates a vector set of any dimension; in front of hosted indexes it gets an error naming the flag.
import type { IndexInfo, VectorClient, VectorRecord } from '../../upstream/vector-client.js';
import { CommandError } from '../args.js';

type NamespaceEntry = IndexInfo['namespaces'][string];

/** Where a key lives: the index, its /info and the key's entry there (undefined: no such key). */
export interface Located {
  index: number;
  info: IndexInfo;
  entry: NamespaceEntry | undefined;
}

/** A namespace with vectors (or pending ones) is a key; the service keeps empty namespaces. */
export function hasVectors(entry: NamespaceEntry | undefined): entry is NamespaceEntry {
  return entry !== undefined && entry.vectorCount + (entry.pendingVectorCount ?? 0) > 0;
}

/** The dense dimension of an index (0 for a sparse one). */
export const dimensionOf = (info: IndexInfo): number =>
  info.indexType === 'SPARSE' ? 0 : (info.denseIndex?.dimension ?? info.dimension ?? 0);

/** Makes an index of `dimension` dimensions and answers its client (the dev stack's local platform). */
export type CreateIndex = (dimension: number) => Promise<VectorClient>;

export class IndexRouter {
  private readonly where = new Map<string, { index: number; at: number }>();
  private readonly dims: (number | undefined)[];
  /** Creations under way, one per dimension: concurrent VADDs of a new dimension make one index. */
  private readonly adding = new Map<number, Promise<number>>();

  /**
   * @param clients the indexes, the first being the default (new keys of text or sparse vectors)
   * @param addHint how an index of another dimension is added (the flag), for the error text
   * @param ttlMs how long a key's index is trusted (another client may delete and re-create the key)
   * @param create makes an index of a new dimension (its client is appended to `clients`); none: the error
   */
  constructor(
    readonly clients: VectorClient[],
    private readonly addHint: string,
    private readonly ttlMs = 30_000,
    private readonly create?: CreateIndex,
  ) {
    this.dims = clients.map(() => undefined);
  }

  /** One index that can never get another: every call goes to it, nothing is looked up. */
  get single(): boolean {
    return this.clients.length === 1 && !this.create;
  }

  forget(ns: string): void {
    this.where.delete(ns);
  }

  /** Every index's /info (KEYS, EXISTS, DEL look at all of them). */
  async infos(): Promise<IndexInfo[]> {
    const all = await Promise.all(this.clients.map((c) => c.info()));
    all.forEach((info, i) => (this.dims[i] = dimensionOf(info)));
    return all;
  }

  /** The index that holds a key, or the default index with no entry when no index has it. */
  async locate(ns: string): Promise<Located> {
    if (this.single) {
      const info = await this.clients[0].info();
      return { index: 0, info, entry: info.namespaces?.[ns] };
    }
    const known = this.where.get(ns);
    if (known && Date.now() - known.at < this.ttlMs) {
      const info = await this.clients[known.index].info();
      if (hasVectors(info.namespaces?.[ns])) return { index: known.index, info, entry: info.namespaces[ns] };
    }
    this.where.delete(ns);
    const all = await this.infos();
    const index = all.findIndex((info) => hasVectors(info.namespaces?.[ns]));
    if (index < 0) return { index: 0, info: all[0], entry: all[0].namespaces?.[ns] };
    this.where.set(ns, { index, at: Date.now() });
    return { index, info: all[index], entry: all[index].namespaces[ns] };
  }

  /** The client for a command on a key (the default index when no index has it: reads find nothing). */
  async forKey(ns: string): Promise<VectorClient> {
    if (this.single) return this.clients[0];
    const known = this.where.get(ns);
    if (known && Date.now() - known.at < this.ttlMs) return this.clients[known.index];
    return this.clients[(await this.locate(ns)).index];
  }

  /**
   * The client a VADD of vectors of `dim` dimensions writes to: the key's index when it exists (a
   * wrong dimension is then the service's refusal, in Redis' words), else the first index of that
   * dimension (undefined dim: text or sparse only, the default index), else a new one when the router
   * may create indexes.
   */
  async forWrite(ns: string, dim: number | undefined): Promise<VectorClient> {
    if (this.single) return this.clients[0];
    // The key's known index has this dimension: the write is valid there, no /info needed (the hot path).
    const known = this.where.get(ns);
    if (known && dim !== undefined && this.dims[known.index] === dim && Date.now() - known.at < this.ttlMs)
      return this.clients[known.index];
    const at = await this.locate(ns);
    if (hasVectors(at.entry) || dim === undefined) return this.clients[at.index];
    if (this.dims.some((d) => d === undefined)) await this.infos();
    let index = this.dims.indexOf(dim);
    if (index < 0 && this.create) index = await this.added(dim, this.create);
    if (index < 0) throw await this.noIndexFor(dim);
    this.where.set(ns, { index, at: Date.now() });
    return this.clients[index];
  }

  /** The position of the index made for `dim` (made once, however many VADDs ask at the same time). */
  private added(dim: number, create: CreateIndex): Promise<number> {
    let made = this.adding.get(dim);
    if (!made) {
      made = create(dim).then(
        (client) => {
          this.dims.push(dim);
          return this.clients.push(client) - 1;
        },
        (err: unknown) => {
          this.adding.delete(dim);
          throw new CommandError(`ERR could not create a vector index of dimension ${dim}: ${(err as Error).message ?? String(err)}`);
        },
      );
      this.adding.set(dim, made);
    }
    return made;
  }

  /** The error for a new key whose dimension no index has: it names the flag that adds one. */
  async noIndexFor(dim: number): Promise<CommandError> {
    if (this.dims.some((d) => d === undefined)) await this.infos();
    const have = [...new Set(this.dims.filter((d) => d))].join(', ');
    return new CommandError(
      `ERR no vector index of dimension ${dim} for the new key: this side port's indexes have ${have} dimensions; add an index of ${dim} dimensions with ${this.addHint}`,
    );
  }
}

/** The records' dense dimension (undefined when they carry no dense vector). */
export const recordsDimension = (records: VectorRecord[]): number | undefined => records.find((r) => r.vector)?.vector?.length;

/**
 * One client over the router: each namespace call goes to the key's index, an upsert to the index of
 * its dimension; info() is the default index's (handlers use IndexRouter.locate for a key's).
 */
export function routedClient(router: IndexRouter): VectorClient {
  const first = router.clients[0];
  if (router.single) return first;
  type C = VectorClient;
  return Object.assign(Object.create(first) as C, {
    upsert: async (ns: string, records: VectorRecord[]) => (await router.forWrite(ns, recordsDimension(records))).upsert(ns, records),
    upsertData: async (ns: string, records: Parameters<C['upsertData']>[1]) =>
      (await router.forWrite(ns, undefined)).upsertData(ns, records),
    query: async (ns: string, q: Parameters<C['query']>[1]) => (await router.forKey(ns)).query(ns, q),
    queryData: async (ns: string, q: Parameters<C['queryData']>[1]) => (await router.forKey(ns)).queryData(ns, q),
    fetch: async (ns: string, what: Parameters<C['fetch']>[1]) => (await router.forKey(ns)).fetch(ns, what),
    range: async (ns: string, page: Parameters<C['range']>[1]) => (await router.forKey(ns)).range(ns, page),
    delete: async (ns: string, what: Parameters<C['delete']>[1]) => (await router.forKey(ns)).delete(ns, what),
    update: async (ns: string, change: Parameters<C['update']>[1]) => (await router.forKey(ns)).update(ns, change),
    random: async (ns: string) => (await router.forKey(ns)).random(ns),
    reset: async (ns: string) => {
      const c = await router.forKey(ns);
      router.forget(ns);
      return c.reset(ns);
    },
    deleteNamespace: async (ns: string) => {
      const c = await router.forKey(ns);
      router.forget(ns);
      return c.deleteNamespace(ns);
    },
    close: async () => void (await Promise.all(router.clients.map((c) => c.close()))),
  });
}
