// V8's young generation in a sidecar (issue 25). V8 doubles the young generation (two semi-spaces)
// whenever the objects that survive its scavenges add up to more than its size, up to 16 MiB a
// semi-space on a 64-bit machine, and keeps it at that size: a redis-benchmark run left ~27 MiB of its
// pages in the proxy's RSS for good (bench/README.md, "Sidecar memory per connection and after load").
// `--max-semi-space-size` would cap it, but V8 reads it only when it starts (command line,
// NODE_OPTIONS), which bin/respgate does not control; the growth factor, though, is read at every
// growth. So once the proxy serves, the young generation stops growing at the first size of at least
// RESPGATE_SEMI_SPACE_MIB a semi-space (default 8): the factor becomes 1. Measured: 8 MiB costs no
// CPU per command that shows, 4 MiB (what the start reaches) 0-7 % more, V8's 1 MiB start size 8-15 %
// (docs/decisions.md). What a busy spell leaves (the held young generation, objects and Buffers it
// promoted) is given back once the proxy is quiet: heap-release.ts. V8 13 (Node 24) can overshoot by
// one step: after a full collection shrinks the young generation, its next growth may double the size
// it had before the shrink, before the gc observer runs (16 MiB at the default hold, against V8 13's own
// 32; docs/decisions.md).
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { wholeNumberEnv } from './whole-number-env.js';

/** The semi-space size the proxy's young generation stops growing at, by default. */
export const HELD_SEMI_SPACE_MIB = 8;

const MiB = 1024 * 1024;

/** The size of one semi-space now (V8 commits both: new_space's size is twice it). */
export function semiSpaceBytes(): number {
  const newSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return newSpace ? newSpace.space_size / 2 : 0;
}

/**
 * Holds the young generation at `semiSpaceMiB` a semi-space: growth stops (factor 1) once it is that size
 * or more, and comes back (V8's factor 2) whenever V8 has shrunk it below, as it does when allocation is
 * slow for a while; a hold that never released left a proxy with a 1 MiB semi-space after a quiet spell,
 * at 1.4-2.8x the CPU per command at -P 16 (bench/README.md). Steered after every garbage collection.
 */
export function holdYoungGeneration(semiSpaceMiB = HELD_SEMI_SPACE_MIB): void {
  const target = semiSpaceMiB * MiB;
  let holding = false;
  const steer = () => {
    const atTarget = semiSpaceBytes() >= target;
    if (atTarget === holding) return;
    holding = atTarget;
    v8.setFlagsFromString(holding ? '--semi-space-growth-factor=1' : '--semi-space-growth-factor=2');
  };
  steer();
  new PerformanceObserver(steer).observe({ entryTypes: ['gc'] });
}

/**
 * The proxy's policy: the semi-space size its young generation stops growing at, undefined for V8's
 * own growth. RESPGATE_SEMI_SPACE_MIB (a whole number of MiB; 0: V8's own growth), else 8 MiB unless
 * RESPGATE_V8_FLAGS sets a semi-space flag itself.
 */
export function youngGenerationPolicy(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const mib = wholeNumberEnv(env, 'RESPGATE_SEMI_SPACE_MIB', "MiB (0: V8's own growth)");
  if (mib === undefined) return /semi[-_]space/.test(env.RESPGATE_V8_FLAGS ?? '') ? undefined : HELD_SEMI_SPACE_MIB;
  return mib === 0 ? undefined : mib;
}
