// Reading a request's vector (FP32, VALUES, SPARSE, DATA, ELE) and attributes, with Redis' error texts
// plus the reason.
import type { SparseVector } from '../../upstream/vector-client.js';
import { ArgCursor, CommandError, integerArg, text, upper, utf8Arg } from '../args.js';
import { readDecimals } from './decimal-batch.js';
import { fastDecimal } from './decimal.js';
import { elementId } from './element-names.js';

export const INVALID_VECTOR = 'ERR invalid vector specification';
/** Redis' VSET_MAX_VECTOR_DIM. */
const MAX_VALUES = 65_536;

export interface VectorInput {
  dense?: number[];
  sparse?: SparseVector;
  data?: string;
  /** VSIM ELE: the query is the vector of this element. */
  element?: string;
}

/** Reads `FP32 blob | VALUES n … | SPARSE n i v … | DATA text` (one, or dense + SPARSE for hybrid). */
export function readVectorInput(cur: ArgCursor, allowEle: boolean): VectorInput {
  const input: VectorInput = {};
  let parts = 0;
  for (;;) {
    if (cur.done) break;
    const word = upper(cur.args[cur.i]);
    if (word === 'FP32' && !input.dense && !input.data) {
      cur.i++;
      input.dense = redisVector(() => fp32Vector(cur.value()));
    } else if (word === 'VALUES' && !input.dense && !input.data) {
      cur.i++;
      input.dense = redisVector(() => valuesVector(cur));
    } else if (word === 'SPARSE' && !input.sparse && !input.data && !input.element) {
      cur.i++;
      input.sparse = sparseVector(cur);
    } else if (word === 'DATA' && parts === 0) {
      cur.i++;
      input.data = text(cur.value());
    } else if (word === 'ELE' && allowEle && parts === 0) {
      cur.i++;
      input.element = elementId(cur.value());
    } else break;
    parts++;
    if (input.data !== undefined || input.element !== undefined) break;
  }
  // Redis' one text for every vector it cannot read (no format word, a bad count or value, missing values).
  if (parts === 0) throw new CommandError(INVALID_VECTOR);
  return input;
}

/** An FP32 or VALUES vector: any problem is Redis' `ERR invalid vector specification`, as vset.c answers. */
function redisVector(read: () => number[]): number[] {
  try {
    return read();
  } catch (err) {
    if (err instanceof CommandError) throw new CommandError(INVALID_VECTOR);
    throw err;
  }
}

/**
 * `VALUES n v1 … vn`, read in place: short values (at most 15 significant digits) each straight from
 * its bytes; at the first longer one, all n at once as one JSON array (decimal-batch.ts); one string
 * per value only for what neither reads.
 */
function valuesVector(cur: ArgCursor): number[] {
  const n = countArg(cur.value());
  const from = cur.i;
  if (from + n > cur.args.length) throw new CommandError(INVALID_VECTOR);
  cur.i += n;
  const dense: number[] = [];
  for (let k = 0; k < n; k++) {
    const fast = fastDecimal(cur.args[from + k]);
    if (fast !== undefined) {
      dense.push(fast);
      continue;
    }
    const all = readDecimals(cur.args, from, n);
    if (all) return all;
    for (; k < n; k++) dense.push(vectorFloat(cur.args[from + k]));
  }
  return dense;
}

function fp32Vector(blob: Buffer): number[] {
  if (blob.length === 0 || blob.length % 4 !== 0 || blob.length / 4 > MAX_VALUES) throw new CommandError(INVALID_VECTOR);
  const dense: number[] = [];
  for (let o = 0; o < blob.length; o += 4) dense.push(blob.readFloatLE(o));
  // Redis stores such a blob as it is; the service cannot take NaN or infinity in JSON.
  if (dense.some((x) => !Number.isFinite(x))) throw new CommandError(`${INVALID_VECTOR}: the FP32 blob holds a NaN or infinite value`);
  return dense;
}

function sparseVector(cur: ArgCursor): SparseVector {
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
  return { indices, values };
}

function countArg(b: Buffer): number {
  const s = b.toString('latin1');
  if (!/^[1-9][0-9]{0,6}$/.test(s) || Number(s) > MAX_VALUES) throw new CommandError(INVALID_VECTOR);
  return Number(s);
}

function vectorFloat(b: Buffer): number {
  const fast = fastDecimal(b);
  if (fast !== undefined) return fast;
  const s = b.toString('latin1');
  const n = /^\s*$/.test(s) ? NaN : Number(s);
  if (!Number.isFinite(n)) throw new CommandError(INVALID_VECTOR);
  return n;
}

/** An attribute string: any text, as Redis takes it (UTF-8 only: the service keeps it in JSON). */
export function attributesArg(b: Buffer): string {
  return utf8Arg(b, 'the attribute string');
}
