// VADD: parsing one request, and running consecutive VADDs of a connection as one batch of REST calls.
import { RestError } from '../../upstream/rest-json.js';
import type { VectorRecord } from '../../upstream/vector-client.js';
import { ArgCursor, CommandError, upper } from '../args.js';
import type { Call, Reply } from '../port-command.js';
import { attributesMetadata, DEFAULT_M, linksOf, M_KEY, QUANT_KEY, quantOf, withQuant } from './attributes.js';
import { attributesArg, INVALID_VECTOR, readVectorInput, type VectorInput } from './input.js';
import { elementOf, exists, keyOf, toVectorError, type SetShape, type VectorContext } from './keyspace.js';
import { ignored, readOptions, redisInteger, wrongArity, type OptionTable } from './options.js';
import { project, PROJ_KEY, projectionOf } from './projection.js';
import type { Quant } from './quantization.js';
import { dimensionOf } from './routing.js';

/** Records per /fetch and /upsert of a batch. */
const BATCH = 1000;

interface PendingAdd {
  ns: string;
  id: string;
  input: VectorInput;
  /** SETATTR's string (undefined without SETATTR). */
  attributes: string | undefined;
  quant: Quant;
  /** REDUCE's dimension (0 without REDUCE). */
  reduce: number;
  m: number;
}

interface VaddOptions {
  attributes?: string;
  quant: Quant;
  m: number;
}

const VADD_OPTIONS: OptionTable<VaddOptions> = {
  // Tuning hints of Redis' own HNSW graph: accepted (values checked), no effect on the service.
  CAS: ignored,
  // The quantization is recorded with the element: VEMB and VINFO answer as Redis' quantized set would.
  NOQUANT: (s) => (s.quant = 'f32'),
  Q8: (s) => (s.quant = 'int8'),
  BIN: (s) => (s.quant = 'bin'),
  EF: (_s, cur) => void redisInteger(cur.value(), 1, 1_000_000, 'ERR invalid EF'),
  M: (s, cur) => (s.m = redisInteger(cur.value(), 4, 4096, 'ERR invalid M')),
  SETATTR: (s, cur) => (s.attributes = attributesArg(cur.value())),
};

/** One VADD request, parsed (errors are the request's own). */
function parseVadd(c: Call): PendingAdd {
  const ns = keyOf(c);
  const cur = new ArgCursor(c.args, 2);
  let reduce = 0;
  // As vset.c: REDUCE dim when two more arguments follow; dim a whole number from 1 to the vector's.
  if (upper(c.args[2]) === 'REDUCE' && c.args.length > 4) {
    const s = c.args[3].toString('latin1');
    reduce = /^(0|-?[1-9][0-9]{0,18})$/.test(s) ? Number(s) : 0;
    if (reduce <= 0) throw new CommandError(INVALID_VECTOR);
    cur.i = 4;
  }
  const input = readVectorInput(cur, false);
  if (reduce && (!input.dense || input.sparse || input.data !== undefined || reduce > input.dense.length))
    throw new CommandError(INVALID_VECTOR);
  if (cur.done) throw wrongArity('VADD');
  const id = elementOf(cur.value());
  const o = readOptions(cur, VADD_OPTIONS, 'vadd', { quant: 'int8', m: DEFAULT_M }, 'ERR invalid option after element');
  return { ns, id, input, attributes: o.attributes, quant: o.quant, m: o.m, reduce };
}

type Item = { index: number; add: PendingAdd };

/**
 * Consecutive VADDs of a connection: per namespace (and text vs vectors) one /fetch of the ids (added
 * or updated? their attributes) and one /upsert of the records. When the service refuses the batch
 * (one bad vector), each record is sent alone so only the bad one fails.
 */
export async function vaddGroup(ctx: VectorContext, calls: Call[]): Promise<(Reply | Error)[]> {
  const results: (Reply | Error)[] = new Array(calls.length);
  const groups = new Map<string, { ns: string; text: boolean; items: Item[] }>();
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
    for (let from = 0; from < g.items.length; from += BATCH) {
      await addBatch(ctx, g.ns, g.text, g.items.slice(from, from + BATCH), results);
    }
  }
  return results;
}

type Upsert = { id: string; record: VectorRecord; items: number[] };

async function addBatch(ctx: VectorContext, ns: string, text: boolean, items: Item[], results: (Reply | Error)[]): Promise<void> {
  let before: (VectorRecord | null)[];
  const ids = [...new Set(items.map((i) => i.add.id))];
  try {
    before = await ctx.client.fetch(ns, { ids, includeMetadata: true });
  } catch (err) {
    for (const i of items) results[i.index] = err as Error;
    return;
  }
  let shape: SetShape | undefined;
  let setDim = 0;
  try {
    shape = await shapeOfSet(ctx, ns, before);
    // The set's dimension, needed to check REDUCE and projected vectors as Redis does.
    if (shape && (shape.proj || items.some((i) => i.add.reduce))) setDim = dimensionOf((await ctx.router.locate(ns)).info);
  } catch (err) {
    for (const i of items) results[i.index] = err as Error;
    return;
  }
  const all = plan(ids, before, items, results, shape && { ...shape, dim: setDim });
  if (all.length === 0) return;
  const m = all[0].record.metadata!;
  ctx.setQuants.set(ns, { quant: m[QUANT_KEY] as Quant, proj: projectionOf(m), m: linksOf(m) });
  const send = (batch: Upsert[]) =>
    text
      ? ctx.client.upsertData(
          ns,
          batch.map((r) => ({ ...r.record, data: r.record.data! })),
        )
      : ctx.client.upsert(
          ns,
          batch.map((r) => r.record),
        );
  try {
    await send(all);
    return;
  } catch (err) {
    // Unreachable service (outcome unknown) or a single record: the error is every request's.
    if (!(err instanceof RestError) || err.status === 0 || all.length === 1) {
      const e = await addError(ctx, ns, err);
      for (const r of all) for (const i of r.items) results[i] = e;
      return;
    }
  }
  for (const r of all) {
    try {
      await send([r]);
    } catch (err) {
      const e = await addError(ctx, ns, err);
      for (const i of r.items) results[i] = e;
    }
  }
}

/**
 * A refused upsert in Redis' words; a new key whose dimension is not its index's gets the error that
 * names the flag adding an index of that dimension (Redis would create the key).
 */
async function addError(ctx: VectorContext, ns: string, err: unknown): Promise<Error> {
  const got = err instanceof RestError ? /Invalid vector dimension: (\d+), expected/.exec(err.message) : null;
  if (got && !exists((await ctx.router.locate(ns).catch(() => ({ entry: { vectorCount: 1, pendingVectorCount: 0 } }))).entry))
    return ctx.router.noIndexFor(Number(got[1]));
  return toVectorError(err);
}

/**
 * The answers (1 added, 0 updated) and the records to upsert. Element state is followed through the
 * batch, so a second VADD of an element in the same batch answers 0 and keeps the attributes the first
 * one set, as one-by-one execution would.
 */
function plan(
  ids: string[],
  before: (VectorRecord | null)[],
  items: Item[],
  results: (Reply | Error)[],
  set: (SetShape & { dim: number }) | undefined,
): Upsert[] {
  const state = new Map(ids.map((id, k) => [id, { exists: before[k] !== null, metadata: before[k]?.metadata }]));
  const records = new Map<string, Upsert>();
  for (const { index, add } of items) {
    let dense: number[] | undefined;
    try {
      dense = setVector(add, set);
    } catch (err) {
      results[index] = err as Error;
      continue;
    }
    const n = add.input.dense?.length ?? 0;
    set ??= { quant: add.quant, proj: add.reduce ? n : 0, m: add.m, dim: add.reduce || n };
    const s = state.get(add.id)!;
    const metadata = withShape(newMetadata(s.exists, s.metadata, add.attributes), set);
    const added = !s.exists;
    results[index] = (w) => w.boolean(added);
    state.set(add.id, { exists: true, metadata });
    const { sparse, data } = add.input;
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
  return [...records.values()];
}

/**
 * The vector to store for a VADD, checked against its set as vset.c checks (undefined set: the VADD
 * creates it): same quantization, same dimension (REDUCE's for a projected set), REDUCE only on a set
 * created with it; a projected set's vectors are projected.
 */
function setVector(add: PendingAdd, set: (SetShape & { dim: number }) | undefined): number[] | undefined {
  const dense = add.input.dense;
  const n = dense?.length ?? 0;
  if (!set) return add.reduce ? project(dense!, add.reduce) : dense;
  if (add.quant !== set.quant) throw new CommandError('ERR asked quantization mismatch with existing vector set');
  if (add.m !== set.m) throw new CommandError('ERR asked M value mismatch with existing vector set');
  if (!dense) return dense;
  if (set.proj ? add.reduce !== set.dim : add.reduce && n !== set.dim)
    throw new CommandError(`ERR Vector dimension mismatch - got ${n} but set has ${set.dim}`);
  if (add.reduce && !set.proj) throw new CommandError('ERR cannot add projection to existing set without projection');
  if (!set.proj) return dense;
  if (n !== set.proj) throw new CommandError(`ERR Input dimension mismatch for projection - got ${n} but projection expects ${set.proj}`);
  return project(dense, set.dim);
}

/** Metadata with the set's quantization, projection and M recorded. */
function withShape(m: Record<string, unknown> | undefined, set: SetShape): Record<string, unknown> {
  const out = withQuant(m, set.quant);
  if (set.proj) out[PROJ_KEY] = set.proj;
  else delete out[PROJ_KEY];
  if (set.m !== DEFAULT_M) out[M_KEY] = set.m;
  else delete out[M_KEY];
  return out;
}

/**
 * The shape of an existing set: from an element of the batch that exists, else from any element of
 * the namespace; undefined for a new set or one whose elements another client wrote.
 */
async function shapeOfSet(ctx: VectorContext, ns: string, before: (VectorRecord | null)[]): Promise<SetShape | undefined> {
  let sample = before.find((r) => r !== null);
  if (!sample) {
    const known = ctx.setQuants.get(ns);
    if (known) return known;
    [sample] = (await ctx.client.range(ns, { cursor: '0', limit: 1, includeMetadata: true })).vectors;
  }
  if (sample?.metadata?.[QUANT_KEY] === undefined) return undefined;
  return { quant: quantOf(sample.metadata), proj: projectionOf(sample.metadata), m: linksOf(sample.metadata) };
}

/**
 * The attributes after a VADD, as Redis sets them: without SETATTR they stay; SETATTR stores its string,
 * except that an empty string on an existing element removes them (on a new element "" is stored).
 */
function newMetadata(exists: boolean, before: Record<string, unknown> | undefined, attributes: string | undefined) {
  if (attributes === undefined) return before;
  if (attributes === '' && exists) return undefined;
  return attributesMetadata(attributes);
}
