// Waiting on conditions and events instead of sleeping: a test waits exactly as long as the thing
// takes, and fails with a name for what never happened.

/** Resolves once `cond` holds (checked every 10 ms); rejects after `ms` naming `what`. */
export async function until(cond: () => boolean | Promise<boolean>, what = 'condition', ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`${what}: not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A promise with its resolve function outside (a gate a test opens when it decides). */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether `p` has settled by the time the current microtasks have run. */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}
