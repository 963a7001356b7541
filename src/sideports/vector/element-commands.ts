// Commands on one element: VREM, VEMB, VGETATTR, VSETATTR, VISMEMBER, VLINKS.
import { ArgCursor, upper } from '../args.js';
import type { Call, Reply } from '../port-command.js';
import { attributesMetadata, attributesText, quantOf, setFields } from './attributes.js';
import { attributesArg } from './input.js';
import { elementName } from './element-names.js';
import { elementOf, keyOf, type VectorContext } from './keyspace.js';
import { flag, readOptions, wrongArity, type OptionTable } from './options.js';
import { dequantize, quantize } from './quantization.js';
import { writeDouble, writeFloats, writeSparse } from './replies.js';
import { rescore } from './similarity.js';

export async function vrem(ctx: VectorContext, c: Call): Promise<Reply> {
  const { deleted } = await ctx.client.delete(keyOf(c), { ids: [elementOf(c.args[2])] });
  return (w) => w.boolean(deleted > 0);
}

const VEMB_OPTIONS: OptionTable<{ raw: boolean }> = { RAW: flag((s) => (s.raw = true)) };

/**
 * VEMB: the vector as Redis' set holds it, computed from the one the service keeps: normalized and
 * quantized as the element was added (int8 by default), then turned back (dequantized, times the norm).
 * RAW: the quantization's name, the stored bytes, the norm and (int8) the range.
 */
export async function vemb(ctx: VectorContext, c: Call): Promise<Reply> {
  const { raw } = readOptions(new ArgCursor(c.args, 3), VEMB_OPTIONS, 'vemb', { raw: false }, 'ERR invalid option');
  const [r] = await ctx.client.fetch(keyOf(c), { ids: [elementOf(c.args[2])], includeVectors: true, includeMetadata: true });
  return (w) => {
    if (!r) return void w.nullBulk(); // Redis' null for a missing key or element ($-1 in RESP2)
    if (!r.vector) {
      if (r.sparseVector) return void writeSparse(w, r.sparseVector);
      return void w.nullBulk();
    }
    const stored = quantize(r.vector, quantOf(r.metadata));
    if (!raw) return void writeFloats(w, dequantize(stored, r.vector.length));
    w.arrayHeader(stored.quant === 'int8' ? 4 : 3)
      .simple(stored.quant)
      .bulk(stored.bytes);
    writeDouble(w, stored.l2);
    if (stored.quant === 'int8') writeDouble(w, stored.range);
  };
}

export async function vgetattr(ctx: VectorContext, c: Call): Promise<Reply> {
  const [r] = await ctx.client.fetch(keyOf(c), { ids: [elementOf(c.args[2])], includeMetadata: true });
  return (w) => w.bulk(attributesText(r?.metadata));
}

export async function vsetattr(ctx: VectorContext, c: Call): Promise<Reply> {
  // As VSETATTR in Redis: "" removes the attributes, any other string replaces them.
  // The set's quantization and projection live in its metadata too, so it is read first and they are kept.
  const raw = attributesArg(c.args[3]);
  const ns = keyOf(c);
  const id = elementOf(c.args[2]);
  const [r] = await ctx.client.fetch(ns, { ids: [id], includeMetadata: true });
  if (!r) return (w) => w.boolean(false);
  const metadata = { ...(raw === '' ? {} : attributesMetadata(raw)), ...setFields(r.metadata) };
  const { updated } = await ctx.client.update(ns, { id, metadata, metadataUpdateMode: 'OVERWRITE' });
  return (w) => w.boolean(updated > 0);
}

export async function vismember(ctx: VectorContext, c: Call): Promise<Reply> {
  const [r] = await ctx.client.fetch(keyOf(c), { ids: [elementOf(c.args[2])], includeMetadata: true });
  return (w) => w.boolean((r ?? null) !== null);
}

/** Neighbours of a node at level 0 of Redis' HNSW graph (2 * M, M being 16). */
const LEVEL0_LINKS = 32;

/**
 * VLINKS key element [WITHSCORES]: the service does not expose its graph, so the element's links are
 * given as one level holding its nearest elements (as many as a level-0 node of Redis' graph links to),
 * with their similarity for WITHSCORES; null for a missing key or element, as in Redis.
 */
export async function vlinks(ctx: VectorContext, c: Call): Promise<Reply> {
  if (c.args.length > 4 || (c.args.length === 4 && upper(c.args[3]) !== 'WITHSCORES')) throw wrongArity('VLINKS');
  const withScores = c.args.length === 4;
  const ns = keyOf(c);
  const id = elementOf(c.args[2]);
  const [r] = await ctx.client.fetch(ns, { ids: [id], includeVectors: true });
  if (!r || (!r.vector && !r.sparseVector)) return (w) => w.nullBulk();
  let near = await ctx.client.query(ns, {
    ...(r.vector ? { vector: r.vector } : {}),
    ...(r.sparseVector ? { sparseVector: r.sparseVector } : {}),
    topK: LEVEL0_LINKS + 1,
    ...(withScores && r.vector ? { includeVectors: true, includeMetadata: true } : {}),
  });
  // Scores as Redis' graph holds them: between the two stored (quantized) vectors, rounded to float32.
  if (withScores && r.vector && !r.sparseVector) near = rescore(near, r.vector, false).map((x) => ({ ...x, score: Math.fround(x.score) }));
  const links = near.filter((x) => x.id !== id).slice(0, LEVEL0_LINKS);
  return (w) => {
    w.arrayHeader(1);
    if (withScores) w.mapHeader(links.length);
    else w.arrayHeader(links.length);
    for (const l of links) {
      w.bulk(elementName(l.id));
      if (withScores) writeDouble(w, l.score);
    }
  };
}
