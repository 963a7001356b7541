// The vector side port's commands: Redis 8 vector-set commands (VADD, VSIM, VREM, VCARD, VDIM, VEMB,
// VGETATTR, VSETATTR, VINFO, VRANDMEMBER, VISMEMBER) over one Area C index, the key being the
// namespace ("" = default), plus extensions for what the service has and vector sets lack: text
// (DATA), sparse and hybrid vectors (SPARSE), filters in the service's language (WHERE), a cursor
// scan (VSCAN), fetch by id or prefix (VFETCH), deletes by prefix or filter (VREMBY), DEL and KEYS.
import type { ReplyWriter } from '../resp/reply-writer.js';
import { RestError } from '../upstream/rest-json.js';
import type { ScoredRecord, SparseVector, VectorClient, VectorRecord } from '../upstream/vector-client.js';
import { ArgCursor, CommandError, floatArg, integerArg, positiveIntegerArg, SYNTAX_ERROR, text, upper, utf8Arg } from './args.js';
import type { ArgSpec, Call, CommandSpec, Reply } from './command-spec.js';
import { translateFilter } from './vector-filter.js';

const INVALID_VECTOR = 'ERR invalid vector specification';
const MAX_VALUES = 1_000_000;

interface VectorInput {
  dense?: number[];
  sparse?: SparseVector;
  data?: string;
  /** VSIM ELE: the query is the vector of this element. */
  element?: string;
}

/** Reads `FP32 blob | VALUES n … | SPARSE n i v … | DATA text` (one, or dense + SPARSE for hybrid). */
function readVectorInput(cur: ArgCursor, allowEle: boolean): VectorInput {
  const input: VectorInput = {};
  let parts = 0;
  for (;;) {
    if (cur.done) break;
    const word = upper(cur.args[cur.i]);
    if (word === 'FP32' && !input.dense && !input.data) {
      cur.i++;
      const blob = cur.value();
      if (blob.length === 0 || blob.length % 4 !== 0)
        throw new CommandError(
          `${INVALID_VECTOR}: an FP32 blob is 4 bytes per dimension (little-endian float32), got ${blob.length} bytes`,
        );
      const dense: number[] = [];
      for (let o = 0; o < blob.length; o += 4) dense.push(blob.readFloatLE(o));
      if (dense.some((x) => !Number.isFinite(x))) throw new CommandError(`${INVALID_VECTOR}: the FP32 blob holds a NaN or infinite value`);
      input.dense = dense;
    } else if (word === 'VALUES' && !input.dense && !input.data) {
      cur.i++;
      const n = countArg(cur.value());
      input.dense = cur.values(n).map((b) => vectorFloat(b));
    } else if (word === 'SPARSE' && !input.sparse && !input.data && !input.element) {
      cur.i++;
      const n = countArg(cur.value());
      const pairs = cur.values(2 * n);
      const indices: number[] = [];
      const values: number[] = [];
      for (let k = 0; k < n; k++) {
        const idx = integerArg(pairs[2 * k], 'sparse index');
        if (idx < 0 || idx > 2 ** 31 - 1)
          throw new CommandError(`${INVALID_VECTOR}: a sparse index is a whole number from 0 to 2147483647, got ${idx}`);
        indices.push(idx);
        values.push(vectorFloat(pairs[2 * k + 1]));
      }
      input.sparse = { indices, values };
    } else if (word === 'DATA' && parts === 0) {
      cur.i++;
      input.data = text(cur.value());
    } else if (word === 'ELE' && allowEle && parts === 0) {
      cur.i++;
      input.element = utf8Arg(cur.value(), 'the element name');
    } else break;
    parts++;
    if (input.data !== undefined || input.element !== undefined) break;
  }
  if (parts === 0)
    throw new CommandError(
      allowEle
        ? `${SYNTAX_ERROR}: the query is ELE element, FP32 blob, VALUES num v1 … vn, SPARSE num i1 v1 … or DATA text`
        : `${SYNTAX_ERROR}: the vector is FP32 blob, VALUES num v1 … vn, SPARSE num i1 v1 … or DATA text`,
    );
  return input;
}

function countArg(b: Buffer): number {
  const s = b.toString('latin1');
  if (!/^[1-9][0-9]{0,6}$/.test(s) || Number(s) > MAX_VALUES)
    throw new CommandError(`${INVALID_VECTOR}: the count must be a whole number from 1 to ${MAX_VALUES}, got '${s.slice(0, 32)}'`);
  return Number(s);
}

function vectorFloat(b: Buffer): number {
  const s = b.toString('latin1');
  const n = /^\s*$/.test(s) ? NaN : Number(s);
  if (!Number.isFinite(n)) throw new CommandError(`${INVALID_VECTOR}: '${s.slice(0, 32)}' is not a number`);
  return n;
}

function parseAttributes(b: Buffer): Record<string, unknown> | undefined {
  const s = text(b);
  if (s === '') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch (err) {
    throw new CommandError(`ERR invalid JSON in attributes: ${(err as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new CommandError('ERR attributes must be a JSON object such as {"genre":"drama"}: the vector service stores metadata objects');
  return v as Record<string, unknown>;
}

/** Metadata as a vector-set attribute string; an empty object counts as no attributes. */
function attributesText(m: Record<string, unknown> | undefined): string | null {
  if (!m || Object.keys(m).length === 0) return null;
  return JSON.stringify(m);
}

/** The service's dimension error in Redis' words; other errors unchanged. */
function toVectorError(err: unknown): Error {
  if (err instanceof RestError) {
    const m = /Invalid vector dimension: (\d+), expected: (\d+)/.exec(err.message);
    if (m)
      return new CommandError(
        `ERR Vector dimension mismatch - got ${m[1]} but set has ${m[2]} (the index's dimension is fixed: send ${m[2]} values)`,
      );
  }
  return err as Error;
}

function vectorError(err: unknown): never {
  throw toVectorError(err);
}

interface PendingAdd {
  ns: string;
  id: string;
  input: VectorInput;
  attributes: Record<string, unknown> | undefined;
  setattr: boolean;
}

interface Fields {
  scores: boolean;
  attribs: boolean;
  data: boolean;
}

/**
 * Elements with their requested fields, as VSIM does: no field → an array of names; fields → RESP3 a map
 * name → value (one field) or name → [values] (several); RESP2 a flat array name, value(s), name, ….
 */
function writeElements(w: ReplyWriter, records: (VectorRecord & { score?: number })[], f: Fields): void {
  const n = (f.scores ? 1 : 0) + (f.attribs ? 1 : 0) + (f.data ? 1 : 0);
  if (n === 0) {
    w.arrayHeader(records.length);
    for (const r of records) w.bulk(r.id);
    return;
  }
  if (w.protocol === 3) w.mapHeader(records.length);
  else w.arrayHeader(records.length * (1 + n));
  for (const r of records) {
    w.bulk(r.id);
    if (w.protocol === 3 && n > 1) w.arrayHeader(n);
    if (f.scores) w.double(r.score ?? 0);
    if (f.attribs) w.bulk(attributesText(r.metadata));
    if (f.data) w.bulk(r.data ?? null);
  }
}

function writeRecord(w: ReplyWriter, r: VectorRecord | null): void {
  if (!r) return void w.nullBulk();
  const fields: [string, (w: ReplyWriter) => void][] = [['id', (x) => x.bulk(r.id)]];
  if (r.vector) fields.push(['vector', (x) => writeFloats(x, r.vector!)]);
  if (r.sparseVector) fields.push(['sparse', (x) => writeSparse(x, r.sparseVector!)]);
  const attrs = attributesText(r.metadata);
  if (attrs !== null) fields.push(['attributes', (x) => x.bulk(attrs)]);
  if (r.data !== undefined) fields.push(['data', (x) => x.bulk(r.data!)]);
  w.mapHeader(fields.length);
  for (const [k, write] of fields) {
    w.bulk(k);
    write(w);
  }
}

function writeFloats(w: ReplyWriter, v: number[]): void {
  w.arrayHeader(v.length);
  for (const x of v) w.double(x);
}

function writeSparse(w: ReplyWriter, s: SparseVector): void {
  w.mapHeader(2);
  w.bulk('indices').arrayHeader(s.indices.length);
  for (const i of s.indices) w.integer(i);
  w.bulk('values');
  writeFloats(w, s.values);
}

/** Reads a WHERE (service language) or FILTER (Redis language) argument into the service's filter. */
function filterOption(opt: string, cur: ArgCursor): string {
  const expr = text(cur.value());
  return opt === 'WHERE' ? expr : translateFilter(expr);
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

/** The client with missing namespaces read as empty. */
function keyspaceView(client: VectorClient): VectorClient {
  return Object.assign(Object.create(client) as VectorClient, {
    fetch: (ns: string, what: Parameters<VectorClient['fetch']>[1]) =>
      orEmpty(client.fetch(ns, what), 'ids' in what ? what.ids.map(() => null) : []),
    query: (ns: string, q: Parameters<VectorClient['query']>[1]) => orEmpty(client.query(ns, q), []),
    queryData: (ns: string, q: Parameters<VectorClient['queryData']>[1]) => orEmpty(client.queryData(ns, q), []),
    range: (ns: string, page: Parameters<VectorClient['range']>[1]) => orEmpty(client.range(ns, page), { nextCursor: '', vectors: [] }),
    delete: (ns: string, what: Parameters<VectorClient['delete']>[1]) => orEmpty(client.delete(ns, what), { deleted: 0 }),
    update: (ns: string, change: Parameters<VectorClient['update']>[1]) => orEmpty(client.update(ns, change), { updated: 0 }),
    random: (ns: string) => orEmpty(client.random(ns), null),
  });
}

export function vectorCommands(rawClient: VectorClient): CommandSpec[] {
  const client = keyspaceView(rawClient);
  const key = (c: Call) => utf8Arg(c.args[1], 'the key (namespace)');
  const element = (b: Buffer) => utf8Arg(b, 'the element name');

  async function exists(ns: string, id: string): Promise<VectorRecord | null> {
    const [r] = await client.fetch(ns, { ids: [id], includeMetadata: true });
    return r ?? null;
  }

  async function namespaceInfo(ns: string) {
    const info = await client.info();
    return { info, entry: info.namespaces?.[ns] };
  }

  /** One VADD request, parsed (errors are the request's own). */
  const parseVadd = (c: Call): PendingAdd => {
    const ns = key(c);
    const cur = new ArgCursor(c.args, 2);
    if (upper(c.args[2]) === 'REDUCE') {
      throw new CommandError(
        "ERR REDUCE is not supported by the vector side port: the index's dimension is fixed when it is created (VDIM shows it); send vectors of that dimension",
      );
    }
    const input = readVectorInput(cur, false);
    if (cur.done) throw new CommandError(`${SYNTAX_ERROR}: the element name is missing after the vector`);
    const id = element(cur.value());
    let attributes: Record<string, unknown> | undefined;
    let setattr = false;
    while (!cur.done) {
      const opt = cur.option();
      if (opt === 'CAS' || opt === 'NOQUANT' || opt === 'Q8' || opt === 'BIN') continue; // tuning hints of Redis' own HNSW
      if (opt === 'EF') positiveIntegerArg(cur.value(), 'EF', 1_000_000);
      else if (opt === 'M') positiveIntegerArg(cur.value(), 'M', 4096);
      else if (opt === 'SETATTR') {
        attributes = parseAttributes(cur.value());
        setattr = true;
      } else cur.unknown('vadd');
    }
    return { ns, id, input, attributes, setattr };
  };

  /**
   * Consecutive VADDs of a connection: per namespace (and text vs vectors) one /fetch of the ids (added
   * or updated? their attributes) and one /upsert of the records. When the service refuses the batch
   * (one bad vector), each record is sent alone so only the bad one fails.
   */
  const vaddGroup = async (calls: Call[]): Promise<(Reply | Error)[]> => {
    const results: (Reply | Error)[] = new Array(calls.length);
    const groups = new Map<string, { ns: string; text: boolean; items: { index: number; add: PendingAdd }[] }>();
    calls.forEach((c, index) => {
      try {
        const add = parseVadd(c);
        const text = add.input.data !== undefined;
        const k = `${text ? 't' : 'v'}${add.ns}`;
        let g = groups.get(k);
        if (!g) groups.set(k, (g = { ns: add.ns, text, items: [] }));
        g.items.push({ index, add });
      } catch (err) {
        results[index] = err as Error;
      }
    });
    for (const g of groups.values()) {
      for (let from = 0; from < g.items.length; from += 1000) {
        await addBatch(g.ns, g.text, g.items.slice(from, from + 1000), results);
      }
    }
    return results;
  };

  async function addBatch(
    ns: string,
    text: boolean,
    items: { index: number; add: PendingAdd }[],
    results: (Reply | Error)[],
  ): Promise<void> {
    let before: (VectorRecord | null)[];
    const ids = [...new Set(items.map((i) => i.add.id))];
    try {
      before = await client.fetch(ns, { ids, includeMetadata: true });
    } catch (err) {
      for (const i of items) results[i.index] = err as Error;
      return;
    }
    // Element state as the batch goes, so a second VADD of an element in the same batch answers 0 and
    // keeps the attributes the first one set, as one-by-one execution would.
    const state = new Map(ids.map((id, k) => [id, { exists: before[k] !== null, metadata: before[k]?.metadata }]));
    const records = new Map<string, { id: string; record: VectorRecord; items: number[] }>();
    for (const { index, add } of items) {
      const s = state.get(add.id)!;
      const metadata = add.setattr ? add.attributes : s.metadata;
      const answer = s.exists ? 0 : 1;
      results[index] = (w) => w.boolean(answer === 1);
      state.set(add.id, { exists: true, metadata });
      const { dense, sparse, data } = add.input;
      const record: VectorRecord = {
        id: add.id,
        ...(data !== undefined ? { data } : {}),
        ...(dense ? { vector: dense } : {}),
        ...(sparse ? { sparseVector: sparse } : {}),
        ...(metadata ? { metadata } : {}),
      };
      const prev = records.get(add.id);
      records.set(add.id, { id: add.id, record, items: [...(prev?.items ?? []), index] });
    }
    const all = [...records.values()];
    const send = (batch: typeof all) =>
      text
        ? client.upsertData(
            ns,
            batch.map((r) => ({ ...r.record, data: r.record.data! })),
          )
        : client.upsert(
            ns,
            batch.map((r) => r.record),
          );
    try {
      await send(all);
      return;
    } catch (err) {
      // Unreachable service (outcome unknown) or a single record: the error is every request's.
      if (!(err instanceof RestError) || err.status === 0 || all.length === 1) {
        for (const r of all) for (const i of r.items) results[i] = toVectorError(err);
        return;
      }
    }
    for (const r of all) {
      try {
        await send([r]);
      } catch (err) {
        for (const i of r.items) results[i] = toVectorError(err);
      }
    }
  }

  const vsim = async (c: Call): Promise<Reply> => {
    const ns = key(c);
    const cur = new ArgCursor(c.args, 2);
    const input = readVectorInput(cur, true);
    const f: Fields = { scores: false, attribs: false, data: false };
    let count = 10;
    let epsilon: number | undefined;
    let filter: string | undefined;
    let queryMode: 'HYBRID' | 'DENSE' | 'SPARSE' | undefined;
    let fusion: 'RRF' | 'DBSF' | undefined;
    let weighting: 'IDF' | undefined;
    while (!cur.done) {
      const opt = cur.option();
      if (opt === 'WITHSCORES') f.scores = true;
      else if (opt === 'WITHATTRIBS') f.attribs = true;
      else if (opt === 'WITHDATA') f.data = true;
      else if (opt === 'COUNT') count = positiveIntegerArg(cur.value(), 'COUNT', 1000);
      else if (opt === 'EPSILON') {
        epsilon = floatArg(cur.value(), 'EPSILON');
        if (epsilon <= 0 || epsilon >= 1)
          throw new CommandError('ERR EPSILON must be between 0 and 1 (elements with a similarity of at least 1 - EPSILON are returned)');
      } else if (opt === 'EF' || opt === 'FILTER-EF') positiveIntegerArg(cur.value(), opt, 1_000_000);
      else if (opt === 'TRUTH' || opt === 'NOTHREAD') continue;
      else if (opt === 'FILTER' || opt === 'WHERE') {
        if (filter !== undefined) throw new CommandError('ERR give one FILTER or WHERE, not both');
        filter = filterOption(opt, cur);
      } else if (opt === 'QUERYMODE') queryMode = choice(cur, ['HYBRID', 'DENSE', 'SPARSE'] as const, 'QUERYMODE');
      else if (opt === 'FUSION') fusion = choice(cur, ['RRF', 'DBSF'] as const, 'FUSION');
      else if (opt === 'WEIGHTING') weighting = choice(cur, ['IDF'] as const, 'WEIGHTING');
      else cur.unknown('vsim');
    }
    if (queryMode && input.data === undefined)
      throw new CommandError('ERR QUERYMODE applies to text queries only (VSIM key DATA text QUERYMODE …)');
    const include = { includeMetadata: f.attribs, includeData: f.data };
    let results: ScoredRecord[];
    try {
      if (input.data !== undefined) {
        results = await client.queryData(ns, {
          data: input.data,
          topK: count,
          ...include,
          filter,
          queryMode,
          fusionAlgorithm: fusion,
          weightingStrategy: weighting,
        });
      } else {
        let { dense, sparse } = input;
        if (input.element !== undefined) {
          const [r] = await client.fetch(ns, { ids: [input.element], includeVectors: true });
          if (!r) throw new CommandError('ERR element not found in set');
          dense = r.vector;
          sparse = r.sparseVector;
        }
        results = await client.query(ns, {
          ...(dense ? { vector: dense } : {}),
          ...(sparse ? { sparseVector: sparse } : {}),
          topK: count,
          ...include,
          filter,
          fusionAlgorithm: fusion,
          weightingStrategy: weighting,
        });
      }
    } catch (err) {
      vectorError(err);
    }
    if (epsilon !== undefined) results = results.filter((r) => r.score >= 1 - epsilon!);
    return (w) => writeElements(w, results, f);
  };

  const vrem = async (c: Call): Promise<Reply> => {
    const { deleted } = await client.delete(key(c), { ids: [element(c.args[2])] });
    return (w) => w.boolean(deleted > 0);
  };

  const vremby = async (c: Call): Promise<Reply> => {
    const cur = new ArgCursor(c.args, 2);
    const opt = cur.option();
    let what: { prefix: string } | { filter: string };
    if (opt === 'PREFIX') what = { prefix: text(cur.value()) };
    else if (opt === 'WHERE' || opt === 'FILTER') what = { filter: filterOption(opt, cur) };
    else return cur.unknown('vremby');
    if (!cur.done) throw new CommandError(SYNTAX_ERROR);
    const { deleted } = await client.delete(key(c), what);
    return (w) => w.integer(deleted);
  };

  const vcard = async (c: Call): Promise<Reply> => {
    const { entry } = await namespaceInfo(key(c));
    return (w) => w.integer(entry?.vectorCount ?? 0);
  };

  const vdim = async (c: Call): Promise<Reply> => {
    const { info, entry } = await namespaceInfo(key(c));
    if (!entry || entry.vectorCount === 0) throw new CommandError('ERR key does not exist');
    const dim = info.denseIndex?.dimension ?? info.dimension;
    if (info.indexType === 'SPARSE' || !dim) throw new CommandError('ERR the index is sparse: its vectors have no fixed dimension');
    return (w) => w.integer(dim);
  };

  const vemb = async (c: Call): Promise<Reply> => {
    const cur = new ArgCursor(c.args, 3);
    let raw = false;
    while (!cur.done) {
      const opt = cur.option();
      if (opt === 'RAW') raw = true;
      else cur.unknown('vemb');
    }
    const [r] = await client.fetch(key(c), { ids: [element(c.args[2])], includeVectors: true });
    return (w) => {
      if (!r) return void w.nullArray();
      if (!r.vector) {
        if (r.sparseVector) return void writeSparse(w, r.sparseVector);
        return void w.nullArray();
      }
      if (!raw) return void writeFloats(w, r.vector);
      const blob = Buffer.alloc(r.vector.length * 4);
      r.vector.forEach((x, i) => blob.writeFloatLE(x, i * 4));
      w.arrayHeader(3)
        .simple('f32')
        .bulk(blob)
        .double(Math.hypot(...r.vector));
    };
  };

  const vgetattr = async (c: Call): Promise<Reply> => {
    const [r] = await client.fetch(key(c), { ids: [element(c.args[2])], includeMetadata: true });
    return (w) => w.bulk(attributesText(r?.metadata));
  };

  const vsetattr = async (c: Call): Promise<Reply> => {
    const metadata = parseAttributes(c.args[3]) ?? {};
    const { updated } = await client.update(key(c), { id: element(c.args[2]), metadata, metadataUpdateMode: 'OVERWRITE' });
    return (w) => w.boolean(updated > 0);
  };

  const vismember = async (c: Call): Promise<Reply> => {
    const r = await exists(key(c), element(c.args[2]));
    return (w) => w.boolean(r !== null);
  };

  const vinfo = async (c: Call): Promise<Reply> => {
    const ns = key(c);
    const { info, entry } = await namespaceInfo(ns);
    return (w) => {
      if (!entry) return void w.nullBulk();
      const dim = info.denseIndex?.dimension ?? info.dimension ?? 0;
      const fields: [string, (w: ReplyWriter) => void][] = [
        ['quant-type', (x) => x.simple('f32')],
        ['vector-dim', (x) => x.integer(info.indexType === 'SPARSE' ? 0 : dim)],
        ['size', (x) => x.integer(entry.vectorCount)],
        ['pending-size', (x) => x.integer(entry.pendingVectorCount ?? 0)],
        ['index-type', (x) => x.bulk(info.indexType ?? 'DENSE')],
        ['similarity-function', (x) => x.bulk(info.denseIndex?.similarityFunction ?? info.similarityFunction ?? '')],
        ['dense-embedding-model', (x) => x.bulk(info.denseIndex?.embeddingModel ?? null)],
        ['sparse-embedding-model', (x) => x.bulk(info.sparseIndex?.embeddingModel ?? null)],
        ['index-vector-count', (x) => x.integer(info.vectorCount)],
        ['index-size', (x) => x.integer(info.indexSize ?? 0)],
      ];
      w.mapHeader(fields.length);
      for (const [k, write] of fields) {
        w.bulk(k);
        write(w);
      }
    };
  };

  const vrandmember = async (c: Call): Promise<Reply> => {
    const ns = key(c);
    if (c.args.length > 3) throw new CommandError(SYNTAX_ERROR);
    if (c.args.length === 2) {
      const r = await client.random(ns);
      return (w) => w.bulk(r?.id ?? null);
    }
    const count = integerArg(c.args[2]);
    if (count === 0) return (w) => w.arrayHeader(0);
    const n = Math.min(Math.abs(count), 1000);
    if (count < 0) {
      // Repeats allowed, as in Redis: one random draw per element.
      const draws = await Promise.all(Array.from({ length: n }, () => client.random(ns)));
      const ids = draws.filter((r): r is VectorRecord => r !== null).map((r) => r.id);
      return (w) => {
        w.arrayHeader(ids.length);
        for (const id of ids) w.bulk(id);
      };
    }
    // Distinct elements: the whole namespace when it is no larger than count, else a random sample of a scan.
    const { ids } = await allIds(ns, 10_000);
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [ids[i], ids[j]] = [ids[j], ids[i]];
    }
    const pick = ids.slice(0, n);
    return (w) => {
      w.arrayHeader(pick.length);
      for (const id of pick) w.bulk(id);
    };
  };

  /** Every id of a namespace, by /range pages (bounded: VRANGE and VRANDMEMBER read whole namespaces). */
  async function allIds(ns: string, limit: number): Promise<{ ids: string[]; complete: boolean }> {
    const ids: string[] = [];
    let cursor = '0';
    do {
      const page = await client.range(ns, { cursor, limit: 1000 });
      for (const v of page.vectors) ids.push(v.id);
      cursor = page.nextCursor;
    } while (cursor !== '' && ids.length < limit);
    return { ids, complete: cursor === '' };
  }

  const vrange = async (c: Call): Promise<Reply> => {
    const lo = lexBound(c.args[2]);
    const hi = lexBound(c.args[3]);
    let count = -1;
    if (c.args.length === 5) count = integerArg(c.args[4]);
    else if (c.args.length > 5) throw new CommandError(SYNTAX_ERROR);
    const { ids, complete } = await allIds(key(c), VRANGE_LIMIT);
    if (!complete)
      throw new CommandError(
        `ERR VRANGE sorts the whole namespace and it holds more than ${VRANGE_LIMIT} elements; walk it with VSCAN instead`,
      );
    const bytes = ids.map((id) => Buffer.from(id));
    bytes.sort(Buffer.compare);
    const picked = bytes.filter((b) => aboveLow(b, lo) && belowHigh(b, hi));
    const out = count < 0 ? picked : picked.slice(0, count);
    return (w) => {
      w.arrayHeader(out.length);
      for (const b of out) w.bulk(b);
    };
  };

  const vscan = async (c: Call): Promise<Reply> => {
    const cursorArg = text(c.args[2]);
    if (!/^\d+$/.test(cursorArg)) throw new CommandError('ERR invalid cursor');
    const cur = new ArgCursor(c.args, 3);
    let count = 10;
    let prefix: string | undefined;
    const f: Fields = { scores: false, attribs: false, data: false };
    while (!cur.done) {
      const opt = cur.option();
      if (opt === 'COUNT') count = positiveIntegerArg(cur.value(), 'COUNT', 1000);
      else if (opt === 'PREFIX') prefix = text(cur.value());
      else if (opt === 'WITHATTRIBS') f.attribs = true;
      else if (opt === 'WITHDATA') f.data = true;
      else cur.unknown('vscan');
    }
    const page = await client.range(key(c), { cursor: cursorArg, limit: count, prefix, includeMetadata: f.attribs, includeData: f.data });
    return (w) => {
      w.arrayHeader(2);
      w.bulk(page.nextCursor === '' ? '0' : page.nextCursor);
      const n = 1 + (f.attribs ? 1 : 0) + (f.data ? 1 : 0);
      w.arrayHeader(page.vectors.length * n);
      for (const r of page.vectors) {
        w.bulk(r.id);
        if (f.attribs) w.bulk(attributesText(r.metadata));
        if (f.data) w.bulk(r.data ?? null);
      }
    };
  };

  const vfetch = async (c: Call): Promise<Reply> => {
    const cur = new ArgCursor(c.args, 2);
    let what: { ids: string[] } | { prefix: string } | undefined;
    const include = { includeMetadata: false, includeVectors: false, includeData: false };
    while (!cur.done) {
      const opt = cur.option();
      if (opt === 'IDS' && !what) {
        const n = positiveIntegerArg(cur.value(), 'IDS count', 1000);
        what = { ids: cur.values(n).map(text) };
      } else if (opt === 'PREFIX' && !what) what = { prefix: text(cur.value()) };
      else if (opt === 'WITHATTRIBS') include.includeMetadata = true;
      else if (opt === 'WITHVECTORS') include.includeVectors = true;
      else if (opt === 'WITHDATA') include.includeData = true;
      else cur.unknown('vfetch');
    }
    if (!what) throw new CommandError(`${SYNTAX_ERROR}: VFETCH needs IDS count id … or PREFIX prefix`);
    const records = await client.fetch(key(c), { ...what, ...include });
    return (w) => {
      w.arrayHeader(records.length);
      for (const r of records) writeRecord(w, r);
    };
  };

  const del = async (c: Call): Promise<Reply> => {
    let n = 0;
    const names = [...new Set(c.args.slice(1).map(text))];
    const { info } = await namespaceInfo('');
    for (const ns of names) {
      const entry = info.namespaces?.[ns];
      if (!entry || (ns === '' && entry.vectorCount === 0)) continue;
      if (ns === '') await client.reset('');
      else await client.deleteNamespace(ns);
      n++;
    }
    return (w) => w.integer(n);
  };

  const keys = async (c: Call): Promise<Reply> => {
    const re = globToRegExp(text(c.args[1]));
    const names = (await client.listNamespaces()).filter((n) => re.test(n));
    return (w) => {
      w.arrayHeader(names.length);
      for (const n of names) w.bulk(n);
    };
  };

  const K: ArgSpec = { name: 'key', type: 'key' };
  const ELEMENT: ArgSpec = { name: 'element', type: 'string' };
  const vectorArg = (withEle: boolean): ArgSpec => ({
    name: 'vector',
    type: 'oneof',
    arguments: [
      ...(withEle ? [{ name: 'element', type: 'string', token: 'ELE' } as ArgSpec] : []),
      { name: 'blob', type: 'string', token: 'FP32' },
      {
        name: 'values',
        type: 'block',
        arguments: [
          { name: 'num', type: 'integer', token: 'VALUES' },
          { name: 'value', type: 'double', multiple: true },
        ],
      },
      {
        name: 'sparse',
        type: 'block',
        arguments: [
          { name: 'num', type: 'integer', token: 'SPARSE' },
          {
            name: 'index-value',
            type: 'block',
            multiple: true,
            arguments: [
              { name: 'index', type: 'integer' },
              { name: 'value', type: 'double' },
            ],
          },
        ],
      },
      { name: 'text', type: 'string', token: 'DATA' },
    ],
  });
  const filterArgs: ArgSpec[] = [
    { name: 'expression', type: 'string', token: 'FILTER', optional: true },
    { name: 'service-filter', type: 'string', token: 'WHERE', optional: true },
  ];
  const vs = (s: Omit<CommandSpec, 'group' | 'acl' | 'firstKey' | 'since'> & { write?: boolean }): CommandSpec => ({
    group: 'vector_set',
    since: '8.0.0',
    acl: [s.write ? '@write' : '@read', '@vector'],
    firstKey: 1,
    ...s,
  });

  return [
    vs({
      name: 'vadd',
      arity: -5,
      write: true,
      flags: ['write', 'denyoom'],
      summary: 'Adds an element with its vector to a namespace (1 added, 0 updated).',
      runGroup: vaddGroup,
      upstream:
        'POST /fetch (exists?) then /upsert (or /upsert-data for DATA); consecutive VADDs of a connection share one /fetch and one /upsert',
      args: [
        K,
        { name: 'dim', type: 'integer', token: 'REDUCE', optional: true },
        vectorArg(false),
        ELEMENT,
        { name: 'cas', type: 'pure-token', token: 'CAS', optional: true },
        {
          name: 'quant',
          type: 'oneof',
          optional: true,
          arguments: [
            { name: 'noquant', type: 'pure-token', token: 'NOQUANT' },
            { name: 'q8', type: 'pure-token', token: 'Q8' },
            { name: 'bin', type: 'pure-token', token: 'BIN' },
          ],
        },
        { name: 'build-exploration-factor', type: 'integer', token: 'EF', optional: true },
        { name: 'attributes', type: 'string', token: 'SETATTR', optional: true },
        { name: 'numlinks', type: 'integer', token: 'M', optional: true },
      ],
    }),
    vs({
      name: 'vsim',
      arity: -4,
      flags: ['readonly'],
      summary: 'Returns the elements most similar to a vector, an element or a text.',
      run: vsim,
      upstream: 'POST /query (or /query-data for DATA; /fetch first for ELE)',
      args: [
        K,
        vectorArg(true),
        { name: 'withscores', type: 'pure-token', token: 'WITHSCORES', optional: true },
        { name: 'withattribs', type: 'pure-token', token: 'WITHATTRIBS', optional: true },
        { name: 'withdata', type: 'pure-token', token: 'WITHDATA', optional: true },
        { name: 'count', type: 'integer', token: 'COUNT', optional: true },
        { name: 'epsilon', type: 'double', token: 'EPSILON', optional: true },
        { name: 'search-exploration-factor', type: 'integer', token: 'EF', optional: true },
        ...filterArgs,
        { name: 'max-filtering-effort', type: 'integer', token: 'FILTER-EF', optional: true },
        { name: 'truth', type: 'pure-token', token: 'TRUTH', optional: true },
        { name: 'nothread', type: 'pure-token', token: 'NOTHREAD', optional: true },
        {
          name: 'querymode',
          type: 'oneof',
          token: 'QUERYMODE',
          optional: true,
          arguments: [
            { name: 'hybrid', type: 'pure-token', token: 'HYBRID' },
            { name: 'dense', type: 'pure-token', token: 'DENSE' },
            { name: 'sparse', type: 'pure-token', token: 'SPARSE' },
          ],
        },
        {
          name: 'fusion',
          type: 'oneof',
          token: 'FUSION',
          optional: true,
          arguments: [
            { name: 'rrf', type: 'pure-token', token: 'RRF' },
            { name: 'dbsf', type: 'pure-token', token: 'DBSF' },
          ],
        },
        {
          name: 'weighting',
          type: 'oneof',
          token: 'WEIGHTING',
          optional: true,
          arguments: [{ name: 'idf', type: 'pure-token', token: 'IDF' }],
        },
      ],
    }),
    vs({
      name: 'vrem',
      arity: 3,
      write: true,
      flags: ['write'],
      summary: 'Removes an element (1 removed, 0 absent).',
      run: vrem,
      upstream: 'POST /delete {ids}',
      args: [K, ELEMENT],
    }),
    vs({
      name: 'vremby',
      arity: 4,
      write: true,
      flags: ['write'],
      summary: 'Removes the elements matching an id prefix or a filter; returns how many.',
      run: vremby,
      upstream: 'POST /delete {prefix} or {filter}',
      args: [
        K,
        {
          name: 'what',
          type: 'oneof',
          arguments: [
            { name: 'prefix', type: 'string', token: 'PREFIX' },
            { name: 'expression', type: 'string', token: 'FILTER' },
            { name: 'service-filter', type: 'string', token: 'WHERE' },
          ],
        },
      ],
    }),
    vs({
      name: 'vcard',
      arity: 2,
      flags: ['readonly', 'fast'],
      summary: 'Returns the number of elements in a namespace.',
      run: vcard,
      upstream: 'POST /info (namespaces)',
      args: [K],
    }),
    vs({
      name: 'vdim',
      arity: 2,
      flags: ['readonly', 'fast'],
      summary: "Returns the index's dimension.",
      run: vdim,
      upstream: 'POST /info',
      args: [K],
    }),
    vs({
      name: 'vemb',
      arity: -3,
      flags: ['readonly', 'fast'],
      summary: "Returns an element's vector.",
      run: vemb,
      upstream: 'POST /fetch {ids, includeVectors}',
      args: [K, ELEMENT, { name: 'raw', type: 'pure-token', token: 'RAW', optional: true }],
    }),
    vs({
      name: 'vgetattr',
      arity: 3,
      flags: ['readonly', 'fast'],
      summary: "Returns an element's attributes (metadata) as JSON.",
      run: vgetattr,
      upstream: 'POST /fetch {ids, includeMetadata}',
      args: [K, ELEMENT],
    }),
    vs({
      name: 'vsetattr',
      arity: 4,
      write: true,
      flags: ['write', 'fast'],
      summary: 'Replaces an element\'s attributes ("" removes them).',
      run: vsetattr,
      upstream: 'POST /update {id, metadata, metadataUpdateMode: OVERWRITE}',
      args: [K, ELEMENT, { name: 'json', type: 'string' }],
    }),
    vs({
      name: 'vismember',
      arity: 3,
      flags: ['readonly', 'fast'],
      summary: 'Tells whether an element exists.',
      run: vismember,
      upstream: 'POST /fetch {ids}',
      args: [K, ELEMENT],
    }),
    vs({
      name: 'vinfo',
      arity: 2,
      flags: ['readonly', 'fast'],
      summary: 'Returns information about a namespace and its index.',
      run: vinfo,
      upstream: 'POST /info',
      args: [K],
    }),
    vs({
      name: 'vrandmember',
      arity: -2,
      flags: ['readonly'],
      summary: 'Returns one or more random elements.',
      run: vrandmember,
      upstream: 'POST /random (one), or /range pages (count > 0)',
      args: [K, { name: 'count', type: 'integer', optional: true }],
    }),
    vs({
      name: 'vlinks',
      arity: -3,
      flags: ['readonly'],
      summary: 'Not available: the vector service does not expose its HNSW graph.',
      upstream: '(none)',
      run: () => {
        throw new CommandError(
          'ERR VLINKS is not supported by the vector side port: the vector service does not expose the neighbours of its HNSW graph; VSIM key ELE element gives the nearest elements',
        );
      },
      args: [K, ELEMENT, { name: 'withscores', type: 'pure-token', token: 'WITHSCORES', optional: true }],
    }),
    vs({
      name: 'vrange',
      arity: -4,
      flags: ['readonly'],
      summary: 'Returns elements in lexicographical order between two bounds (-, +, [elem, (elem), at most count (all when negative).',
      run: vrange,
      upstream: `POST /range pages over the whole namespace (at most ${VRANGE_LIMIT} elements), sorted here`,
      args: [K, { name: 'start', type: 'string' }, { name: 'end', type: 'string' }, { name: 'count', type: 'integer', optional: true }],
    }),
    vs({
      name: 'vscan',
      arity: -3,
      flags: ['readonly'],
      summary: 'Iterates over the elements of a namespace with a cursor (0 starts and ends).',
      run: vscan,
      upstream: 'POST /range {cursor, limit, prefix}',
      args: [
        K,
        { name: 'cursor', type: 'integer' },
        { name: 'prefix', type: 'string', token: 'PREFIX', optional: true },
        { name: 'count', type: 'integer', token: 'COUNT', optional: true },
        { name: 'withattribs', type: 'pure-token', token: 'WITHATTRIBS', optional: true },
        { name: 'withdata', type: 'pure-token', token: 'WITHDATA', optional: true },
      ],
    }),
    vs({
      name: 'vfetch',
      arity: -4,
      flags: ['readonly'],
      summary: 'Returns records by id (null when absent) or by id prefix (at most 1000).',
      run: vfetch,
      upstream: 'POST /fetch {ids} or {prefix}',
      args: [
        K,
        {
          name: 'what',
          type: 'oneof',
          arguments: [
            {
              name: 'ids',
              type: 'block',
              arguments: [
                { name: 'count', type: 'integer', token: 'IDS' },
                { name: 'id', type: 'string', multiple: true },
              ],
            },
            { name: 'prefix', type: 'string', token: 'PREFIX' },
          ],
        },
        { name: 'withattribs', type: 'pure-token', token: 'WITHATTRIBS', optional: true },
        { name: 'withvectors', type: 'pure-token', token: 'WITHVECTORS', optional: true },
        { name: 'withdata', type: 'pure-token', token: 'WITHDATA', optional: true },
      ],
    }),
    {
      name: 'del',
      arity: -2,
      group: 'generic',
      since: '1.0.0',
      flags: ['write'],
      acl: ['@keyspace', '@write'],
      firstKey: 1,
      lastKey: -1,
      summary: 'Deletes namespaces (the default namespace "" is emptied); returns how many existed.',
      run: del,
      upstream: 'POST /delete-namespace/{ns} (or /reset for "")',
      args: [{ name: 'key', type: 'key', multiple: true }],
    },
    {
      name: 'keys',
      arity: 2,
      group: 'generic',
      since: '1.0.0',
      flags: ['readonly'],
      acl: ['@keyspace', '@read'],
      summary: 'Returns the namespaces matching a glob-style pattern.',
      run: keys,
      upstream: 'POST /list-namespaces',
      args: [{ name: 'pattern', type: 'pattern' }],
    },
  ];
}

const VRANGE_LIMIT = 100_000;

type LexBound = { kind: 'min' } | { kind: 'max' } | { kind: 'incl' | 'excl'; value: Buffer };

/** `-`, `+`, `[elem` (inclusive) or `(elem` (exclusive), as ZRANGEBYLEX and VRANGE take them. */
function lexBound(b: Buffer): LexBound {
  if (b.length === 1 && b[0] === 0x2d) return { kind: 'min' };
  if (b.length === 1 && b[0] === 0x2b) return { kind: 'max' };
  if (b[0] === 0x5b) return { kind: 'incl', value: b.subarray(1) };
  if (b[0] === 0x28) return { kind: 'excl', value: b.subarray(1) };
  throw new CommandError('ERR min or max not valid string range item: use -, +, [element or (element');
}

function aboveLow(b: Buffer, lo: LexBound): boolean {
  if (lo.kind === 'min') return true;
  if (lo.kind === 'max') return false;
  const c = Buffer.compare(b, lo.value);
  return lo.kind === 'incl' ? c >= 0 : c > 0;
}

function belowHigh(b: Buffer, hi: LexBound): boolean {
  if (hi.kind === 'max') return true;
  if (hi.kind === 'min') return false;
  const c = Buffer.compare(b, hi.value);
  return hi.kind === 'incl' ? c <= 0 : c < 0;
}

function choice<T extends string>(cur: ArgCursor, allowed: readonly T[], what: string): T {
  const v = upper(cur.value()) as T;
  if (!allowed.includes(v)) throw new CommandError(`ERR ${what} must be one of ${allowed.join(', ')}`);
  return v;
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob
          .slice(i + 1, end)
          .replace(/^\^/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (ch === '\\' && i + 1 < glob.length) re += `\\${glob[++i]}`;
    else re += ch.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}
