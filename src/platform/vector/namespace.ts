// One namespace of one index, in memory: the records, their dense vectors in one growing matrix, an
// inverted index of the sparse vectors, and (past a size) an HNSW graph built in the background.
// Exact search answers small namespaces, vectors not yet in the graph, and selective filters.
import usearch, { type Index as UsearchIndex, type Matches, type MetricKind } from 'usearch';
import type { Metadata, Predicate } from './filter.js';
import { candidatesFor, quantized, quantizeInto } from './int8-rows.js';
import { denseScore, idf, squares, type Metric, type Scored, type SparseVector } from './scores.js';

export interface VectorRecord {
  id: string;
  /** Row of the dense vector in the namespace's matrix, also the record's key in the HNSW graph and the sparse index. */
  slot: number;
  hasDense: boolean;
  sparse?: SparseVector;
  metadata?: Metadata;
  data?: string;
}

import type { SearchTuning } from '../../config.js';

export type { SearchTuning };

const USEARCH_METRIC: Record<Metric, MetricKind> = {
  COSINE: usearch.MetricKind.Cos,
  DOT_PRODUCT: usearch.MetricKind.IP,
  EUCLIDEAN: usearch.MetricKind.L2sq,
};

/** From this many records an unfiltered exact search runs in usearch's native brute force (float32, SIMD). */
const NATIVE_EXACT_FROM = 1000;
/** A filtered query asks the graph for at most this many neighbours; beyond, it scans exactly. */
const MAX_FILTERED_GRAPH_K = 400;
/** Graph-building time per turn of the event loop. */
const INDEXING_SLICE_MS = 4;
/** While requests are served, one slice at most this often (so the graph still grows under steady load). */
const BUSY_SLICE_EVERY_MS = 25;

export class Namespace {
  readonly records = new Map<string, VectorRecord>();
  private bySlot: (VectorRecord | undefined)[] = [];
  private freeSlots: number[] = [];
  private matrix: Float32Array;
  /** Each row's sum of squares (float32 steps), COSINE's denominator. */
  private squares: Float32Array;
  /** COSINE only: the matrix in int8, one scale per row (int8-rows.ts), what native scans read. */
  private matrix8: Int8Array | undefined;
  private readonly postings = new Map<number, Map<number, number>>();
  private graph: UsearchIndex | undefined;
  /** Slots whose dense vector is not in the graph yet. */
  private readonly pending = new Set<number>();
  private indexing = false;
  private lastSlice = 0;
  private idleWaiters: Array<() => void> = [];
  private orderedIds: string[] | undefined;
  /** Reused buffers for the rows a filter lets through (native filtered scans). */
  private scratch = new Float32Array(0);
  private scratch8 = new Int8Array(0);
  private closed = false;

  constructor(
    /** Changed by rename-namespace. */
    public name: string,
    private readonly dimension: number,
    readonly metric: Metric,
    private readonly tuning: SearchTuning,
  ) {
    this.matrix = new Float32Array(Math.max(1, dimension) * 64);
    this.squares = new Float32Array(64);
    if (metric === 'COSINE') this.matrix8 = new Int8Array(this.matrix.length);
  }

  get size(): number {
    return this.records.size;
  }

  /** Vectors waiting for the graph (the service's pendingVectorCount). */
  get pendingCount(): number {
    return this.graph ? this.pending.size : 0;
  }

  /** Resolves once every dense vector is in the graph (at once when there is no graph). */
  indexed(): Promise<void> {
    if (!this.indexing) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Whether queries go through the HNSW graph (else exact search only). */
  get usesGraph(): boolean {
    return this.graph !== undefined;
  }

  /** Inserts or replaces a record; a replaced id keeps its place in the order (range walks it). */
  put(
    id: string,
    dense: Float32Array | undefined,
    sparse: SparseVector | undefined,
    metadata: Metadata | undefined,
    data: string | undefined,
  ): void {
    const old = this.records.get(id);
    if (old) this.release(old);
    else this.orderedIds = undefined;
    const slot = this.freeSlots.pop() ?? this.bySlot.length;
    const rec: VectorRecord = { id, slot, hasDense: dense !== undefined, sparse, metadata, data };
    this.records.set(id, rec); // a Map keeps a key's first place when its value is replaced
    this.bySlot[slot] = rec;
    if (dense) this.setDense(slot, dense);
    if (sparse) this.addPostings(slot, sparse);
  }

  /** Changes the vectors of a record in place (update). */
  replaceVectors(rec: VectorRecord, dense: Float32Array | undefined, sparse: SparseVector | undefined): void {
    if (dense) {
      this.dropFromGraph(rec.slot);
      this.setDense(rec.slot, dense);
      rec.hasDense = true;
    }
    if (sparse) {
      if (rec.sparse) this.removePostings(rec.slot, rec.sparse);
      rec.sparse = sparse;
      this.addPostings(rec.slot, sparse);
    }
  }

  remove(id: string): boolean {
    const rec = this.records.get(id);
    if (!rec) return false;
    this.records.delete(id);
    this.release(rec);
    this.orderedIds = undefined;
    return true;
  }

  /** Frees a record's slot, its graph node and its postings. */
  private release(rec: VectorRecord): void {
    this.bySlot[rec.slot] = undefined;
    if (rec.hasDense) this.dropFromGraph(rec.slot);
    if (rec.sparse) this.removePostings(rec.slot, rec.sparse);
    this.freeSlots.push(rec.slot);
  }

  /** Forgets every record (reset); the graph is dropped whole, not emptied vector by vector. */
  clear(): void {
    this.graph = undefined;
    this.pending.clear();
    this.records.clear();
    this.postings.clear();
    this.bySlot = [];
    this.freeSlots = [];
    this.orderedIds = undefined;
  }

  close(): void {
    this.closed = true;
  }

  dense(rec: VectorRecord): Float32Array | undefined {
    return rec.hasDense ? this.matrix.subarray(rec.slot * this.dimension, (rec.slot + 1) * this.dimension) : undefined;
  }

  /**
   * Ids in the order they were first upserted (range and prefix fetch walk them): vector-js's range test
   * expects id-0 … id-3 first of id-0 … id-19, which neither byte order nor random order gives.
   */
  ids(): string[] {
    this.orderedIds ??= [...this.records.keys()];
    return this.orderedIds;
  }

  // ---- dense search ----

  /** The k best records for a dense query, best first; `predicate` filters on metadata. */
  searchDense(q: Float32Array, k: number, predicate: Predicate | undefined): Scored[] {
    if (k <= 0 || this.records.size === 0) return [];
    const graph = this.graph;
    if (!graph || graph.size() === 0) return this.exactDense(q, k, predicate, undefined);
    // Graph for the indexed part, exact for what is still pending; a filter widens the graph search.
    // With a filter, ask the graph for enough neighbours that about 10k of them should pass it.
    let wanted = predicate ? Math.max(100, Math.ceil((10 * k) / this.estimateSelectivity(predicate))) : k;
    // A deep graph search costs more than scanning the records that pass a selective filter.
    if (wanted > MAX_FILTERED_GRAPH_K) return this.exactDense(q, k, predicate, undefined);
    // The graph's distances are approximate (usearch's cosine too): its candidates are re-scored exactly.
    wanted = Math.max(wanted, candidatesFor(k));
    let slots: number[];
    for (;;) {
      const found = graph.search(q, Math.min(wanted, graph.size()), 1);
      slots = [];
      for (let i = 0; i < found.keys.length; i++) {
        const slot = Number(found.keys[i]);
        const rec = this.bySlot[slot];
        if (!rec || this.pending.has(slot)) continue;
        if (predicate && !predicate(rec.metadata)) continue;
        slots.push(slot);
      }
      if (!predicate || slots.length >= k || found.keys.length >= graph.size()) break;
      // A selective filter: widen the graph search a few times, then scan exactly.
      wanted *= 4;
      if (wanted > MAX_FILTERED_GRAPH_K) return this.exactDense(q, k, predicate, undefined);
    }
    const out = this.rescore(q, k, slots);
    if (this.pending.size > 0) out.push(...this.exactDense(q, k, predicate, this.pending));
    return topOf(out, k);
  }

  /** The k best of `slots` by the exact score (float32 steps, as the service computes). */
  private rescore(q: Float32Array, k: number, slots: Iterable<number>): Scored[] {
    const qSquares = squares(q);
    const top = new TopK(k);
    for (const slot of slots) top.offer(slot, denseScore(this.metric, q, this.matrix, slot * this.dimension, qSquares, this.squares[slot]));
    return top.sorted();
  }

  /** Share of records passing a filter, from a random sample of 256 (at least 1/1000, so wanted stays finite). */
  private estimateSelectivity(predicate: Predicate): number {
    let seen = 0;
    let passed = 0;
    for (let tries = 0; seen < 256 && tries < 1024; tries++) {
      const rec = this.bySlot[Math.floor(Math.random() * this.bySlot.length)];
      if (!rec) continue;
      seen++;
      if (predicate(rec.metadata)) passed++;
    }
    return Math.max(0.001, seen === 0 ? 1 : passed / seen);
  }

  /** Exact search over every record with a dense vector, or over `only` slots. */
  exactDense(q: Float32Array, k: number, predicate: Predicate | undefined, only: Set<number> | undefined): Scored[] {
    if (!only && this.records.size >= NATIVE_EXACT_FROM)
      return predicate ? this.nativeExactOver(q, k, this.passing(predicate)) : this.nativeExact(q, k);
    if (only && only.size >= NATIVE_EXACT_FROM) {
      // e.g. many vectors still waiting for the graph
      const slots: number[] = [];
      for (const slot of only) {
        const rec = this.bySlot[slot];
        if (rec?.hasDense && (!predicate || predicate(rec.metadata))) slots.push(slot);
      }
      return this.nativeExactOver(q, k, slots);
    }
    const qSquares = squares(q);
    const top = new TopK(k);
    const visit = (rec: VectorRecord) => {
      if (!rec.hasDense || (predicate && !predicate(rec.metadata))) return;
      top.offer(rec.slot, denseScore(this.metric, q, this.matrix, rec.slot * this.dimension, qSquares, this.squares[rec.slot]));
    };
    const slots = only ?? this.bySlot.keys();
    for (const slot of slots) {
      const rec = this.bySlot[slot];
      if (rec) visit(rec);
    }
    return top.sorted();
  }

  /**
   * usearch's SIMD brute force over the whole matrix (int8 for COSINE) for a few candidates, re-scored
   * exactly; free rows are asked for too, then dropped.
   */
  private nativeExact(q: Float32Array, k: number): Scored[] {
    const rows = this.bySlot.length;
    const count = Math.min(rows, candidatesFor(k) + this.freeSlots.length);
    const d = this.dimension;
    const found = (
      this.matrix8
        ? usearch.exactSearch(this.matrix8.subarray(0, rows * d), quantized(q), d, count, USEARCH_METRIC[this.metric], 1)
        : usearch.exactSearch(this.matrix.subarray(0, rows * d), ownBuffer(q), d, count, USEARCH_METRIC[this.metric], 1)
    ) as Matches;
    const slots: number[] = [];
    for (let i = 0; i < found.keys.length; i++) {
      const slot = Number(found.keys[i]);
      if (this.bySlot[slot]?.hasDense) slots.push(slot);
    }
    return this.rescore(q, k, slots);
  }

  /** Slots of the dense records passing a filter. */
  private passing(predicate: Predicate): number[] {
    const out: number[] = [];
    for (let slot = 0; slot < this.bySlot.length; slot++) {
      const rec = this.bySlot[slot];
      if (rec?.hasDense && predicate(rec.metadata)) out.push(slot);
    }
    return out;
  }

  /** The given rows copied together, then the same native brute force over them (filters, pending vectors). */
  private nativeExactOver(q: Float32Array, k: number, slots: number[]): Scored[] {
    const d = this.dimension;
    if (slots.length === 0) return [];
    const count = Math.min(candidatesFor(k), slots.length);
    let found: Matches;
    if (this.matrix8) {
      if (this.scratch8.length < slots.length * d) this.scratch8 = new Int8Array(slots.length * d * 2);
      const m8 = this.matrix8;
      slots.forEach((slot, row) => this.scratch8.set(m8.subarray(slot * d, (slot + 1) * d), row * d));
      found = usearch.exactSearch(
        this.scratch8.subarray(0, slots.length * d),
        quantized(q),
        d,
        count,
        USEARCH_METRIC[this.metric],
        1,
      ) as Matches;
    } else {
      if (this.scratch.length < slots.length * d) this.scratch = new Float32Array(slots.length * d * 2);
      slots.forEach((slot, row) => this.scratch.set(this.matrix.subarray(slot * d, (slot + 1) * d), row * d));
      found = usearch.exactSearch(
        this.scratch.subarray(0, slots.length * d),
        ownBuffer(q),
        d,
        count,
        USEARCH_METRIC[this.metric],
        1,
      ) as Matches;
    }
    return this.rescore(
      q,
      k,
      Array.from(found.keys, (key) => slots[Number(key)]),
    );
  }

  // ---- sparse search ----

  /** Inner product over shared indices; with IDF each query weight is scaled by the term's IDF in this namespace. */
  searchSparse(q: SparseVector, k: number, predicate: Predicate | undefined, useIdf: boolean): Scored[] {
    const acc = new Map<number, number>();
    const n = this.records.size;
    for (let i = 0; i < q.indices.length; i++) {
      const posting = this.postings.get(q.indices[i]);
      if (!posting) continue;
      // float32 steps, as the service computes (its scores in vector-js's tests match to the last digit)
      const w = Math.fround(q.values[i] * (useIdf ? idf(n, posting.size) : 1));
      for (const [slot, v] of posting) acc.set(slot, Math.fround((acc.get(slot) ?? 0) + Math.fround(w * v)));
    }
    const top = new TopK(k);
    for (const [slot, score] of acc) {
      if (predicate && !predicate(this.bySlot[slot]!.metadata)) continue;
      top.offer(slot, score);
    }
    return top.sorted();
  }

  record(slot: number): VectorRecord | undefined {
    return this.bySlot[slot];
  }

  // ---- internals ----

  private setDense(slot: number, v: Float32Array): void {
    const d = this.dimension;
    if ((slot + 1) * d > this.matrix.length) {
      const grown = new Float32Array(Math.max((slot + 1) * d, this.matrix.length * 2));
      grown.set(this.matrix);
      this.matrix = grown;
      const grownSquares = new Float32Array(grown.length / Math.max(1, d));
      grownSquares.set(this.squares);
      this.squares = grownSquares;
      if (this.matrix8) {
        const grown8 = new Int8Array(grown.length);
        grown8.set(this.matrix8);
        this.matrix8 = grown8;
      }
    }
    this.matrix.set(v, slot * d);
    if (this.matrix8) quantizeInto(this.matrix8, slot * d, v);
    this.squares[slot] = squares(v);
    if (this.graph) this.enqueue(slot);
    else if (this.records.size >= this.tuning.hnswThreshold) this.startGraph();
  }

  private dropFromGraph(slot: number): void {
    this.pending.delete(slot);
    if (this.graph && this.graph.contains(BigInt(slot))) this.graph.remove(BigInt(slot));
  }

  private startGraph(): void {
    this.graph = new usearch.Index({
      dimensions: this.dimension,
      metric: USEARCH_METRIC[this.metric],
      quantization: usearch.ScalarKind.F32,
      connectivity: this.tuning.connectivity,
      expansion_add: this.tuning.expansionAdd,
      expansion_search: this.tuning.expansionSearch,
      multi: false,
    });
    for (const rec of this.records.values()) if (rec.hasDense) this.enqueue(rec.slot);
  }

  private enqueue(slot: number): void {
    this.pending.add(slot);
    if (!this.indexing) {
      this.indexing = true;
      setImmediate(() => this.indexChunk());
    }
  }

  private indexChunk(): void {
    const graph = this.graph;
    if (this.closed || !graph || this.pending.size === 0) {
      this.indexing = false;
      for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    // While requests are in flight (a large upsert body arrives over many turns of the event loop), build
    // only now and then; at full speed when the platform is idle.
    if (this.tuning.busy?.() && performance.now() - this.lastSlice < BUSY_SLICE_EVERY_MS) {
      setTimeout(() => this.indexChunk(), 2);
      return;
    }
    this.lastSlice = performance.now();
    // A few milliseconds of graph work per turn of the event loop, so requests keep flowing meanwhile.
    const d = this.dimension;
    const key = new BigUint64Array(1);
    const until = performance.now() + INDEXING_SLICE_MS;
    for (const slot of this.pending) {
      key[0] = BigInt(slot);
      graph.add(key, this.matrix.subarray(slot * d, (slot + 1) * d), 1);
      this.pending.delete(slot);
      if (performance.now() >= until) break;
    }
    setImmediate(() => this.indexChunk());
  }

  private addPostings(slot: number, s: SparseVector): void {
    for (let i = 0; i < s.indices.length; i++) {
      let p = this.postings.get(s.indices[i]);
      if (!p) this.postings.set(s.indices[i], (p = new Map()));
      p.set(slot, s.values[i]);
    }
  }

  private removePostings(slot: number, s: SparseVector): void {
    for (const idx of s.indices) {
      const p = this.postings.get(idx);
      p?.delete(slot);
      if (p && p.size === 0) this.postings.delete(idx);
    }
  }
}

/** Keeps the k highest scores seen (a small min-heap). */
export class TopK {
  private keys: number[] = [];
  private scores: number[] = [];
  constructor(private readonly k: number) {}

  offer(key: number, score: number): void {
    const { keys, scores } = this;
    if (keys.length < this.k) {
      keys.push(key);
      scores.push(score);
      let i = keys.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (scores[p] <= scores[i]) break;
        this.swap(i, p);
        i = p;
      }
    } else if (this.k > 0 && score > scores[0]) {
      keys[0] = key;
      scores[0] = score;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < keys.length && scores[l] < scores[m]) m = l;
        if (r < keys.length && scores[r] < scores[m]) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
  }

  private swap(a: number, b: number): void {
    [this.keys[a], this.keys[b]] = [this.keys[b], this.keys[a]];
    [this.scores[a], this.scores[b]] = [this.scores[b], this.scores[a]];
  }

  sorted(): Scored[] {
    return this.keys.map((key, i) => ({ key, score: this.scores[i] })).sort((a, b) => b.score - a.score || a.key - b.key);
  }
}

/**
 * usearch's exactSearch reads a typed array from the start of its buffer, ignoring a view's offset (2.26.2):
 * a query that is a view into a larger buffer is copied first. (Datasets are passed as views at offset 0.)
 */
function ownBuffer(v: Float32Array): Float32Array {
  return v.byteOffset === 0 ? v : v.slice();
}

function topOf(list: Scored[], k: number): Scored[] {
  return list.sort((a, b) => b.score - a.score).slice(0, k);
}
