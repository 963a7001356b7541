// Writing replies to a client socket. When nothing is queued on the socket, a reply is handed to
// the socket's handle directly (the write libuv tries at once), below net.Socket's Writable stream:
// per write that skips the Writable's bookkeeping, its WriteWrap callback and the nextTick of
// afterWrite, about 0.5-0.9 µs per write in a bare echo server (bench/echo-read-modes.ts) and a few
// percent of the proxy's CPU per command at -P 1 (bench/README.md, issue 14). Everything else goes
// through socket.write as before: a large reply, a socket with bytes still queued, TLS, or a Node
// without the handle API. Order is kept because libuv queues writes on a handle in the order they are
// made, and a direct write is only made when no earlier write is waiting anywhere.
//
// Backpressure and the output limit see the bytes of a direct write the kernel has not taken yet
// (`unwrittenBytes`, `needsDrain`), and `drained` is called when it is taken, like the 'drain' event.
import type net from 'node:net';

interface WriteHandle {
  writeBuffer(req: WriteRequest, data: Buffer): number;
}

interface WriteRequest {
  handle: WriteHandle;
  oncomplete: (this: WriteRequest, status: number) => void;
  async: boolean;
  output: SocketOutput;
}

interface StreamWrapBinding {
  WriteWrap: new () => WriteRequest;
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
}

/** Node's stream_wrap binding (the one net.Socket writes with), when this Node offers it. */
const streamWrap = loadStreamWrap();

/** Larger writes go through socket.write, so the output limit counts them before they are taken. */
const DIRECT_MAX_BYTES = 64 * 1024;

export class SocketOutput {
  /** The handle written to directly; undefined: always socket.write. */
  private readonly handle: WriteHandle | undefined;
  /** Bytes of a direct write that libuv still holds (the kernel took part of it): 0 when none. */
  private queued = 0;
  /** Bytes written directly (socket.bytesWritten counts only its own writes). */
  private directBytes = 0;

  constructor(
    private readonly socket: net.Socket,
    /** Called once a direct write that had to wait is taken by the kernel. */
    private readonly drained: () => void,
  ) {
    const handle = (socket as unknown as { _handle?: Partial<WriteHandle> })._handle;
    const plain = !(socket as { encrypted?: boolean }).encrypted && typeof handle?.writeBuffer === 'function';
    this.handle = streamWrap && plain ? (handle as WriteHandle) : undefined;
  }

  write(data: Buffer): void {
    const socket = this.socket;
    const handle = this.handle;
    if (
      handle === undefined ||
      this.queued > 0 ||
      data.length > DIRECT_MAX_BYTES ||
      socket.writableLength > 0 ||
      socket.writableEnded ||
      (socket as unknown as { _handle?: unknown })._handle !== handle
    ) {
      socket.write(data);
      return;
    }
    const req = new streamWrap!.WriteWrap();
    req.handle = handle;
    req.oncomplete = directWriteDone;
    req.async = false;
    req.output = this;
    const status = handle.writeBuffer(req, data);
    if (status !== 0) {
      socket.destroy(new Error(`write failed (libuv status ${status})`));
      return;
    }
    this.directBytes += data.length;
    if (streamWrap!.streamBaseState[streamWrap!.kLastWriteWasAsync] !== 0) this.queued = data.length;
  }

  /** Bytes written and not yet taken by the kernel (the output limit). */
  get unwrittenBytes(): number {
    return this.socket.writableLength + this.queued;
  }

  /** True while written bytes wait for the client to read (reading stops until `drained`/'drain'). */
  get needsDrain(): boolean {
    return this.queued > 0 || this.socket.writableNeedDrain;
  }

  /** Bytes written to the client so far (INFO total_net_output_bytes). */
  get bytesWritten(): number {
    return this.socket.bytesWritten + this.directBytes;
  }

  /** A direct write that had to wait is done (status < 0: it failed, the socket is closed). */
  completed(status: number): void {
    this.queued = 0;
    if (status < 0) this.socket.destroy(new Error(`write failed (libuv status ${status})`));
    else this.drained();
  }
}

function directWriteDone(this: WriteRequest, status: number): void {
  this.output.completed(status);
}

function loadStreamWrap(): StreamWrapBinding | undefined {
  try {
    const binding = (process as unknown as { binding(name: string): Partial<StreamWrapBinding> }).binding('stream_wrap');
    const { WriteWrap, streamBaseState, kLastWriteWasAsync } = binding;
    if (typeof WriteWrap !== 'function' || !(streamBaseState instanceof Int32Array) || typeof kLastWriteWasAsync !== 'number')
      return undefined;
    return { WriteWrap, streamBaseState, kLastWriteWasAsync };
  } catch {
    return undefined;
  }
}
