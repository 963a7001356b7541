// The hot-path splitter of upstream answers: cuts the bytes of a /pipeline answer into its replies and
// checks, in the same walk, that each is RESP2. The upstream promises RESP2 (Upstash-Response-Format:
// resp2). A reply that is not RESP2 (an unknown type byte, RESP3 types, a bad length) must never reach
// a client that trusts the proxy to speak the protocol: the reader of the client would desynchronize.
// reply-scanner.ts splitReplies splits any RESP without this check.
import { splitBy } from './reply-scanner.js';

const CR = 13;

/** Whether `reply` is one complete RESP2 reply and nothing else. */
export function isResp2(reply: Buffer): boolean {
  return resp2End(reply, 0) === reply.length;
}

/**
 * The `count` replies of an upstream answer, one view each, when every one is RESP2 and nothing
 * follows the last; undefined otherwise (the caller then finds out what is wrong). One walk per reply
 * both finds its end and checks it, instead of scanReply and then isResp2 over each reply.
 */
export function splitResp2Replies(body: Buffer, count: number): Buffer[] | undefined {
  return splitBy(body, count, resp2End);
}

/**
 * An upstream answer and where its replies end: reply i is bytes [i === 0 ? 0 : ends[i - 1], ends[i])
 * of `body`. The proxy hands the common answer on like this instead of as a view per reply (issue 25).
 */
export interface SplitAnswer {
  readonly body: Buffer;
  readonly ends: number[];
}

/** Whether an answer came as ranges (SplitAnswer) rather than as a reply each. */
export function isSplitAnswer<T>(replies: readonly T[] | SplitAnswer): replies is SplitAnswer {
  return !Array.isArray(replies);
}

/** The length of reply i of an answer as ranges. */
export function rangeLength(ends: readonly number[], i: number): number {
  return ends[i] - (i === 0 ? 0 : ends[i - 1]);
}

/**
 * The `count` replies of an upstream answer as ranges, when every one is RESP2 and none is an error
 * reply (errors go the way of views: observers may rewrite them in place); undefined otherwise.
 */
export function splitResp2Ranges(body: Buffer, count: number): SplitAnswer | undefined {
  const ends = new Array<number>(count);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    if (body[pos] === 0x2d) return undefined;
    const next = resp2End(body, pos);
    if (next < 0) return undefined;
    ends[i] = next;
    pos = next;
  }
  return pos === body.length ? { body, ends } : undefined;
}

/** The offset just past the RESP2 reply that starts at `start`, or -1 when it is not RESP2 or not complete. */
export function resp2End(buf: Buffer, start: number): number {
  let pos = start;
  let pending = 1;
  while (pending > 0) {
    if (pos >= buf.length) return -1;
    const type = buf[pos];
    const lineEnd = crAfter(buf, pos + 1);
    if (lineEnd < 0 || buf[lineEnd + 1] !== 10) return -1;
    pending--;
    switch (type) {
      case 0x2b /* + */:
      case 0x2d /* - */:
        pos = lineEnd + 2;
        break;
      case 0x3a /* : */:
        if (!isInteger(buf, pos + 1, lineEnd)) return -1;
        pos = lineEnd + 2;
        break;
      case 0x24 /* $ */:
      case 0x2a /* * */: {
        const n = lengthOf(buf, pos + 1, lineEnd);
        if (n === INVALID) return -1;
        pos = lineEnd + 2;
        if (type === 0x24) {
          if (n >= 0) {
            if (buf[pos + n] !== CR || buf[pos + n + 1] !== 10) return -1;
            pos += n + 2;
          }
        } else if (n > 0) {
          pending += n;
        }
        break;
      }
      default:
        return -1;
    }
  }
  return pos;
}

const INVALID = -2;

/**
 * The first CR at or after `from`, or -1: what buf.indexOf(CR, from) answers, as a byte loop. The
 * lines of a reply are short (`$3`, `:42`, `+OK`), and indexOf is a call into C++ per line, which cost
 * more than the rest of the walk: ~100 of them per LRANGE 0 99 reply (bench/README.md, issue 25).
 */
function crAfter(buf: Buffer, from: number): number {
  const n = buf.length;
  for (let i = from; i < n; i++) if (buf[i] === CR) return i;
  return -1;
}

/** `-?[0-9]+` between `from` and `to`. A byte loop: a regular expression over a latin1 copy cost more than the rest of the check. */
function isInteger(buf: Buffer, from: number, to: number): boolean {
  if (buf[from] === 0x2d) from++;
  if (from >= to) return false;
  for (let i = from; i < to; i++) if (buf[i] < 0x30 || buf[i] > 0x39) return false;
  return true;
}

/** A length `-1` or `[0-9]+` between `from` and `to`: its value, or INVALID. */
function lengthOf(buf: Buffer, from: number, to: number): number {
  if (to - from === 2 && buf[from] === 0x2d && buf[from + 1] === 0x31) return -1;
  if (from >= to) return INVALID;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = buf[i] - 0x30;
    if (d < 0 || d > 9) return INVALID;
    n = n * 10 + d;
  }
  return n;
}
