// Commands on one element: VREM, VEMB, VGETATTR, VSETATTR, VISMEMBER.
import { ArgCursor } from '../args.js';
import type { Call, Reply } from '../command-spec.js';
import { attributesMetadata, attributesText } from './attributes.js';
import { attributesArg } from './input.js';
import { elementOf, keyOf, type VectorContext } from './keyspace.js';
import { flag, readOptions, type OptionTable } from './options.js';
import { writeFloats, writeSparse } from './replies.js';

export async function vrem(ctx: VectorContext, c: Call): Promise<Reply> {
  const { deleted } = await ctx.client.delete(keyOf(c), { ids: [elementOf(c.args[2])] });
  return (w) => w.boolean(deleted > 0);
}

const VEMB_OPTIONS: OptionTable<{ raw: boolean }> = { RAW: flag((s) => (s.raw = true)) };

export async function vemb(ctx: VectorContext, c: Call): Promise<Reply> {
  const { raw } = readOptions(new ArgCursor(c.args, 3), VEMB_OPTIONS, 'vemb', { raw: false });
  const [r] = await ctx.client.fetch(keyOf(c), { ids: [elementOf(c.args[2])], includeVectors: true });
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
}

export async function vgetattr(ctx: VectorContext, c: Call): Promise<Reply> {
  const [r] = await ctx.client.fetch(keyOf(c), { ids: [elementOf(c.args[2])], includeMetadata: true });
  return (w) => w.bulk(attributesText(r?.metadata));
}

export async function vsetattr(ctx: VectorContext, c: Call): Promise<Reply> {
  // As VSETATTR in Redis: "" removes the attributes, any other string replaces them.
  const raw = attributesArg(c.args[3]);
  const metadata = raw === '' ? {} : attributesMetadata(raw);
  const { updated } = await ctx.client.update(keyOf(c), { id: elementOf(c.args[2]), metadata, metadataUpdateMode: 'OVERWRITE' });
  return (w) => w.boolean(updated > 0);
}

export async function vismember(ctx: VectorContext, c: Call): Promise<Reply> {
  const [r] = await ctx.client.fetch(keyOf(c), { ids: [elementOf(c.args[2])], includeMetadata: true });
  return (w) => w.boolean((r ?? null) !== null);
}
