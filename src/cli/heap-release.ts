// Giving memory back once a busy spell is over (issue 25). Under load V8 grows the young generation (to
// the proxy's hold, 8 MiB a semi-space, or V8's own 16) and promotes to old space the objects a
// scavenge finds still in flight; they die there, with the Buffers they hold, but stay until a full
// collection, which V8 runs only when old space reaches its limit. An idle proxy allocates nothing, so
// V8 collects nothing and the pages stay: 85-107 MiB of RSS for good after `redis-benchmark -c 50`,
// depending on whether a full collection happened to run near the end of the load (bench/README.md,
// "Memory back after load"). Here, once no collection has run for a quiet spell after V8 grew
// something, a full collection: the dead old objects and their Buffers go. V8 shrinks the young
// generation (16 MiB of RSS at the hold) in a full collection only when the allocation rate it measured
// is low, and it measures it over its last samples, one per collection, reaching back 5 s: right after
// a load, the load's samples. So when the young generation stayed grown, 20 scavenges of the now empty
// new space, 20 ms apart, push them out (each new sample: ~0 bytes over 20 ms), and a second full
// collection shrinks it, ~0.4 s after the first instead of 5 s (bench/README.md, "RSS 1.5 s after load").
// Should V8 still keep it (another V8, whose samples differ), the release is tried once more after 5 s.
// A release costs more than its ~50 ms: its full collection makes V8 drop optimized code of the upstream
// path ("weak objects" deopts), recompiled in the next busy spell, ~0.1-0.15 s of CPU (bench/README.md,
// "the release after load is the gap"). So when the load comes back soon after a release, the quiet
// time before the next one grows fourfold (up to 30 s): a proxy whose traffic pauses now and then
// pays for at most a few releases, one that goes idle still gives its memory back.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { wholeNumberEnv } from './whole-number-env.js';
import { semiSpaceBytes } from './young-generation.js';

/** Quiet time (no garbage collection) after which the proxy gives memory back, by default. */
export const RELEASE_QUIET_MS = 500;
/** V8 shrinks the young generation only when its allocation rate over this long is low (GCTracer). */
const LOW_RATE_WINDOW_MS = 5000;
/**
 * Old space grown by this much since the last release, or external memory by twice that (it counts the
 * young generation's dead Buffers too), is worth a full collection.
 */
const WORTH_RELEASING = 4 * 1024 * 1024;
/** A semi-space this small (where the proxy's start leaves it) is not worth a collection. */
const SETTLED_SEMI_SPACE = 4 * 1024 * 1024;
/**
 * Scavenges that push the load's samples out of V8's allocation-rate measure, and the time between them.
 * Measured in the proxy (Node 20): 20 scavenges 20 ms apart shrank the young generation in every run,
 * 10 ms apart (each collection's observers allocate a little) or 16 of them in about half.
 */
const FLUSH_SCAVENGES = 20;
const FLUSH_SPACING_MS = 20;
/**
 * Load back within this long after a release: the quiet time grows fourfold, up to its ceiling; load
 * back later: the quiet time is the configured one again.
 */
const BACKOFF_WINDOW_MS = 30_000;
const BACKOFF_FACTOR = 4;
const MAX_QUIET_MS = 30_000;
/** An event loop busier than this (share of the time) is not quiet, collections or not. */
const BUSY_LOOP = 0.05;

/** `gc()`: a full collection; `gc({ type: 'minor' })`: a scavenge (Node 20's V8 reads no other option). */
type Collect = (options?: { type: 'minor' }) => void;
let collect: Collect | undefined;

/**
 * V8's `gc()` without `--expose-gc` on node's command line: set at run time, the flag exposes `gc` in the
 * contexts made after it; one context is made, the flag turned off again, and its `gc` kept.
 */
function gcFunction(): Collect {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as Collect;
    v8.setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

/** What a release looks at: the semi-space size, old space's, and external memory (Buffers). */
interface Weight {
  semi: number;
  old: number;
  external: number;
}

function weight(): Weight {
  const old = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  return { semi: semiSpaceBytes(), old: old?.space_size ?? 0, external: process.memoryUsage().external };
}

export interface HeapRelease {
  /** Releases done so far (each a full collection, and the flush and a second one when it was needed). */
  readonly releases: number;
  /** True while a release spaces its scavenges out (the flush). */
  readonly flushing: boolean;
  /** The quiet time the next release waits for (grown when the load came back soon after a release). */
  readonly quietMs: number;
  stop(): void;
}

/**
 * Watches garbage collections and, once none has run for `quietMs` while the event loop was nearly idle
 * (under 5 % busy: a loop that is busy without collecting is checked again a quarter of `quietMs`
 * later), releases memory when V8 grew something since the last release: the young generation past
 * 4 MiB a semi-space (what the proxy's start reaches) and past the size it had then, old space by 4 MiB,
 * or external memory by 8 MiB. A collection not of ours during a release (the load is back) stops it.
 * An idle process is never woken: the timer is armed by a collection only. `flushScavenges` 0: no
 * flush, the young generation waits for the retry. Load back within 30 s of a release makes the next
 * quiet time four times longer (up to 30 s); load back later resets it to `quietMs` (`backoffWindowMs`:
 * the 30 s, for tests).
 */
export function releaseAfterLoad(
  quietMs = RELEASE_QUIET_MS,
  flushScavenges = FLUSH_SCAVENGES,
  backoffWindowMs = BACKOFF_WINDOW_MS,
): HeapRelease {
  let releases = 0;
  let floor = weight();
  let ours: Array<[number, number]> = []; // when the current release's own collections ran
  let foreign = false; // a collection not of ours since the current release began
  let since = performance.eventLoopUtilization();
  let quiet: NodeJS.Timeout | undefined;
  let recheck: NodeJS.Timeout | undefined;
  let flushing: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let wait = quietMs; // the quiet time now (backoff)
  let releasedAt: number | undefined; // end of the last release, until the load came back
  const settled = () => Math.max(floor.semi, SETTLED_SEMI_SPACE);
  const grown = (now: Weight) =>
    now.semi > settled() || now.old >= floor.old + WORTH_RELEASING || now.external >= floor.external + 2 * WORTH_RELEASING;
  const own = (collect: () => void) => {
    const start = performance.now();
    collect();
    ours.push([start, performance.now()]);
  };
  const done = (again: boolean) => {
    releases++;
    releasedAt = performance.now();
    const after = weight();
    // V8 kept the young generation grown (its allocation rate was still high): once more after its window.
    if (!again && after.semi > settled()) retry = setTimeout(() => release(true), LOW_RATE_WINDOW_MS).unref();
    else floor = after;
  };
  const release = (again: boolean) => {
    if (!again && !grown(weight())) return;
    const gc = gcFunction();
    ours = [];
    foreign = false;
    own(() => gc());
    if (flushScavenges === 0 || weight().semi <= settled()) return done(again);
    let left = flushScavenges;
    const step = () => {
      flushing = undefined;
      if (foreign) return; // serving again: the next quiet spell releases
      if (left-- > 0) {
        own(() => gc({ type: 'minor' }));
        flushing = setTimeout(step, FLUSH_SPACING_MS).unref();
      } else {
        own(() => gc());
        done(again);
      }
    };
    flushing = setTimeout(step, FLUSH_SPACING_MS).unref();
  };
  const onQuiet = () => {
    const busy = performance.eventLoopUtilization(since).utilization;
    since = performance.eventLoopUtilization();
    if (busy > BUSY_LOOP) recheck = setTimeout(onQuiet, Math.ceil(quietMs / 4)).unref();
    else release(false);
  };
  const observer = new PerformanceObserver((list) => {
    if (list.getEntries().every((e) => ours.some(([from, to]) => e.startTime >= from && e.startTime <= to))) return;
    foreign = true;
    clearTimeout(retry);
    clearTimeout(recheck);
    since = performance.eventLoopUtilization();
    if (releasedAt !== undefined) {
      // The load is back: soon after the release, wait longer next time; long after, as configured.
      const soon = performance.now() - releasedAt < backoffWindowMs;
      wait = soon ? Math.min(wait * BACKOFF_FACTOR, Math.max(MAX_QUIET_MS, quietMs)) : quietMs;
      releasedAt = undefined;
      clearTimeout(quiet);
      quiet = undefined;
    }
    quiet ??= setTimeout(onQuiet, wait).unref();
    quiet.refresh();
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    get releases() {
      return releases;
    },
    get flushing() {
      return flushing !== undefined;
    },
    get quietMs() {
      return wait;
    },
    stop() {
      observer.disconnect();
      for (const timer of [quiet, recheck, flushing, retry]) clearTimeout(timer);
    },
  };
}

/**
 * The proxy's quiet time before it gives memory back: RESPGATE_RELEASE_AFTER_MS (a whole number of
 * milliseconds; 0: never), else 500.
 */
export function releasePolicy(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const ms = wholeNumberEnv(env, 'RESPGATE_RELEASE_AFTER_MS', 'milliseconds (0: never)') ?? RELEASE_QUIET_MS;
  return ms === 0 ? undefined : ms;
}
