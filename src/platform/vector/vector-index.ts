// One vector index: its namespaces and every operation of the REST API on them, with the real service's
// result shapes and error texts. Bodies arrive parsed; HTTP, routing and tokens are in http-api.ts.
import { randomUUID } from 'node:crypto';
import { FilterSyntaxError, parseFilter, type Metadata, type Predicate } from './filter.js';
import { Namespace, type SearchTuning, type VectorRecord } from './namespace.js';
import { f32, fuseDbsf, fuseRrf, type Metric, type Scored, type SparseVector } from './scores.js';
import type { DenseEmbedder, SparseEmbedder } from './embedders.js';
import { EmbedderError } from './embedders.js';
import type { VectorIndexConfig } from './config.js';
import type { StoredRecord, VectorStore } from './store.js';

export class VectorError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The most results one query may ask for (the service's topK limit). */
export const MAX_TOP_K = 1000;
/** A prefix fetch returns at most this many records (use range for more). */
export const MAX_PREFIX_FETCH = 1000;
/** The most entries a sparse vector given by the caller may have (the service refuses more). */
export const MAX_SPARSE_ENTRIES = 1000;
/** Candidates each side (dense, sparse) brings to a hybrid fusion, at least topK. */
const FUSION_CANDIDATES = 100;

type Json = Record<string, unknown>;

export interface OutRecord {
  id: string;
  score?: number;
  vector?: number[];
  sparseVector?: SparseVector;
  metadata?: Metadata;
  data?: string;
}

interface Include {
  vectors: boolean;
  metadata: boolean;
  data: boolean;
}

interface PreparedQuery {
  topK: number;
  ns: Namespace;
  page: (k: number, pool: number, exclude?: Set<number>) => Scored[];
  records: (scored: Scored[]) => OutRecord[];
}

interface ResumableQuery {
  namespace: string;
  query: PreparedQuery;
  /** Keys of the records already returned. */
  served: Set<number>;
  maxIdleMs: number;
  lastUsed: number;
}

const missing = (field: string) =>
  new VectorError(422, `Failed to deserialize the JSON body into the target type: missing field \`${field}\``);
const invalid = (field: string, expected: string) =>
  new VectorError(422, `Failed to deserialize the JSON body into the target type: ${field}: invalid type, expected ${expected}`);
const NO_EMBEDDER = 'Embedding data for this index is not allowed. The index must be created with an embedding model to use it.';

export class VectorIndex {
  readonly namespaces = new Map<string, Namespace>();
  private readonly resumable = new Map<string, ResumableQuery>();
  readonly dimension: number;
  readonly metric: Metric;
  readonly hasDense: boolean;
  readonly hasSparse: boolean;

  constructor(
    readonly config: VectorIndexConfig,
    private readonly store: VectorStore,
    private readonly denseEmbedder: DenseEmbedder | undefined,
    private readonly sparseEmbedder: SparseEmbedder | undefined,
    private readonly tuning: SearchTuning,
  ) {
    this.hasDense = config.type !== 'SPARSE';
    this.hasSparse = config.type !== 'DENSE';
    this.dimension = config.dimension ?? 0;
    this.metric = config.similarityFunction ?? 'COSINE';
    this.namespaces.set('', this.newNamespace(''));
  }

  get name(): string {
    return this.config.name;
  }

  private newNamespace(name: string): Namespace {
    return new Namespace(name, this.dimension, this.metric, this.tuning);
  }

  /** Loads the stored records (a restart on a kept internal Redis loses nothing). */
  async load(): Promise<void> {
    const stored = await this.store.claimConfig(
      JSON.stringify({ type: this.config.type, dimension: this.dimension, similarityFunction: this.metric }),
    );
    const was = JSON.parse(stored) as { type: string; dimension: number; similarityFunction: string };
    if (was.type !== this.config.type || was.dimension !== this.dimension || was.similarityFunction !== this.metric) {
      throw new Error(
        `vector index '${this.name}' was stored as ${was.type} (dimension ${was.dimension}, ${was.similarityFunction}) in the internal Redis, ` +
          `now configured as ${this.config.type} (dimension ${this.dimension}, ${this.metric}): restore its configuration, or give it another name`,
      );
    }
    for (const name of await this.store.namespaces()) {
      const ns = this.namespace(name, true);
      for await (const batch of this.store.scan(name)) {
        for (const r of batch) ns.put(r.id, r.dense, r.sparse, r.metadata, r.data);
      }
    }
  }

  close(): void {
    for (const ns of this.namespaces.values()) ns.close();
  }

  private namespace(name: string, create = false): Namespace {
    let ns = this.namespaces.get(name);
    if (!ns) {
      if (!create) throw new VectorError(404, `Namespace ${name} for the index ${this.name} does not exist`);
      ns = this.newNamespace(name);
      this.namespaces.set(name, ns);
    }
    return ns;
  }

  // ---------------------------------------------------------------- writes

  async upsert(nsName: string, body: unknown): Promise<string> {
    const items = asItems(body);
    const records = items.map((item) => {
      const o = asObject(item);
      const rec: StoredRecord = { id: parseId(o.id), metadata: parseMetadata(o.metadata), data: parseData(o.data) };
      if (this.hasDense) {
        if (o.vector === undefined) throw missing('vector');
        rec.dense = this.parseDense(o.vector);
      } else if (o.vector !== undefined)
        throw new VectorError(422, 'This index does not support dense vectors: it is a SPARSE index; send `sparseVector`');
      if (this.hasSparse) {
        if (o.sparseVector === undefined) throw missing('sparseVector');
        rec.sparse = parseSparse(o.sparseVector);
      } else if (o.sparseVector !== undefined)
        throw new VectorError(422, 'This index does not support sparse vectors: it is a DENSE index; send `vector`');
      return rec;
    });
    await this.write(nsName, records);
    return 'Success';
  }

  async upsertData(nsName: string, body: unknown): Promise<string> {
    if (!this.canEmbed()) throw new VectorError(422, NO_EMBEDDER);
    const items = asItems(body).map((item) => {
      const o = asObject(item);
      if (o.data === undefined) throw missing('data');
      return { id: parseId(o.id), data: parseData(o.data)!, metadata: parseMetadata(o.metadata) };
    });
    const texts = items.map((i) => i.data);
    const dense = this.denseEmbedder ? await this.embedDense(texts) : undefined;
    const sparse = this.sparseEmbedder?.embed(texts, 'document');
    await this.write(
      nsName,
      items.map((item, i) => ({ ...item, dense: dense?.[i], sparse: sparse?.[i] })),
    );
    return 'Success';
  }

  private async write(nsName: string, records: StoredRecord[]): Promise<void> {
    if (records.length === 0) return;
    // Within one batch the last record of an id wins, as in the service.
    await this.store.put(nsName, records);
    const ns = this.namespace(nsName, true);
    for (const r of records) ns.put(r.id, r.dense, r.sparse, r.metadata, r.data);
  }

  async update(nsName: string, body: unknown): Promise<{ updated: number }> {
    const o = asObject(body);
    const id = parseId(o.id);
    const ns = this.namespace(nsName);
    const mode = String(o.metadataUpdateMode ?? 'OVERWRITE').toUpperCase();
    if (mode !== 'OVERWRITE' && mode !== 'PATCH')
      throw new VectorError(
        422,
        'Failed to deserialize the JSON body into the target type: metadataUpdateMode: unknown variant, expected `OVERWRITE` or `PATCH`',
      );
    if (o.vector === undefined && o.sparseVector === undefined && o.data === undefined && o.metadata === undefined) {
      throw new VectorError(400, 'Nothing to update: give at least one of vector, sparseVector, data or metadata');
    }
    if (this.hasDense && this.hasSparse && (o.vector === undefined) !== (o.sparseVector === undefined))
      throw new VectorError(422, 'For hybrid indexes either none or both of vector and sparseVector fields must be present');
    let dense = o.vector === undefined ? undefined : this.hasDense ? this.parseDense(o.vector) : notSupported('dense vectors', 'SPARSE');
    let sparse =
      o.sparseVector === undefined ? undefined : this.hasSparse ? parseSparse(o.sparseVector) : notSupported('sparse vectors', 'DENSE');
    const data = parseData(o.data);
    const rec = ns.records.get(id);
    if (!rec) return { updated: 0 };
    // New data on an index with an embedding model re-embeds it, unless vectors were given too.
    if (data !== undefined && this.canEmbed()) {
      if (!dense && this.denseEmbedder) dense = (await this.embedDense([data]))[0];
      if (!sparse && this.sparseEmbedder) sparse = this.sparseEmbedder.embed([data], 'document')[0];
    }
    let metadata = rec.metadata;
    if (o.metadata !== undefined) {
      const m = o.metadata === null ? undefined : parseMetadata(o.metadata);
      metadata = mode === 'PATCH' && m ? mergePatch(rec.metadata ?? {}, m) : m;
    }
    const stored: StoredRecord = {
      id,
      metadata,
      data: data ?? rec.data,
      dense: dense ?? ns.dense(rec),
      sparse: sparse ?? rec.sparse,
    };
    await this.store.put(nsName, [stored]);
    const current = ns.records.get(id);
    if (!current) return { updated: 0 }; // deleted meanwhile
    ns.replaceVectors(current, dense, sparse);
    current.metadata = metadata;
    current.data = stored.data;
    return { updated: 1 };
  }

  async delete(nsName: string, body: unknown): Promise<{ deleted: number }> {
    const ns = this.namespace(nsName);
    let ids: string[];
    if (Array.isArray(body) || typeof body === 'string' || typeof body === 'number') {
      ids = (Array.isArray(body) ? body : [body]).map(parseId);
    } else {
      const o = asObject(body);
      const given = ['ids', 'prefix', 'filter'].filter((k) => o[k] !== undefined);
      if (given.length !== 1) throw new VectorError(400, 'Only and only one of the ids, prefix, or filter must be provided.');
      if (o.ids !== undefined) {
        if (!Array.isArray(o.ids)) throw invalid('ids', 'a sequence of ids');
        ids = o.ids.map(parseId);
      } else if (o.prefix !== undefined) {
        if (typeof o.prefix !== 'string') throw invalid('prefix', 'a string');
        ids = idsWithPrefix(ns, o.prefix);
      } else {
        const p = compileFilter(o.filter);
        ids = [...ns.records.values()].filter((r) => p(r.metadata)).map((r) => r.id);
      }
    }
    const present = [...new Set(ids)].filter((id) => ns.records.has(id));
    await this.store.remove(nsName, present);
    let deleted = 0;
    for (const id of present) if (ns.remove(id)) deleted++;
    return { deleted };
  }

  async reset(nsName: string | undefined): Promise<string> {
    const targets = nsName === undefined ? [...this.namespaces.keys()] : [this.namespace(nsName).name];
    for (const name of targets) {
      await this.store.resetNamespace(name);
      this.namespaces.get(name)?.clear();
    }
    return 'Success';
  }

  async deleteNamespace(nsName: string): Promise<string> {
    if (nsName === '') throw new VectorError(400, 'The default namespace cannot be deleted; use reset to remove its vectors');
    const ns = this.namespace(nsName);
    await this.store.deleteNamespace(nsName);
    ns.close();
    this.namespaces.delete(nsName);
    return 'Success';
  }

  /** rename-namespace: {namespace, newNamespace, deleteExisting?}; the records move in the store too. */
  async renameNamespace(body: unknown): Promise<{ renamed: boolean }> {
    const o = asObject(body);
    if (o.namespace === undefined) throw missing('namespace');
    if (o.newNamespace === undefined) throw missing('newNamespace');
    if (typeof o.namespace !== 'string') throw invalid('namespace', 'a string');
    if (typeof o.newNamespace !== 'string') throw invalid('newNamespace', 'a string');
    if (o.deleteExisting !== undefined && typeof o.deleteExisting !== 'boolean') throw invalid('deleteExisting', 'a boolean');
    const from = o.namespace;
    const to = o.newNamespace;
    if (from === '') throw new VectorError(400, 'The default namespace cannot be renamed');
    if (to === '') throw new VectorError(400, 'A namespace cannot be renamed to the default namespace');
    const ns = this.namespace(from);
    if (from === to) return { renamed: true };
    const existing = this.namespaces.get(to);
    if (existing && o.deleteExisting !== true)
      throw new VectorError(400, `Namespace ${to} already exists; pass deleteExisting to replace it`);
    await this.store.renameNamespace(from, to);
    existing?.close();
    this.namespaces.delete(from);
    ns.name = to;
    this.namespaces.set(to, ns);
    return { renamed: true };
  }

  // ---------------------------------------------------------------- reads

  async query(nsName: string, body: unknown, byData: boolean): Promise<OutRecord[] | OutRecord[][]> {
    if (byData && !this.canEmbed()) throw new VectorError(422, NO_EMBEDDER);
    const items = asItems(body);
    const runs = await Promise.all(items.map((item) => this.prepareQuery(nsName, asObject(item), byData)));
    const results = runs.map((q) => q.records(q.page(q.topK, Math.max(q.topK, FUSION_CANDIDATES))));
    return Array.isArray(body) && body.length > 1 ? results : (results[0] ?? []);
  }

  /** Validates one query object (and embeds its data) into a search that can be run page by page. */
  private async prepareQuery(nsName: string, o: Json, byData: boolean): Promise<PreparedQuery> {
    const topK = o.topK === undefined ? 10 : o.topK;
    if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 0) throw invalid('topK', 'a non-negative integer');
    if (topK > MAX_TOP_K) throw new VectorError(400, `topK must be at most ${MAX_TOP_K}, got ${topK}`);
    const predicate = o.filter === undefined || o.filter === '' ? undefined : compileFilter(o.filter);
    const include: Include = { vectors: o.includeVectors === true, metadata: o.includeMetadata === true, data: o.includeData === true };
    const weighting = o.weightingStrategy === undefined ? undefined : String(o.weightingStrategy).toUpperCase();
    if (weighting !== undefined && weighting !== 'IDF')
      throw new VectorError(
        422,
        'Failed to deserialize the JSON body into the target type: weightingStrategy: unknown variant, expected `IDF`',
      );
    const fusion = String(o.fusionAlgorithm ?? 'RRF').toUpperCase();
    if (fusion !== 'RRF' && fusion !== 'DBSF')
      throw new VectorError(
        422,
        'Failed to deserialize the JSON body into the target type: fusionAlgorithm: unknown variant, expected `RRF` or `DBSF`',
      );

    let dense: Float32Array | undefined;
    let sparse: SparseVector | undefined;
    if (byData) {
      if (o.data === undefined) throw missing('data');
      const text = parseData(o.data)!;
      const mode = String(o.queryMode ?? 'HYBRID').toUpperCase();
      if (!['HYBRID', 'DENSE', 'SPARSE'].includes(mode))
        throw new VectorError(
          422,
          'Failed to deserialize the JSON body into the target type: queryMode: unknown variant, expected `HYBRID`, `DENSE` or `SPARSE`',
        );
      if (this.denseEmbedder && mode !== 'SPARSE') dense = (await this.embedDense([text]))[0];
      if (this.sparseEmbedder && mode !== 'DENSE') sparse = this.sparseEmbedder.embed([text], 'query')[0];
      if (!dense && !sparse)
        throw new VectorError(
          400,
          `queryMode ${mode} needs a ${mode === 'SPARSE' ? 'sparse' : 'dense'} embedding model, and this index has none; use queryMode ${mode === 'SPARSE' ? 'DENSE' : 'SPARSE'} or HYBRID`,
        );
    } else {
      if (o.vector !== undefined) dense = this.hasDense ? this.parseDense(o.vector) : notSupported('dense vectors', 'SPARSE');
      if (o.sparseVector !== undefined) sparse = this.hasSparse ? parseSparse(o.sparseVector) : notSupported('sparse vectors', 'DENSE');
      if (!dense && !sparse) throw missing(this.hasDense ? 'vector' : 'sparseVector');
    }
    const ns = this.namespace(nsName);
    const useIdf = weighting === 'IDF';
    /** The best k records not in `exclude`; a hybrid query fuses `pool` candidates of each side. */
    const page = (k: number, pool: number, exclude?: Set<number>): Scored[] => {
      const skip = exclude?.size ?? 0;
      const keep = (list: Scored[], n: number) => (exclude ? list.filter((s) => !exclude.has(s.key)) : list).slice(0, n);
      if (dense && sparse) {
        const lists = [
          keep(ns.searchDense(dense, pool + skip, predicate), pool),
          keep(ns.searchSparse(sparse, pool + skip, predicate, useIdf), pool),
        ];
        const fused = fusion === 'DBSF' ? fuseDbsf(lists) : fuseRrf(lists);
        return [...fused]
          .map(([key, score]) => ({ key, score }))
          .sort((a, b) => b.score - a.score)
          .slice(0, k);
      }
      return keep(dense ? ns.searchDense(dense, k + skip, predicate) : ns.searchSparse(sparse!, k + skip, predicate, useIdf), k);
    };
    const records = (scored: Scored[]) => scored.map((s) => this.out(ns, ns.record(s.key)!, include, s.score));
    return { topK, ns, page, records };
  }

  async fetch(nsName: string, body: unknown): Promise<(OutRecord | null)[]> {
    const ns = this.namespace(nsName);
    let o: Json;
    if (Array.isArray(body)) o = { ids: body };
    else o = asObject(body);
    if (o.ids !== undefined && o.prefix !== undefined) throw new VectorError(400, 'Only one of ids or prefix must be provided.');
    const include: Include = { vectors: o.includeVectors === true, metadata: o.includeMetadata === true, data: o.includeData === true };
    if (o.prefix !== undefined) {
      if (typeof o.prefix !== 'string') throw invalid('prefix', 'a string');
      return idsWithPrefix(ns, o.prefix, MAX_PREFIX_FETCH).map((id) => this.out(ns, ns.records.get(id)!, include));
    }
    if (o.ids === undefined) throw new VectorError(400, 'Only one of ids or prefix must be provided.');
    if (!Array.isArray(o.ids)) throw invalid('ids', 'a sequence of ids');
    return o.ids.map((raw) => {
      const rec = ns.records.get(parseId(raw));
      return rec ? this.out(ns, rec, include) : null;
    });
  }

  async range(nsName: string, body: unknown): Promise<{ nextCursor: string; vectors: OutRecord[] }> {
    const o = asObject(body);
    if (o.cursor === undefined) throw missing('cursor');
    if (o.limit === undefined) throw missing('limit');
    const cursor = Number(o.cursor === '' ? 0 : o.cursor);
    if (!Number.isSafeInteger(cursor) || cursor < 0)
      throw new VectorError(
        400,
        `Invalid cursor '${String(o.cursor)}': use "0" for the first page, then the nextCursor of the previous page`,
      );
    if (typeof o.limit !== 'number' || !Number.isInteger(o.limit) || o.limit < 0) throw invalid('limit', 'a non-negative integer');
    if (o.prefix !== undefined && typeof o.prefix !== 'string') throw invalid('prefix', 'a string');
    const ns = this.namespace(nsName);
    const include: Include = { vectors: o.includeVectors === true, metadata: o.includeMetadata === true, data: o.includeData === true };
    const ids = o.prefix ? idsWithPrefix(ns, o.prefix) : ns.ids();
    const end = cursor + o.limit;
    return {
      nextCursor: end < ids.length ? String(end) : '',
      vectors: ids.slice(cursor, end).map((id) => this.out(ns, ns.records.get(id)!, include)),
    };
  }

  random(nsName: string): OutRecord | null {
    const ns = this.namespace(nsName);
    if (ns.size === 0) return null;
    let skip = Math.floor(Math.random() * ns.size);
    for (const rec of ns.records.values()) if (skip-- === 0) return this.out(ns, rec, { vectors: true, metadata: false, data: false });
    return null;
  }

  info(): Json {
    let vectorCount = 0;
    let pending = 0;
    let bytes = 0;
    const namespaces: Record<string, { vectorCount: number; pendingVectorCount: number }> = {};
    for (const [name, ns] of this.namespaces) {
      namespaces[name] = { vectorCount: ns.size, pendingVectorCount: ns.pendingCount };
      vectorCount += ns.size;
      pending += ns.pendingCount;
      for (const r of ns.records.values()) bytes += (r.hasDense ? 4 * this.dimension : 0) + (r.sparse ? 8 * r.sparse.indices.length : 0);
    }
    return {
      vectorCount,
      pendingVectorCount: pending,
      indexSize: bytes,
      dimension: this.dimension,
      similarityFunction: this.hasDense ? this.metric : 'DOT_PRODUCT',
      indexType: this.config.type,
      ...(this.hasDense
        ? {
            denseIndex: {
              dimension: this.dimension,
              similarityFunction: this.metric,
              ...(this.denseEmbedder ? { embeddingModel: this.denseEmbedder.model } : {}),
            },
          }
        : {}),
      ...(this.hasSparse ? { sparseIndex: this.sparseEmbedder ? { embeddingModel: this.sparseEmbedder.model } : {} } : {}),
      namespaces,
    };
  }

  listNamespaces(): string[] {
    return [...this.namespaces.keys()].sort();
  }

  // ---------------------------------------------------------------- resumable queries

  async startResumable(nsName: string, body: unknown, byData: boolean): Promise<{ uuid: string; scores: OutRecord[] }> {
    if (byData && !this.canEmbed()) throw new VectorError(422, NO_EMBEDDER);
    const o = asObject(body);
    const maxIdle = o.maxIdle === undefined ? 3600 : o.maxIdle;
    if (typeof maxIdle !== 'number' || !(maxIdle > 0)) throw invalid('maxIdle', 'a positive number of seconds');
    const query = await this.prepareQuery(nsName, o, byData);
    this.sweepResumable();
    const uuid = randomUUID();
    // Each page of a resumable query is its own search: topK (then additionalK) candidates of each side,
    // fused, leaving out what was returned (vector-js's expected hybrid DBSF pages follow this).
    const first = query.page(query.topK, query.topK);
    this.resumable.set(uuid, {
      namespace: nsName,
      query,
      served: new Set(first.map((s) => s.key)),
      maxIdleMs: maxIdle * 1000,
      lastUsed: Date.now(),
    });
    return { uuid, scores: query.records(first) };
  }

  nextResumable(body: unknown): OutRecord[] {
    const o = asObject(body);
    const q = this.findResumable(o.uuid);
    const additionalK = o.additionalK;
    if (typeof additionalK !== 'number' || !Number.isInteger(additionalK) || additionalK < 0)
      throw additionalK === undefined ? missing('additionalK') : invalid('additionalK', 'a non-negative integer');
    if (q.served.size + additionalK > MAX_TOP_K * 10)
      throw new VectorError(400, `A resumable query returns at most ${MAX_TOP_K * 10} results`);
    if (this.namespaces.get(q.namespace) !== q.query.ns)
      throw new VectorError(404, `Namespace ${q.namespace} for the index ${this.name} does not exist`);
    const next = q.query.page(additionalK, additionalK, q.served);
    for (const s of next) q.served.add(s.key);
    q.lastUsed = Date.now();
    return q.query.records(next);
  }

  endResumable(body: unknown): string {
    const o = asObject(body);
    this.findResumable(o.uuid);
    this.resumable.delete(String(o.uuid));
    return 'Success';
  }

  private findResumable(uuid: unknown): ResumableQuery {
    if (uuid === undefined) throw missing('uuid');
    this.sweepResumable();
    const q = this.resumable.get(String(uuid));
    if (!q)
      throw new VectorError(
        404,
        `Resumable query ${String(uuid)} does not exist: it was stopped or idle longer than its maxIdle; start another resumable query`,
      );
    return q;
  }

  private sweepResumable(): void {
    const now = Date.now();
    for (const [uuid, q] of this.resumable) if (now - q.lastUsed > q.maxIdleMs) this.resumable.delete(uuid);
  }

  // ---------------------------------------------------------------- helpers

  private canEmbed(): boolean {
    return Boolean(this.denseEmbedder || this.sparseEmbedder);
  }

  private async embedDense(texts: string[]): Promise<Float32Array[]> {
    try {
      return await this.denseEmbedder!.embed(texts);
    } catch (err) {
      if (err instanceof EmbedderError) throw new VectorError(502, err.message);
      throw err;
    }
  }

  private parseDense(v: unknown): Float32Array {
    if (!Array.isArray(v)) throw invalid('vector', 'a sequence of numbers');
    if (v.length !== this.dimension) throw new VectorError(422, `Invalid vector dimension: ${v.length}, expected: ${this.dimension}`);
    const out = new Float32Array(v.length); // checked and converted in one pass: upserts carry many
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) throw invalid('vector', 'a sequence of numbers');
      out[i] = x;
    }
    return out;
  }

  private out(ns: Namespace, rec: VectorRecord, include: Include, score?: number): OutRecord {
    const o: OutRecord = { id: rec.id };
    if (score !== undefined) o.score = f32(score);
    if (include.vectors) {
      const d = ns.dense(rec);
      if (d) o.vector = Array.from(d, f32);
      if (rec.sparse) o.sparseVector = { indices: [...rec.sparse.indices], values: rec.sparse.values.map(f32) };
    }
    if (include.metadata && rec.metadata !== undefined) o.metadata = rec.metadata;
    if (include.data && rec.data !== undefined) o.data = rec.data;
    return o;
  }
}

function asItems(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

function asObject(v: unknown): Json {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new VectorError(422, 'Failed to deserialize the JSON body into the target type: invalid type, expected a JSON object');
  return v as Json;
}

function parseId(v: unknown): string {
  if (v === undefined || v === null) throw missing('id');
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') throw invalid('id', 'a string or a number');
  if (v === '') throw new VectorError(400, 'The id of a vector must not be empty');
  return v;
}

function parseMetadata(v: unknown): Metadata | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid('metadata', 'a JSON object');
  return v as Metadata;
}

function parseData(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid('data', 'a string');
  return v;
}

function parseSparse(v: unknown): SparseVector {
  const o = v as { indices?: unknown; values?: unknown };
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw invalid('sparseVector', 'an object with indices and values');
  if (o.indices === undefined) throw missing('indices');
  if (o.values === undefined) throw missing('values');
  if (!Array.isArray(o.indices) || !o.indices.every((i) => Number.isInteger(i) && i >= 0 && i <= 0xffffffff))
    throw invalid('sparseVector.indices', 'a sequence of non-negative 32-bit integers');
  if (!Array.isArray(o.values) || !o.values.every((x) => typeof x === 'number' && Number.isFinite(x)))
    throw invalid('sparseVector.values', 'a sequence of numbers');
  if (o.indices.length !== o.values.length)
    throw new VectorError(
      422,
      `Sparse vector indices and values must have the same length: ${o.indices.length} indices, ${o.values.length} values`,
    );
  if (o.indices.length > MAX_SPARSE_ENTRIES)
    throw new VectorError(422, `Sparse vector has ${o.indices.length} non-zero entries, more than the limit of ${MAX_SPARSE_ENTRIES}`);
  // The service accepts an index given twice (vector-js's range tests draw indices that may repeat): the
  // entries of one index are summed, as a sparse vector is the sum of its entries.
  const sums = new Map<number, number>();
  (o.indices as number[]).forEach((index, i) => sums.set(index, (sums.get(index) ?? 0) + (o.values as number[])[i]));
  const indices = [...sums.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => Math.fround(sums.get(i)!)) };
}

function notSupported(what: string, kind: string): never {
  throw new VectorError(422, `This index does not support ${what}: it is a ${kind} index`);
}

function compileFilter(filter: unknown): Predicate {
  if (typeof filter !== 'string') throw invalid('filter', 'a string');
  try {
    return parseFilter(filter);
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw new VectorError(400, err.message);
    throw err;
  }
}

/** Ids starting with `prefix`, in the namespace's order (at most `limit`). */
function idsWithPrefix(ns: Namespace, prefix: string, limit = Infinity): string[] {
  const out: string[] = [];
  for (const id of ns.ids()) {
    if (out.length >= limit) break;
    if (id.startsWith(prefix)) out.push(id);
  }
  return out;
}

/** JSON merge patch (RFC 7396): null removes a field, objects merge, anything else replaces. */
function mergePatch(target: Metadata, patch: Metadata): Metadata {
  const out: Metadata = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (typeof v === 'object' && !Array.isArray(v) && typeof out[k] === 'object' && out[k] !== null && !Array.isArray(out[k]))
      out[k] = mergePatch(out[k] as Metadata, v as Metadata);
    else if (typeof v === 'object' && !Array.isArray(v)) out[k] = mergePatch({}, v as Metadata);
    else out[k] = v;
  }
  return out;
}
