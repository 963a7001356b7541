// Finds reply boundaries in RESP bytes without decoding values: the hot path passes upstream
// reply bytes through untouched, so all it needs is where each reply ends.

import { viewOf } from './buffer-view.js';

const CR = 13;

/**
 * Scans one complete reply (RESP2 or RESP3) starting at `start`.
 * Returns the offset just past it, or, when the bytes are incomplete, a negative number whose
 * absolute value is a lower bound of the total buffer length needed (so callers can wait for that
 * many bytes instead of rescanning after every small chunk).
 */
export function scanReply(buf: Buffer, start: number): number {
  let pos = start;
  let pending = 1;
  const end = buf.length;
  while (pending > 0) {
    if (pos >= end) return -(pos + 1);
    const type = buf[pos];
    const lineEnd = buf.indexOf(CR, pos + 1);
    // The line is not complete: one more byte at least, and a line is at least 3 bytes (`_\r\n`).
    if (lineEnd < 0 || lineEnd + 1 >= end) return -Math.max(end + 1, pos + 3);
    pending--;
    switch (type) {
      case 0x24 /* $ */:
      case 0x3d /* = verbatim */:
      case 0x21 /* ! blob error */: {
        const len = parseLength(buf, pos + 1, lineEnd);
        pos = lineEnd + 2;
        if (len >= 0) {
          const next = pos + len + 2;
          if (next > end) return -next;
          pos = next;
        }
        break;
      }
      case 0x2a /* * */:
      case 0x7e /* ~ set */:
      case 0x3e /* > push */: {
        const n = parseLength(buf, pos + 1, lineEnd);
        if (n > 0) pending += n;
        pos = lineEnd + 2;
        break;
      }
      case 0x25 /* % map */: {
        const n = parseLength(buf, pos + 1, lineEnd);
        if (n > 0) pending += 2 * n;
        pos = lineEnd + 2;
        break;
      }
      case 0x7c /* | attribute: a map, then the reply it annotates */: {
        const n = parseLength(buf, pos + 1, lineEnd);
        pending += 2 * Math.max(n, 0) + 1;
        pos = lineEnd + 2;
        break;
      }
      default:
        // + - : , # _ ( : single-line replies
        pos = lineEnd + 2;
    }
  }
  return pos;
}

/** Parses the signed decimal between `from` and `to` (exclusive); malformed digits count as -1. */
export function parseLength(buf: Buffer, from: number, to: number): number {
  let i = from;
  let negative = false;
  if (buf[i] === 0x2d) {
    negative = true;
    i++;
  }
  if (i >= to) return -1;
  let n = 0;
  for (; i < to; i++) {
    const d = buf[i] - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

/** Splits a buffer that holds exactly `count` complete replies into one slice per reply. */
export function splitReplies(buf: Buffer, count: number): Buffer[] | undefined {
  return splitBy(buf, count, scanReply);
}

/**
 * Splits `buf` into exactly `count` replies, one view each, where `endOf(buf, start)` is the offset just
 * past the reply at `start` (negative: none there); undefined when that fails or bytes are left over.
 */
export function splitBy(buf: Buffer, count: number, endOf: (buf: Buffer, start: number) => number): Buffer[] | undefined {
  const out = new Array<Buffer>(count);
  const memory = buf.buffer;
  const offset = buf.byteOffset;
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const next = endOf(buf, pos);
    if (next < 0) return undefined;
    out[i] = viewOf(memory, offset, pos, next);
    pos = next;
  }
  return pos === buf.length ? out : undefined;
}

/** The elements of one complete array reply (`*N…`), as raw replies; undefined for any other reply. */
export function arrayElements(reply: Buffer): Buffer[] | undefined {
  if (reply[0] !== 0x2a) return undefined;
  const headerEnd = reply.indexOf(13);
  const count = parseLength(reply, 1, headerEnd);
  if (count < 0) return undefined;
  const out = new Array<Buffer>(count);
  const memory = reply.buffer;
  const offset = reply.byteOffset;
  let pos = headerEnd + 2;
  for (let i = 0; i < count; i++) {
    const end = scanReply(reply, pos);
    out[i] = viewOf(memory, offset, pos, end);
    pos = end;
  }
  return out;
}

/** Why `body` is not `count` complete replies, in words (for an error about a malformed answer). */
export function describeReplies(body: Buffer, count: number): string {
  let pos = 0;
  let found = 0;
  while (pos < body.length) {
    const next = scanReply(body, pos);
    if (next < 0) return `${found} complete replies then an incomplete one, for ${count} commands`;
    found++;
    pos = next;
  }
  return `${found} replies for ${count} commands`;
}
