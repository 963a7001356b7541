// Reading a client socket without Node's Readable stream per chunk. A plain TCP socket is read
// into one buffer shared by every connection (net.Socket's `onread` mode, which Node 20 offers only
// to sockets it connects, not to accepted ones), and each read is handed over as a copy of its
// bytes. This skips, per read, the ArrayBuffer Node allocates and shrinks, Readable.push, the 'data'
// emit and maybeReadMore's extra tick: about 1.3 µs of CPU per read, measured with a bare echo
// server against redis-benchmark (bench/README.md, issue 14). A read that continues a large value
// is copied into that value's buffer only (no 64 KiB Buffer per read: issue 25). pause() and resume() stop and start
// reading as before (net.Socket handles them in this mode), and the end of input still emits 'end'.
// Sockets where the mode is not available (TLS, another Node) keep the 'data' event.
//
// Direct reads (issue 25): on a plain TCP handle, the function libuv's StreamBase calls per read (the
// handle's `onread`, net's onStreamRead) is replaced by ours. A read of bytes goes straight to the
// connection: no owner lookup, no kBuffer / kBufferCb / kBufferGen slots, one timeout check. The end
// of input and read errors (ECONNRESET…) are handed to net's own onStreamRead, which runs them as
// before ('end' after the last bytes, destroy with the error, 'close'). The onread mode stays set up
// underneath, so pause(), resume() and destroy() behave as they did (net reads its slots, not the
// handle's onread; destroy sets the handle's onread to a no-op itself).
// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import type net from 'node:net';
import { streamBinding } from './stream-binding.js';

/** One read at most: the size of the buffer libuv reads into (Node's own default is 64 KB too). */
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * The buffer reads land in, shared by every connection of one proxy: a read is copied out before the
 * next read can start (one thread).
 */
export function createReadBuffer(): Buffer {
  return Buffer.allocUnsafe(READ_BUFFER_BYTES);
}

/** What our onread finds on the handle (its `this`): the socket, the connection's reader, net's onread. */
const SOCKET = Symbol('respgate.input.socket');
const BYTES = Symbol('respgate.input.bytes');
const NET_ONREAD = Symbol('respgate.input.netOnread');

type OnRead = (this: StreamHandle, arrayBuffer: unknown) => unknown;

interface StreamHandle {
  useUserBuffer?: (buffer: Uint8Array) => void;
  onread?: OnRead;
  [SOCKET]: TimedSocket;
  [BYTES]: (bytes: number) => void;
  [NET_ONREAD]: OnRead;
}

/** net.Socket's own timeout refresh (kUpdateTimer is this method), and the timeout setTimeout set. */
type TimedSocket = net.Socket & { _unrefTimer?: () => void };

/** How a socket is read: `direct` (our onread on the handle), `onread` (net's slots), `data` (the Readable). */
export type ReadMode = 'direct' | 'onread' | 'data';

/**
 * Calls `receive` with each chunk of bytes the client sends. `shared`: the chunk is a view of the
 * shared read buffer, valid only during the call (the callee copies what it keeps: RequestReader's
 * pushShared copies a large value's bytes straight into its own buffer, with no Buffer per read);
 * otherwise a Buffer the callee may keep. `allowDirect: false` stops at net's onread mode (a
 * benchmark's baseline, a test of that path). Returns the mode the socket is read in.
 */
export function readSocket(
  socket: net.Socket,
  buffer: Buffer,
  receive: (chunk: Buffer, shared: boolean) => void,
  allowDirect = true,
): ReadMode {
  const handle = (socket as unknown as { _handle?: StreamHandle })._handle;
  const symbols = onreadSymbols(socket);
  if ((socket as { encrypted?: boolean }).encrypted || typeof handle?.useUserBuffer !== 'function' || !symbols) {
    socket.on('data', (chunk: Buffer) => receive(chunk, false));
    return 'data';
  }
  const onBytes = (bytes: number): void => receive(buffer.subarray(0, bytes), true);
  const slots = socket as unknown as Record<symbol, unknown>;
  slots[symbols.buffer] = buffer;
  slots[symbols.callback] = onBytes;
  handle.useUserBuffer(buffer);
  return allowDirect && readDirectly(socket, handle, onBytes) ? 'direct' : 'onread';
}

/**
 * Puts our onread on a plain TCP handle whose onread is net's, if this Node has the state it reads
 * (streamBaseState[kReadBytesOrError]); false (net's onread stays) otherwise.
 */
function readDirectly(socket: net.Socket, handle: StreamHandle, onBytes: (bytes: number) => void): boolean {
  const kind = (handle as { constructor?: { name?: string } }).constructor?.name;
  if (binding === undefined || kind !== 'TCP' || socket.destroyed) return false;
  const netOnread = handle.onread;
  if (typeof netOnread !== 'function' || netOnread === directRead) return false;
  handle[SOCKET] = socket;
  handle[BYTES] = onBytes;
  handle[NET_ONREAD] = netOnread;
  handle.onread = directRead;
  // The onread accessor stores the function in the handle's C++ slot: if it did not take, net's stays.
  return handle.onread === directRead;
}

const binding = readBinding();

function readBinding(): { state: Int32Array; nread: number } | undefined {
  const b = streamBinding();
  if (b === undefined || typeof b.kReadBytesOrError !== 'number' || b.kReadBytesOrError >= b.streamBaseState.length) {
    return undefined;
  }
  return { state: b.streamBaseState, nread: b.kReadBytesOrError };
}

/**
 * The handle's onread (libuv → StreamBase::CallJSOnreadMethod → here, `this` the handle): bytes go to
 * the connection as net's onStreamRead hands them to kBufferCb (only while the socket is not
 * destroyed, its timeout refreshed first); nothing else happens per read. A read of 0 bytes (EAGAIN)
 * is nothing; the end of input and errors are net's.
 */
function directRead(this: StreamHandle, arrayBuffer: unknown): unknown {
  const nread = binding!.state[binding!.nread];
  if (nread > 0) {
    const socket = this[SOCKET];
    if (socket.timeout) socket._unrefTimer?.();
    if (!socket.destroyed) this[BYTES](nread);
    return undefined;
  }
  if (nread === 0) return undefined;
  return this[NET_ONREAD](arrayBuffer);
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
