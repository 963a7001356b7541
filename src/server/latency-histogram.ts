// A command's latency distribution for INFO latencystats, as Redis 7.0 keeps one per command (an HDR
// histogram of nanoseconds, 1 ns to 1 s, 2 significant figures; server.c updateCommandLatencyHistogram).
// This one is log-linear like HDR: exact below 256 ns, then 128 linear sub-buckets per power of two, so a
// value is reported within 1/128 (< 0.8 %) of what was recorded, and a command never holds more than
// 3,072 counters (in blocks of 128, one per power of two it has hit), whatever its traffic.

/** Redis' LATENCY_HISTOGRAM_MIN_VALUE and MAX_VALUE, in nanoseconds: values outside are clamped. */
const MIN_NS = 1;
const MAX_NS = 1_000_000_000;
const SUB_BITS = 7;
const SUB = 1 << SUB_BITS; // 128

/** Bucket index of a value (ns, integer 1 ≤ v ≤ 2^31): integer operations only, no Math.log2 (recorded per command). */
function bucketOf(v: number): number {
  if (v < 2 * SUB) return v;
  const shift = 31 - Math.clz32(v) - SUB_BITS;
  return shift * SUB + (v >>> shift);
}

/** The highest value a bucket holds (HDR's highest_equivalent_value, what Redis reports). */
function highestOf(index: number): number {
  if (index < 2 * SUB) return index;
  const shift = Math.floor(index / SUB) - 1;
  const sub = index - shift * SUB;
  return (sub + 1) * 2 ** shift - 1;
}

/** Buckets come in blocks of SUB (one per power of two above the linear part), allocated when first hit. */
const BLOCKS = (bucketOf(MAX_NS) >> SUB_BITS) + 1;

export class LatencyHistogram {
  /** counts[b >> SUB_BITS][b & (SUB - 1)]: a command's latencies span a few powers of two, so few blocks exist. */
  private readonly blocks: (Float64Array | undefined)[] = new Array<Float64Array | undefined>(BLOCKS).fill(undefined);
  total = 0;

  /** `count` commands' duration (default one), in microseconds (Redis records duration*1000 ns). Runs per command: kept cheap. */
  recordUsec(usec: number, count = 1): void {
    const ns = Math.min(MAX_NS, Math.max(MIN_NS, Math.round(usec * 1000))) | 0; // | 0: an integer (NaN: 0)
    const b = bucketOf(ns);
    const block = this.blocks[b >> SUB_BITS] ?? (this.blocks[b >> SUB_BITS] = new Float64Array(SUB));
    block[b & (SUB - 1)] += count;
    this.total += count;
  }

  /** hdr_value_at_percentile, in nanoseconds: the highest value of the bucket holding the percentile's count. */
  valueAtPercentile(percentile: number): number {
    if (this.total === 0) return 0;
    const wanted = Math.max(1, Math.floor((Math.min(100, percentile) / 100) * this.total + 0.5));
    let seen = 0;
    for (let i = 0; i < BLOCKS; i++) {
      const block = this.blocks[i];
      if (!block) continue;
      for (let j = 0; j < SUB; j++) {
        seen += block[j];
        if (seen >= wanted) return highestOf(i * SUB + j);
      }
    }
    return 0;
  }
}

/** latency-tracking-info-percentiles' default. */
export const INFO_PERCENTILES = [50, 99, 99.9];

/** `p50=1.003,p99=3.007,p99.9=4.015`: microseconds with 3 decimals, as Redis' genRedisInfoString prints them. */
export function percentileFields(h: LatencyHistogram, percentiles: number[] = INFO_PERCENTILES): string {
  return percentiles.map((p) => `p${p}=${(h.valueAtPercentile(p) / 1000).toFixed(3)}`).join(',');
}

/** For the unit test: bucket bounds. */
export const buckets = { bucketOf, highestOf };
