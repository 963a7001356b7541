// A Buffer over part of another Buffer's memory (a request argument, one reply of an upstream
// answer), made without Buffer#subarray: subarray goes through the typed-array species lookup and
// cost 55-90 ns per view against ~22 ns for constructing the view directly (node 20, measured in a
// loop of 5 million views). The proxy makes one view per argument and one per reply, so at -P 16 this
// is a few percent of its CPU per command (bench/cpu-per-command.ts, issue 14).
//
// The views are Buffers in every respect that matters: Buffer.isBuffer() is true and every Buffer
// method works, because their class has Buffer.prototype above it, as Node's own FastBuffer does.

class BufferView extends Uint8Array {}
Object.setPrototypeOf(BufferView.prototype, Buffer.prototype);
// As on Node's FastBuffer.prototype: `constructor` is Buffer, so `view.constructor === Buffer`, and
// subarray()/slice() of a view make ordinary Buffers (Buffer's species).
Object.defineProperty(BufferView.prototype, 'constructor', { value: Buffer, writable: true, configurable: true });

/**
 * Bytes [start, end) of a Buffer whose `buffer` and `byteOffset` are `memory` and `byteOffset`,
 * sharing its memory like `buf.subarray(start, end)`. Callers read `buf.buffer` once per Buffer: that
 * getter costs as much as the view itself.
 */
export function viewOf(memory: ArrayBufferLike, byteOffset: number, start: number, end: number): Buffer {
  return new BufferView(memory as ArrayBuffer, byteOffset + start, end - start) as unknown as Buffer;
}
