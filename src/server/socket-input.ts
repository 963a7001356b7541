// Reading a client socket without Node's Readable stream per chunk. A plain TCP socket is read
// into one buffer shared by every connection (net.Socket's `onread` mode, which Node 20 offers only
// to sockets it connects, not to accepted ones), and each read is handed over as a copy of its
// bytes. This skips, per read, the ArrayBuffer Node allocates and shrinks, Readable.push, the 'data'
// emit and maybeReadMore's extra tick: about 1.3 µs of CPU per read, measured with a bare echo
// server against redis-benchmark (bench/README.md, issue 14). A read that continues a large value
// is copied into that value's buffer only (no 64 KiB Buffer per read: issue 25). pause() and resume() stop and start
// reading as before (net.Socket handles them in this mode), and the end of input still emits 'end'.
// Sockets where the mode is not available (TLS, another Node) keep the 'data' event.
// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import type net from 'node:net';

/** One read at most: the size of the buffer libuv reads into (Node's own default is 64 KB too). */
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * The buffer reads land in, shared by every connection of one proxy: a read is copied out before the
 * next read can start (one thread).
 */
export function createReadBuffer(): Buffer {
  return Buffer.allocUnsafe(READ_BUFFER_BYTES);
}

interface StreamHandle {
  useUserBuffer?: (buffer: Uint8Array) => void;
}

/**
 * Calls `receive` with each chunk of bytes the client sends. `shared`: the chunk is a view of the
 * shared read buffer, valid only during the call (the callee copies what it keeps: RequestReader's
 * pushShared copies a large value's bytes straight into its own buffer, with no Buffer per read);
 * otherwise a Buffer the callee may keep.
 */
export function readSocket(socket: net.Socket, buffer: Buffer, receive: (chunk: Buffer, shared: boolean) => void): void {
  const handle = (socket as unknown as { _handle?: StreamHandle })._handle;
  const symbols = onreadSymbols(socket);
  if ((socket as { encrypted?: boolean }).encrypted || typeof handle?.useUserBuffer !== 'function' || !symbols) {
    socket.on('data', (chunk: Buffer) => receive(chunk, false));
    return;
  }
  const slots = socket as unknown as Record<symbol, unknown>;
  slots[symbols.buffer] = buffer;
  slots[symbols.callback] = (bytes: number): void => receive(buffer.subarray(0, bytes), true);
  handle.useUserBuffer(buffer);
}

/** net.Socket's private slots of the `onread` option (kBuffer, kBufferCb), found by description. */
function onreadSymbols(socket: net.Socket): { buffer: symbol; callback: symbol } | undefined {
  let buffer: symbol | undefined;
  let callback: symbol | undefined;
  for (const s of Object.getOwnPropertySymbols(socket)) {
    if (s.description === 'kBuffer') buffer = s;
    else if (s.description === 'kBufferCb') callback = s;
  }
  const slots = socket as unknown as Record<symbol, unknown>;
  // Unset (null) on a socket made without `onread`: the slots exist and are free.
  if (!buffer || !callback || slots[buffer] !== null || slots[callback] !== null) return undefined;
  return { buffer, callback };
}
