// Redis 8's vector quantization, reproduced in float32 arithmetic (vector sets' hnsw.c): a vector is
// L2-normalized (its norm kept), then stored as int8 (Q8, the default: each component scaled so the
// largest magnitude is 127, with that magnitude kept as the range), as sign bits (BIN) or as float32
// (NOQUANT). VEMB returns the stored form turned back into a vector (times the norm, except for BIN);
// VEMB RAW the stored bytes, the norm and (Q8) the range. The service keeps the vector as sent, so the
// side port computes these from it; every step rounds to float32 as Redis' C code does.

export type Quant = 'int8' | 'f32' | 'bin';

const f = Math.fround;

export interface Stored {
  quant: Quant;
  /** The stored form: int8 values (Q8), normalized float32 (f32), or the sign bits in 64-bit words (bin). */
  bytes: Buffer;
  l2: number;
  /** Q8 only: the largest magnitude of the normalized vector. */
  range: number;
}

/** Normalizes in float32 as hnsw_normalize_vector does (sums of four squares, then sqrtf); norm 1 for a zero vector. */
function normalize(v: number[]): { x: number[]; l2: number } {
  const x = v.map(f);
  let sum = 0;
  let i = 0;
  for (; i + 3 < x.length; i += 4) {
    const four = f(f(f(f(x[i] * x[i]) + f(x[i + 1] * x[i + 1])) + f(x[i + 2] * x[i + 2])) + f(x[i + 3] * x[i + 3]));
    sum = f(sum + four);
  }
  for (; i < x.length; i++) sum = f(sum + f(x[i] * x[i]));
  if (sum === 0) return { x, l2: 1 };
  const l2 = f(Math.sqrt(sum));
  return { x: x.map((c) => f(c / l2)), l2 };
}

/** C's roundf: halves away from zero. */
const roundf = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

/** What Redis stores for a vector added with this quantization. */
export function quantize(v: number[], quant: Quant): Stored {
  const { x, l2 } = normalize(v);
  if (quant === 'f32') {
    const bytes = Buffer.alloc(x.length * 4);
    x.forEach((c, i) => bytes.writeFloatLE(c, i * 4));
    return { quant, bytes, l2, range: 0 };
  }
  if (quant === 'bin') {
    const bytes = Buffer.alloc(Math.ceil(x.length / 64) * 8);
    x.forEach((c, j) => {
      if (c > 0) bytes[(j >> 6) * 8 + ((j & 63) >> 3)] |= 1 << (j & 7);
    });
    return { quant, bytes, l2, range: 0 };
  }
  let maxAbs = 0;
  for (const c of x) maxAbs = Math.max(maxAbs, Math.abs(c));
  const bytes = Buffer.alloc(x.length);
  if (maxAbs === 0) return { quant, bytes, l2, range: 0 };
  const scale = f(127 / maxAbs);
  x.forEach((c, j) => bytes.writeInt8(roundf(f(c * scale)), j));
  return { quant, bytes, l2, range: maxAbs };
}

/** The vector VEMB returns for a stored form (hnsw_get_node_vector). */
export function dequantize(s: Stored, dim: number): number[] {
  const out: number[] = [];
  for (let j = 0; j < dim; j++) {
    if (s.quant === 'bin') out.push(s.bytes[(j >> 6) * 8 + ((j & 63) >> 3)] & (1 << (j & 7)) ? 1 : -1);
    else if (s.quant === 'f32') out.push(f(s.bytes.readFloatLE(j * 4) * s.l2));
    else out.push(f(f(f(s.bytes.readInt8(j) * s.range) / 127) * s.l2));
  }
  return out;
}
