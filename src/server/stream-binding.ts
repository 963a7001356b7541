// node's stream binding (process.binding('stream_wrap')): the state StreamBase leaves for JavaScript
// after a read or a write, and the write request class. socket-output.ts writes on a client handle
// with it, socket-input.ts reads a handle's reads with it (issue 25). process.binding's allow-list
// has held 'stream_wrap' in Node 20, 22 and 24; anything not as expected gives undefined, and both
// fall back to net.Socket's own paths.

export interface StreamBinding {
  WriteWrap: new () => unknown;
  /** Int32Array StreamBase writes into: the bytes of the last read (or its error), the last write async. */
  streamBaseState: Int32Array;
  kReadBytesOrError: number;
  kLastWriteWasAsync: number;
}

const binding = loadBinding();

/** The binding, or undefined where it is not usable (see loadBinding). */
export function streamBinding(): StreamBinding | undefined {
  return binding;
}

function loadBinding(): StreamBinding | undefined {
  // With pending deprecations on, process.binding warns (DEP0111), and --throw-deprecation makes that
  // warning an uncaught exception on the next tick: not worth a few percent of CPU.
  if (pendingDeprecations()) return undefined;
  try {
    const b = (process as unknown as { binding(name: string): Partial<StreamBinding> }).binding('stream_wrap');
    if (typeof b.WriteWrap === 'function' && b.streamBaseState instanceof Int32Array) return b as StreamBinding;
  } catch {
    // process.binding refused (a permission model, a future Node): net.Socket's paths.
  }
  return undefined;
}

function pendingDeprecations(): boolean {
  return (
    process.env.NODE_PENDING_DEPRECATION === '1' ||
    process.execArgv.includes('--pending-deprecation') ||
    (process.env.NODE_OPTIONS ?? '').includes('--pending-deprecation')
  );
}
