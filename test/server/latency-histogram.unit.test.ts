// The per-command latency histogram behind INFO latencystats: every value lands in a bucket whose
// reported (highest) value is within 1/128 above it, percentiles pick the bucket holding the wanted
// count as HDR's hdr_value_at_percentile does, and values are clamped to Redis' 1 ns .. 1 s.
import { describe, expect, it } from 'vitest';
import { buckets, LatencyHistogram, percentileFields } from '../../src/server/latency-histogram.js';

describe('LatencyHistogram', () => {
  it('reports each value within 1/128 above it, buckets in order, at most 3,072 of them', () => {
    let prev = -1;
    for (let v = 1; v <= 1e9; v = v < 100_000 ? v + 1 : v + Math.ceil(v / 997)) {
      const b = buckets.bucketOf(v);
      const hi = buckets.highestOf(b);
      expect(b).toBeGreaterThanOrEqual(prev);
      if (hi < v || (hi - v) / v > 1 / 128 || buckets.bucketOf(hi) !== b || buckets.bucketOf(hi + 1) === b) {
        expect.fail(`value ${v}: bucket ${b} reports ${hi}`);
      }
      prev = b;
    }
    expect(buckets.bucketOf(1e9)).toBeLessThan(3072);
  });

  it('gives p50, p99 and p99.9 as Redis prints them (µs, 3 decimals)', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) h.recordUsec(i);
    expect(percentileFields(h)).toBe('p50=501.759,p99=991.231,p99.9=999.423');
    const one = new LatencyHistogram();
    one.recordUsec(1);
    expect(percentileFields(one)).toBe('p50=1.003,p99=1.003,p99.9=1.003'); // Redis' own answer for a 1 µs command
  });

  it('clamps to 1 ns .. 1 s and answers 0 when empty', () => {
    const h = new LatencyHistogram();
    expect(h.valueAtPercentile(50)).toBe(0);
    h.recordUsec(0);
    expect(h.valueAtPercentile(50)).toBe(1);
    h.recordUsec(5e6);
    expect(h.valueAtPercentile(100)).toBeGreaterThanOrEqual(1e9);
    expect(h.valueAtPercentile(100)).toBeLessThan(1e9 * (1 + 1 / 128));
    expect(h.total).toBe(2);
  });
});
