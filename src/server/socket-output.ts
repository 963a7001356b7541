// Writing a client's replies straight onto its socket's libuv stream handle, below net.Socket's
// Writable stream (issue 25). A socket.write runs, per reply batch, Writable.write → writeOrBuffer →
// _write → _writeGeneric → writeGeneric → createWriteWrap (an object-template instance) →
// handle.writeBuffer, then afterWrite on the tick queue. Here a reply is one handle.writeBuffer with a
// request object (one per connection) that is used again as long as libuv writes everything at once (a write that completes
// at once never binds its request object in C++: StreamBase::Write returns before CreateWriteWrap).
//
// A write goes to the handle only when that keeps today's order and accounting: a plain TCP or pipe
// handle (TLS writes through its own TLSWrap: not here), nothing in the Writable (not queued, not
// corked, not ending or destroyed), no socket timeout to refresh. Anything else is socket.write, as
// before. libuv keeps the order of writes on one handle (uv_try_write refuses while its queue is not
// empty), so a later write, direct or not, never overtakes one still pending there.
//
// What a direct write that libuv could not finish at once (a client that does not read) keeps:
// - the buffer (or the chunks of a writev) on its request until libuv is done with them;
// - `done` runs after libuv completes it, with the error if it failed (the large-value pool gives
//   the buffer back only then);
// - an error destroys the socket with that error, as the Writable does ('error' then 'close');
// - the bytes count as unread output (`pendingBytes`: libuv's writeQueueSize), and as the Writable's
//   needDrain does, `needsDrain` stays true from the write that passed the high-water mark until all is
//   written; then the owner's `outputDrained` runs (the Writable's 'drain' for the other writes).
// `socket.bytesWritten` counts these writes by itself: it reads the handle's own counter.
//
// Where node's internals are not as expected (another Node, a policy refusing process.binding,
// pending deprecations on: process.binding would warn), every write is socket.write.
import type net from 'node:net';
import { getSystemErrorName } from 'node:util';
import type { ReplyOutput } from './reply-queue.js';

/** The request object libuv's write keeps; our fields on it say what to do when it completes. */
interface WriteReq {
  oncomplete: (this: WriteReq, status: number) => void;
  output: SocketOutput | undefined;
  /** Kept alive while libuv writes from it. */
  buffer: Buffer | Buffer[] | undefined;
  done: Done | Done[] | undefined;
}

type Done = ((err?: Error | null) => void) | undefined;

interface StreamHandle {
  writeBuffer(req: WriteReq, data: Buffer): number;
  writev(req: WriteReq, chunks: Buffer[], allBuffers: boolean): number;
  readonly writeQueueSize: number;
}

interface StreamBinding {
  WriteWrap: new () => WriteReq;
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
}

/** What is told when every direct write that waited in libuv is written. */
export interface OutputOwner {
  outputDrained(): void;
}

const binding = loadBinding();

/**
 * node's stream binding (WriteWrap, the state the last write leaves: async or not), through
 * process.binding's allow-list, which has held 'stream_wrap' in Node 20, 22 and 24. Undefined if
 * anything is not as expected: every write then goes through socket.write.
 */
function loadBinding(): StreamBinding | undefined {
  // With pending deprecations on, process.binding warns (DEP0111), and --throw-deprecation makes that
  // warning an uncaught exception on the next tick: not worth a few percent of CPU.
  if (pendingDeprecations()) return undefined;
  try {
    const b = (process as unknown as { binding(name: string): Partial<StreamBinding> }).binding('stream_wrap');
    if (
      typeof b.WriteWrap === 'function' &&
      b.streamBaseState instanceof Int32Array &&
      typeof b.kLastWriteWasAsync === 'number' &&
      b.kLastWriteWasAsync < b.streamBaseState.length
    ) {
      return b as StreamBinding;
    }
  } catch {
    // process.binding refused (a permission model, a future Node): the Writable path.
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

function newRequest(): WriteReq {
  const req = new binding!.WriteWrap();
  req.oncomplete = onWriteComplete;
  req.output = undefined;
  req.buffer = undefined;
  req.done = undefined;
  return req;
}

/** libuv finished (or failed, or cancelled on close) a direct write that could not be done at once. */
function onWriteComplete(this: WriteReq, status: number): void {
  const output = this.output!;
  const done = this.done;
  this.output = undefined;
  this.buffer = undefined;
  this.done = undefined;
  output.completed(status, done);
}

function writeError(status: number): Error {
  const code = getSystemErrorName(status);
  return Object.assign(new Error(`write ${code}`), { errno: status, code, syscall: 'write' });
}

function callDone(done: Done | Done[] | undefined, err: Error | null): void {
  if (done === undefined) return;
  if (typeof done === 'function') return void done(err);
  for (let i = 0; i < done.length; i++) done[i]?.(err);
}

/** Whether this socket's writes may go to its handle: a plain (not TLS) libuv stream of this Node. */
function directCapable(socket: net.Socket): boolean {
  if (binding === undefined || (socket as { encrypted?: boolean }).encrypted) return false;
  const handle = (socket as unknown as { _handle?: Partial<StreamHandle> | null })._handle;
  if (handle == null || typeof handle.writeBuffer !== 'function' || typeof handle.writev !== 'function') return false;
  const kind = (handle as { constructor?: { name?: string } }).constructor?.name;
  return (kind === 'TCP' || kind === 'Pipe') && typeof handle.writeQueueSize === 'number';
}

/** A client socket as its reply queue writes it (ReplyOutput), with the bytes it has not written yet. */
export class SocketOutput implements ReplyOutput {
  private readonly direct: boolean;
  /** Direct writes libuv has not completed. */
  private waiting = 0;
  /** A direct write left more than the high-water mark unwritten; cleared when all are written. */
  private blocked = false;
  /** cork() depth, and what was written meanwhile (one writev at the last uncork). */
  private corks = 0;
  private held: Buffer[] | undefined;
  private heldDone: Done[] | undefined;
  /** A request object no write holds: the last one libuv wrote at once (made at the first write). */
  private spare: WriteReq | undefined;

  constructor(
    private readonly socket: net.Socket,
    private readonly owner: OutputOwner,
  ) {
    this.direct = directCapable(socket);
  }

  /** Replies written and not yet taken by the kernel: the Writable's and those waiting in libuv. */
  get pendingBytes(): number {
    const buffered = this.socket.writableLength;
    if (this.waiting === 0) return buffered;
    return buffered + (this.handle()?.writeQueueSize ?? 0);
  }

  /** The client does not read: stop reading its requests until what was written is written. */
  get needsDrain(): boolean {
    return this.blocked || this.socket.writableNeedDrain;
  }

  write(data: Buffer, done?: Done): boolean {
    if (this.corks > 0) {
      this.held!.push(data);
      this.heldDone!.push(done);
      return true;
    }
    const handle = this.directHandle();
    if (handle === undefined) return this.socket.write(data, done);
    const req = this.spare ?? newRequest();
    this.spare = undefined;
    return this.dispatched(req, handle, handle.writeBuffer(req, data), data, done);
  }

  cork(): void {
    if (!this.direct) return void this.socket.cork();
    if (this.corks++ === 0) {
      this.held = [];
      this.heldDone = [];
    }
  }

  uncork(): void {
    if (!this.direct) return void this.socket.uncork();
    if (this.corks === 0 || --this.corks > 0) return;
    const chunks = this.held!;
    const dones = this.heldDone!;
    this.held = this.heldDone = undefined;
    if (chunks.length === 1) return void this.write(chunks[0], dones[0]);
    if (chunks.length === 0) return;
    const handle = this.directHandle();
    if (handle === undefined) {
      this.socket.cork();
      for (let i = 0; i < chunks.length; i++) this.socket.write(chunks[i], dones[i]);
      this.socket.uncork();
      return;
    }
    const req = this.spare ?? newRequest();
    this.spare = undefined;
    this.dispatched(req, handle, handle.writev(req, chunks, true), chunks, dones);
  }

  end(done: () => void): unknown {
    // libuv shuts the socket down only after the writes waiting in its queue (uv_shutdown), so the
    // Writable's 'finish' still comes after the last direct write.
    return this.socket.end(done);
  }

  resume(): unknown {
    return this.socket.resume();
  }

  destroy(): unknown {
    return this.socket.destroy();
  }

  /** A direct write's whole outcome. */
  completed(status: number, done: Done | Done[] | undefined): void {
    this.waiting--;
    if (status < 0) {
      const err = writeError(status);
      if (!this.socket.destroyed) this.socket.destroy(err);
      callDone(done, err);
      return;
    }
    callDone(done, null);
    if (this.waiting === 0 && this.blocked) {
      this.blocked = false;
      this.owner.outputDrained();
    }
  }

  private handle(): StreamHandle | undefined {
    return (this.socket as unknown as { _handle?: StreamHandle | null })._handle ?? undefined;
  }

  /** The handle when this write may go to it (see the top of the file), else undefined. */
  private directHandle(): StreamHandle | undefined {
    const s = this.socket;
    if (!this.direct || s.writableLength !== 0 || s.writableCorked !== 0 || s.writableEnded || s.destroyed || s.timeout) {
      return undefined;
    }
    return this.handle();
  }

  /** After handle.writeBuffer / writev: done now, waiting in libuv, or failed. */
  private dispatched(req: WriteReq, handle: StreamHandle, err: number, data: Buffer | Buffer[], done: Done | Done[] | undefined): boolean {
    if (err !== 0) {
      // Like the Writable: the callback gets the error and the socket is destroyed with it.
      const error = writeError(err);
      this.socket.destroy(error);
      callDone(done, error);
      return false;
    }
    if (binding!.streamBaseState[binding!.kLastWriteWasAsync] === 0) {
      this.spare = req; // never bound in C++: free for the next write
      callDone(done, null);
      return true;
    }
    req.output = this;
    req.buffer = data;
    req.done = done;
    this.waiting++;
    if (handle.writeQueueSize >= this.socket.writableHighWaterMark) this.blocked = true;
    return !this.blocked;
  }
}
