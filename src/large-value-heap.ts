// V8's old-generation headroom for a process that moves large values (issue 25).
//
// V8 counts every ArrayBuffer (each Buffer of a socket read, each 1 MiB body the HTTP parser hands
// over) as external memory, and starts a full collection (mark-compact) once the external memory added
// since the last one, plus the young generation's capacity, eats the old generation's headroom (its
// limit minus its size). The limit after a full collection is the live size times a factor V8 picks
// from how fast collections and the program ran, here 2.4-2.7: a platform with 17 MB live got a limit
// of 41 MB or 44-46 MB by chance, i.e. 8 MB or 11-13 MB for external memory next to its 16 MiB young
// generation. Four clients' 1 MiB SETs in flight, and the dead ones not yet swept, cross 8 MB: that
// platform ran a full collection every ~20 SETs for its whole life, and its GC threads took half its
// CPU (the "dear mode" of bench/README.md's third pass: 1.5-2.5 ms per SET instead of 0.7-1.0).
//
// So the first large value a process sees fixes the factor at 3 (`--heap-growing-percent=200`, read
// by V8 at every limit it computes): the headroom is then at least twice the live size. Measured
// (bench/README.md, "Large values, fourth pass"): platforms 0-1 full collections per 800 requests in
// every run, 0.8-1.05 ms of CPU per 1 MiB SET or GET. A process that never sees a large value keeps
// V8's own factor (the sidecar's memory after small-value load is unchanged).
import v8 from 'node:v8';

/** V8's growing factor once large values pass: 1 + 200 % = 3. */
export const LARGE_VALUE_HEAP_GROWING_PERCENT = 200;

let applied = false;

/** Called where a large value passes; the first call sets the factor, for the whole process. */
export function largeValuesSeen(): void {
  if (applied) return;
  applied = true;
  if (process.env.RESPGATE_LARGE_VALUE_HEAP === '0') return; // V8's own factor (A/B benches)
  v8.setFlagsFromString(`--heap-growing-percent=${LARGE_VALUE_HEAP_GROWING_PERCENT}`);
}

/** Whether the factor was set (tests). */
export function largeValueHeapApplied(): boolean {
  return applied && process.env.RESPGATE_LARGE_VALUE_HEAP !== '0';
}
