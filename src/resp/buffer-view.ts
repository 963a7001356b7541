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

/**
 * The answer whose memory rangeView read last. `buffer` and `byteOffset` are getters that cost as much as
 * the view: at -P 1 every connection writes its one range of the same upstream answer alone, one after
 * another. Process-wide like the reader's name spellings: a memo of bytes, no connection's state.
 */
let lastAnswer: Buffer | undefined;
let lastMemory: ArrayBufferLike = new ArrayBuffer(0);
let lastOffset = 0;

/**
 * Bytes [start, end) of `answer` as a view (a reply written alone, or a long range). An answer of
 * `keepBelow` bytes or more is not remembered (a large answer is not kept alive after its write; small
 * ones live in the upstream's 64 KiB read slabs).
 */
export function rangeView(answer: Buffer, start: number, end: number, keepBelow: number): Buffer {
  if (answer.length >= keepBelow) return viewOf(answer.buffer, answer.byteOffset, start, end);
  if (answer !== lastAnswer) {
    lastAnswer = answer;
    lastMemory = answer.buffer;
    lastOffset = answer.byteOffset;
  }
  return viewOf(lastMemory, lastOffset, start, end);
}
