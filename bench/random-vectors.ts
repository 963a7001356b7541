// The vector benches' data: i.i.d. uniform unit vectors of 6-decimal values, held as float32, from a
// seeded mulberry32 (the LCG used before, seed * 1103515245 in float64, lost precision past 2^53 and
// cycled, so half the vectors were duplicates of others). The same seed gives the same vectors.

/** A generator of unit vectors of `dim` dimensions; each call gives the next one. */
export function unitVectors(dim: number, seed = 42): () => Float32Array {
  const rand = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return () => {
    const v = Float32Array.from({ length: dim }, () => rand() * 2 - 1);
    const n = Math.hypot(...v);
    return v.map((x) => Number((x / n).toFixed(6)));
  };
}
