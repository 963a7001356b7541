// Giving memory back once a busy spell is over (issue 25). Under load V8 grows the young generation (to
// the proxy's hold, 8 MiB a semi-space, or V8's own 16) and promotes to old space the objects a
// scavenge finds still in flight; they die there, with the Buffers they hold, but stay until a full
// collection, which V8 runs only when old space reaches its limit. An idle proxy allocates nothing, so
// V8 collects nothing and the pages stay: 85-107 MiB of RSS for good after `redis-benchmark -c 50`,
// depending on whether a full collection happened to run near the end of the load (bench/README.md,
// "Memory back after load"). Here, once no collection has run for a quiet spell after V8 grew
// something, one scavenge then one full collection: the dead old objects and their Buffers go, and V8
// shrinks the young generation, but only when its allocation rate over the last 5 s is low (its own
// rule, in the full collection; the scavenge first empties new space, which V8 shrinks to twice what
// is live). So a release that left the young generation grown is tried once more after that window.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { wholeNumberEnv } from './whole-number-env.js';
import { semiSpaceBytes } from './young-generation.js';

/** Quiet time (no garbage collection) after which the proxy gives memory back, by default. */
export const RELEASE_QUIET_MS = 1000;
/** V8 shrinks the young generation only when its allocation rate over this long is low (GCTracer). */
const LOW_RATE_WINDOW_MS = 5000;
/**
 * Old space grown by this much since the last release, or external memory by twice that (it counts the
 * young generation's dead Buffers too), is worth a full collection.
 */
const WORTH_RELEASING = 4 * 1024 * 1024;
/** A semi-space this small (where the proxy's start leaves it) is not worth a collection. */
const SETTLED_SEMI_SPACE = 4 * 1024 * 1024;
/** An event loop busier than this (share of the time) is not quiet, collections or not. */
const BUSY_LOOP = 0.05;

type Collect = (options?: { type: 'minor' | 'major' }) => void;
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
  /** Releases done so far (each one scavenge and one full collection). */
  readonly releases: number;
  stop(): void;
}

/**
 * Watches garbage collections and, once none has run for `quietMs` while the event loop was nearly idle
 * (under 5 % busy: a loop that is busy without collecting is checked again later), releases memory when
 * V8 grew something since the last release: the young generation past 4 MiB a semi-space (what the
 * proxy's start reaches) and past the size it had then, old space by 4 MiB, or external memory by 8 MiB.
 * An idle process is never woken: the timer is armed by a collection only.
 */
export function releaseAfterLoad(quietMs = RELEASE_QUIET_MS): HeapRelease {
  let releases = 0;
  let floor = weight();
  let ownUntil = 0; // gc entries that started before this are of our own release, or came before it
  let since = performance.eventLoopUtilization();
  let quiet: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  const grown = (now: Weight) =>
    now.semi > Math.max(floor.semi, SETTLED_SEMI_SPACE) ||
    now.old >= floor.old + WORTH_RELEASING ||
    now.external >= floor.external + 2 * WORTH_RELEASING;
  const release = (again: boolean) => {
    if (!again && !grown(weight())) return;
    const gc = gcFunction();
    gc({ type: 'minor' });
    gc();
    ownUntil = performance.now();
    releases++;
    const after = weight();
    // V8 kept the young generation grown (its allocation rate was still high): once more after its window.
    if (!again && after.semi > Math.max(floor.semi, SETTLED_SEMI_SPACE))
      retry = setTimeout(() => release(true), LOW_RATE_WINDOW_MS).unref();
    else floor = after;
  };
  const onQuiet = () => {
    const busy = performance.eventLoopUtilization(since).utilization;
    since = performance.eventLoopUtilization();
    if (busy > BUSY_LOOP) quiet!.refresh();
    else release(false);
  };
  const observer = new PerformanceObserver((list) => {
    if (list.getEntries().every((e) => e.startTime <= ownUntil)) return;
    clearTimeout(retry);
    since = performance.eventLoopUtilization();
    quiet ??= setTimeout(onQuiet, quietMs).unref();
    quiet.refresh();
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    get releases() {
      return releases;
    },
    stop() {
      observer.disconnect();
      clearTimeout(quiet);
      clearTimeout(retry);
    },
  };
}

/**
 * The proxy's quiet time before it gives memory back: RESPGATE_RELEASE_AFTER_MS (a whole number of
 * milliseconds; 0: never), else 1000.
 */
export function releasePolicy(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const ms = wholeNumberEnv(env, 'RESPGATE_RELEASE_AFTER_MS', 'milliseconds (0: never)') ?? RELEASE_QUIET_MS;
  return ms === 0 ? undefined : ms;
}
