// VADD: parsing one request, and running consecutive VADDs of a connection as one batch of REST calls.
import { RestError } from '../../upstream/rest-json.js';
import type { VectorRecord } from '../../upstream/vector-client.js';
import { ArgCursor, CommandError, positiveIntegerArg, SYNTAX_ERROR, upper } from '../args.js';
import type { Call, Reply } from '../command-spec.js';
import { attributesMetadata } from './attributes.js';
import { attributesArg, readVectorInput, type VectorInput } from './input.js';
import { elementOf, keyOf, toVectorError, type VectorContext } from './keyspace.js';
import { ignored, readOptions, type OptionTable } from './options.js';

/** Records per /fetch and /upsert of a batch. */
const BATCH = 1000;

interface PendingAdd {
  ns: string;
  id: string;
  input: VectorInput;
  /** SETATTR's string (undefined without SETATTR). */
  attributes: string | undefined;
}

interface VaddOptions {
  attributes?: string;
}

const VADD_OPTIONS: OptionTable<VaddOptions> = {
  // Tuning hints of Redis' own HNSW graph: accepted (values checked), no effect on the service.
  CAS: ignored,
  NOQUANT: ignored,
  Q8: ignored,
  BIN: ignored,
  EF: (_s, cur) => void positiveIntegerArg(cur.value(), 'EF', 1_000_000),
  M: (_s, cur) => void positiveIntegerArg(cur.value(), 'M', 4096),
  SETATTR: (s, cur) => (s.attributes = attributesArg(cur.value())),
};

/** One VADD request, parsed (errors are the request's own). */
function parseVadd(c: Call): PendingAdd {
  const ns = keyOf(c);
  const cur = new ArgCursor(c.args, 2);
  if (upper(c.args[2]) === 'REDUCE') {
    throw new CommandError(
      "ERR REDUCE is not supported by the vector side port: the index's dimension is fixed when it is created (VDIM shows it); send vectors of that dimension",
    );
  }
  const input = readVectorInput(cur, false);
  if (cur.done) throw new CommandError(`${SYNTAX_ERROR}: the element name is missing after the vector`);
  const id = elementOf(cur.value());
  const { attributes } = readOptions(cur, VADD_OPTIONS, 'vadd', {});
  return { ns, id, input, attributes };
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
  const all = plan(ids, before, items, results);
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

/**
 * The answers (1 added, 0 updated) and the records to upsert. Element state is followed through the
 * batch, so a second VADD of an element in the same batch answers 0 and keeps the attributes the first
 * one set, as one-by-one execution would.
 */
function plan(ids: string[], before: (VectorRecord | null)[], items: Item[], results: (Reply | Error)[]): Upsert[] {
  const state = new Map(ids.map((id, k) => [id, { exists: before[k] !== null, metadata: before[k]?.metadata }]));
  const records = new Map<string, Upsert>();
  for (const { index, add } of items) {
    const s = state.get(add.id)!;
    const metadata = newMetadata(s.exists, s.metadata, add.attributes);
    const added = !s.exists;
    results[index] = (w) => w.boolean(added);
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
  return [...records.values()];
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
