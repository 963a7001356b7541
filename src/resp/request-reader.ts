// Streaming reader of client requests, byte-for-byte like Redis 7.0 networking.c
// (processInputBuffer / processInlineBuffer / processMultibulkBuffer): same framing, same limits, same
// error texts, same quirks (strchr stops at a NUL byte, the 2 bytes after a bulk are not checked).

// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import { string2ll } from './args.js';
import { viewOf } from './buffer-view.js';
import { largeBuffers } from './large-buffers.js';
import { NameCache } from './name-cache.js';

export interface ReaderLimits {
  /** proto-max-bulk-len: largest bulk argument. Redis default 512 MB. */
  maxBulkLength: number;
  /** PROTO_INLINE_MAX_SIZE: bytes buffered without a line end before "too big" errors. 64 KB. */
  maxInlineLength: number;
}

export type ReadResult =
  | { kind: 'command'; args: Buffer[]; inline: boolean }
  | {
      kind: 'protocol-error';
      /** e.g. "ERR Protocol error: invalid bulk length" (no leading '-'); one char per byte (latin1). */
      message: string;
      /** The exact reply Redis sends before closing: `-<message>\r\n`. */
      reply: Buffer;
    };

export const DEFAULT_READER_LIMITS: Readonly<ReaderLimits> = Object.freeze({
  maxBulkLength: 512 * 1024 * 1024,
  maxInlineLength: 64 * 1024,
});

const INT_MAX = 2147483647;
/** Redis' limits before AUTH (CVE-2021-32675): 10 arguments of 16 KB. */
const UNAUTH_MAX_MULTIBULK = 10;
const UNAUTH_MAX_BULK = 16384;
/** PROTO_MBULK_BIG_ARG: a bulk this large that is not fully buffered gets its own exact-size buffer. */
const BIG_ARG = 32 * 1024;
/**
 * The bytes of a request's first argument (its command name) as clients spelled them: one Buffer each,
 * shared by every request that spells it so. Arguments are never written to, so sharing is safe; the
 * cache holds copies, not views, so it keeps no client's input buffer alive.
 */
const SPELLINGS = new NameCache<Buffer>((name) => Buffer.from(name, 'latin1'));
/** Longer first arguments are views like the others (no command name is this long). */
const MAX_SHARED_NAME = 32;
/** Up to this many arguments, a request's argument array is made at its size when its count is read. */
const PRESIZED_ARGS = 64;

const CR = 13;
const LF = 10;
const STAR = 42;
const DOLLAR = 36;
const MINUS = 45;

const enum ReqType {
  Unknown,
  Inline,
  Multibulk,
}

/** Returned by the step functions when a complete but empty request was consumed (ignored like Redis). */
const EMPTY = 'empty' as const;

const EMPTY_BUFFER = Buffer.alloc(0);
/** No request being read: never written to (a request's count line gives it an array of its own). */
const NO_ARGS: Buffer[] = [];

export class RequestReader {
  /** When false, Redis' unauthenticated limits apply (multibulk count > 10, bulk > 16384). */
  authenticated = true;

  private readonly limits: ReaderLimits;

  // Unread input is buf[start, end). When `owned`, buf is ours and bytes past `end` may be written;
  // bytes before `end` are never rewritten, so arguments handed out as subarrays stay valid.
  private buf: Buffer = EMPTY_BUFFER;
  // buf.buffer and buf.byteOffset, read once per buffer: arguments are views made from them (buffer-view.ts).
  private memory: ArrayBufferLike = EMPTY_BUFFER.buffer;
  private memoryOffset = EMPTY_BUFFER.byteOffset;
  private start = 0;
  private end = 0;
  private owned = false;

  // State of the request being parsed (Redis' reqtype, multibulklen, bulklen, argv).
  private reqType = ReqType.Unknown;
  private multibulkLeft = 0;
  private bulkLen = -1;
  /** The arguments of the request being read (a new array per request; NO_ARGS between requests). */
  private args: Buffer[] = NO_ARGS;
  /** Arguments of the request being read that are in `args` already. */
  private argCount = 0;
  private argBytes = 0;

  // A large bulk being received straight into its own buffer (Redis' big-arg path).
  private big: Buffer | null = null;
  private bigFill = 0;

  // Line search memo, valid while start === memoStart: bytes already known to hold neither the line
  // terminator nor a NUL, or `memoBlocked` when a NUL comes first (Redis' strchr never gets past it).
  private memoStart = -1;
  private memoScanned = 0;
  private memoBlocked = false;

  private failed = false;
  /** The command name of the last request (nameAt). */
  private lastName: Buffer | undefined = undefined;

  constructor(limits?: Partial<ReaderLimits>) {
    this.limits = { ...DEFAULT_READER_LIMITS, ...limits };
  }

  private setBuffer(buf: Buffer): void {
    this.buf = buf;
    this.memory = buf.buffer;
    this.memoryOffset = buf.byteOffset;
  }

  /** Bytes held for requests not yet returned: unparsed input plus arguments of a partial command. */
  get bufferedBytes(): number {
    return this.end - this.start + this.argBytes + this.bigFill;
  }

  /** Appends received bytes. The reader keeps a reference to `chunk`: do not modify it afterwards. */
  push(chunk: Buffer): void {
    if (this.failed || chunk.length === 0) return;
    if (this.big !== null) {
      const n = Math.min(chunk.length, this.big.length - this.bigFill);
      chunk.copy(this.big, this.bigFill, 0, n);
      this.bigFill += n;
      if (n === chunk.length) return;
      chunk = chunk.subarray(n);
    }
    const pending = this.end - this.start;
    if (pending === 0) {
      // Common case: everything before was consumed; adopt the chunk without copying.
      this.setBuffer(chunk);
      this.start = 0;
      this.end = chunk.length;
      this.owned = false;
      this.memoStart = -1;
      return;
    }
    if (this.owned && this.buf.length - this.end >= chunk.length) {
      chunk.copy(this.buf, this.end);
      this.end += chunk.length;
      return;
    }
    // Move the unread tail and the chunk into a new buffer with room to grow geometrically, so that
    // many small pushes (a slow client, byte-at-a-time tests) cost linear time.
    const need = pending + chunk.length;
    const next = Buffer.allocUnsafe(Math.max(need + pending, 4096));
    this.buf.copy(next, 0, this.start, this.end);
    chunk.copy(next, pending);
    if (this.memoStart === this.start) this.memoStart = 0;
    else this.memoStart = -1;
    this.setBuffer(next);
    this.start = 0;
    this.end = need;
    this.owned = true;
  }

  /**
   * Like push, for bytes that are only lent for this call (a shared read buffer): the part that
   * continues a large bulk is copied straight into its buffer, the rest into a Buffer of its own.
   */
  pushShared(bytes: Buffer): void {
    if (this.failed || bytes.length === 0) return;
    if (this.big !== null) {
      const n = Math.min(bytes.length, this.big.length - this.bigFill);
      bytes.copy(this.big, this.bigFill, 0, n);
      this.bigFill += n;
      if (n === bytes.length) return;
      bytes = bytes.subarray(n);
    }
    if (this.owned && this.end > this.start && this.buf.length - this.end >= bytes.length) {
      bytes.copy(this.buf, this.end);
      this.end += bytes.length;
      return;
    }
    const own = Buffer.allocUnsafe(bytes.length);
    bytes.copy(own, 0);
    this.push(own);
  }

  /** Next complete request, or undefined when more bytes are needed. Nothing more after a protocol error. */
  read(): ReadResult | undefined {
    while (!this.failed) {
      let r: ReadResult | typeof EMPTY | undefined;
      if (this.reqType === ReqType.Unknown) {
        if (this.start >= this.end) return undefined;
        this.reqType = this.buf[this.start] === STAR ? ReqType.Multibulk : ReqType.Inline;
      }
      if (this.reqType === ReqType.Inline) r = this.readInline();
      else r = this.readMultibulk();
      if (r === undefined) return undefined;
      this.reqType = ReqType.Unknown;
      if (r !== EMPTY) return r;
    }
    return undefined;
  }

  // processInlineBuffer: one line split like sdssplitargs.
  private readInline(): ReadResult | typeof EMPTY | undefined {
    const nl = this.findByte(LF);
    if (nl < 0) {
      if (this.end - this.start > this.limits.maxInlineLength) {
        return this.fail('ERR Protocol error: too big inline request');
      }
      return undefined;
    }
    let lineEnd = nl;
    if (nl > this.start && this.buf[nl - 1] === CR) lineEnd--;
    const args = splitInlineArgs(this.buf, this.start, lineEnd);
    if (args === null) return this.fail('ERR Protocol error: unbalanced quotes in request');
    this.start = nl + 1;
    if (args.length === 0) return EMPTY;
    return { kind: 'command', args, inline: true };
  }

  // processMultibulkBuffer: "*<count>\r\n" then count times "$<len>\r\n<payload>\r\n".
  private readMultibulk(): ReadResult | typeof EMPTY | undefined {
    if (this.multibulkLeft === 0) {
      const whole = this.readWhole();
      if (whole !== undefined) return { kind: 'command', args: whole, inline: false };
      const count = this.readNumberLine();
      if (count === NEED_MORE) {
        if (this.end - this.start > this.limits.maxInlineLength) {
          return this.fail('ERR Protocol error: too big mbulk count string');
        }
        return undefined;
      }
      if (Number.isNaN(count) || count > INT_MAX) {
        return this.fail('ERR Protocol error: invalid multibulk length');
      }
      if (count > UNAUTH_MAX_MULTIBULK && !this.authenticated) {
        return this.fail('ERR Protocol error: unauthenticated multibulk length');
      }
      this.start = this.lineNext;
      if (count <= 0) return EMPTY; // "*0" and negative counts are ignored
      this.multibulkLeft = count;
      this.bulkLen = -1;
      // An array of the exact size for the usual few arguments: pushing into [] gives it room for 16
      // (~150 bytes per command of garbage at -P 16); a huge announced count is not trusted in advance.
      this.args = count <= PRESIZED_ARGS ? new Array<Buffer>(count) : [];
    }

    while (this.multibulkLeft > 0) {
      if (this.big !== null) {
        // A large bulk is being filled in push(); then its 2 trailing bytes come from the window.
        if (this.bigFill < this.big.length || this.end - this.start < 2) return undefined;
        this.start += 2;
        this.addArg(this.big);
        this.big = null;
        this.bigFill = 0;
        continue;
      }
      if (this.bulkLen === -1) {
        const len = this.readNumberLine();
        if (len === NEED_MORE) {
          if (this.end - this.start > this.limits.maxInlineLength) {
            return this.fail('ERR Protocol error: too big bulk count string');
          }
          return undefined;
        }
        const first = this.buf[this.start];
        if (first !== DOLLAR) {
          // Redis maps CR and LF in error texts to spaces.
          const shown = first === CR || first === LF ? 32 : first;
          return this.fail(`ERR Protocol error: expected '$', got '${String.fromCharCode(shown)}'`);
        }
        if (Number.isNaN(len) || len < 0 || len > this.limits.maxBulkLength) {
          return this.fail('ERR Protocol error: invalid bulk length');
        }
        if (len > UNAUTH_MAX_BULK && !this.authenticated) {
          return this.fail('ERR Protocol error: unauthenticated bulk length');
        }
        this.start = this.lineNext;
        this.bulkLen = len;
      }
      const have = this.end - this.start;
      if (have < this.bulkLen + 2) {
        // Allocated once payload bytes arrive, so a bare header costs nothing.
        if (this.bulkLen >= BIG_ARG && have > 0 && have < this.bulkLen) this.startBigArg();
        return undefined;
      }
      // The 2 bytes after the payload are skipped unchecked, as in Redis.
      const argStart = this.start;
      const argEnd = argStart + this.bulkLen;
      this.start = argEnd + 2;
      // A command's name is one shared Buffer per spelling: clients repeat a few, and a view per command
      // was ~100 bytes of garbage each (a fifth of what the proxy allocates per GET at -P 16).
      const named = this.argCount === 0 && this.bulkLen <= MAX_SHARED_NAME;
      this.addArg(named ? this.nameAt(argStart, argEnd) : viewOf(this.memory, this.memoryOffset, argStart, argEnd));
    }

    const args = this.args;
    this.args = NO_ARGS;
    this.argBytes = 0;
    this.argCount = 0;
    return { kind: 'command', args, inline: false };
  }

  /**
   * The usual request in one go: all of it buffered, its count and lengths plain digits within the
   * limits. Parsed with local variables only and committed at the end (the general path below keeps
   * its state in fields, argument by argument, so that it can stop anywhere: at -P 16 that bookkeeping
   * was most of the reader's time). Undefined when anything is unusual or missing: nothing has changed
   * then, and the general path reads the same request from its start, with Redis' exact errors.
   */
  private readWhole(): Buffer[] | undefined {
    const buf = this.buf;
    const end = this.end;
    // "*<count>\r" and one more byte; a count of 1-64 (PRESIZED_ARGS), no sign, no leading zero.
    let p = this.start + 1;
    if (p + 2 >= end) return undefined;
    let count = buf[p++] - 48;
    if (count < 1 || count > 9) return undefined;
    let c = buf[p];
    if (c !== CR) {
      if (c < 48 || c > 57) return undefined;
      count = count * 10 + (c - 48);
      if (count > PRESIZED_ARGS || ++p + 1 >= end || buf[p] !== CR) return undefined;
    }
    if (count > UNAUTH_MAX_MULTIBULK && !this.authenticated) return undefined;
    p += 2;
    const maxBulk = this.authenticated ? this.limits.maxBulkLength : Math.min(UNAUTH_MAX_BULK, this.limits.maxBulkLength);
    const args = new Array<Buffer>(count);
    for (let k = 0; k < count; k++) {
      // "$<len>\r" and one more byte; len of 1-9 digits, no leading zero except "0" itself.
      if (p + 3 >= end || buf[p] !== DOLLAR) return undefined;
      const digitsStart = ++p;
      let len = 0;
      const limit = Math.min(end, digitsStart + 9);
      while (p < limit) {
        c = buf[p];
        if (c < 48 || c > 57) break;
        len = len * 10 + (c - 48);
        p++;
      }
      const nd = p - digitsStart;
      if (nd === 0 || p + 1 >= end || buf[p] !== CR || (nd > 1 && buf[digitsStart] === 48) || len > maxBulk) return undefined;
      const argStart = p + 2;
      const argEnd = argStart + len;
      // The payload and the 2 bytes after it (skipped unchecked, as in Redis).
      if (argEnd + 2 > end) return undefined;
      args[k] =
        k === 0 && len <= MAX_SHARED_NAME ? this.nameAt(argStart, argEnd) : viewOf(this.memory, this.memoryOffset, argStart, argEnd);
      p = argEnd + 2;
    }
    this.start = p;
    return args;
  }

  /**
   * The shared Buffer of the command name in buf[start, end): the last one again when the bytes match it
   * (a pipeline repeats its command), else SPELLINGS' (a hash of the bytes).
   */
  private nameAt(start: number, end: number): Buffer {
    const last = this.lastName;
    const len = end - start;
    if (last !== undefined && last.length === len) {
      const buf = this.buf;
      let k = 0;
      while (k < len && last[k] === buf[start + k]) k++;
      if (k === len) return last;
    }
    return (this.lastName = SPELLINGS.get(this.buf, start, end));
  }

  private addArg(arg: Buffer): void {
    this.args[this.argCount++] = arg;
    this.argBytes += arg.length;
    this.bulkLen = -1;
    this.multibulkLeft--;
  }

  /** Gives the pending bulk an exact-size buffer so the rest of it is copied once, not re-buffered. */
  private startBigArg(): void {
    // From the pool of large values: the batcher gives it back once the command is answered.
    const big = largeBuffers.take(this.bulkLen);
    const n = Math.min(this.end - this.start, this.bulkLen);
    this.buf.copy(big, 0, this.start, this.start + n);
    this.start += n;
    this.big = big;
    this.bigFill = n;
  }

  private lineNext = 0;

  /**
   * Parses the number of a "*<n>\r\n" or "$<n>\r\n" line starting at `start` (the type byte is not
   * checked here). Returns the value (NaN when Redis' string2ll rejects it) and sets `lineNext` to the
   * index after the line, or NEED_MORE when the line is not complete yet.
   */
  private readNumberLine(): number {
    const buf = this.buf;
    const end = this.end;
    // Fast path: plain digits (no leading zero, at most 15) then CR and one more byte.
    let i = this.start + 1;
    const neg = i < end && buf[i] === MINUS;
    if (neg) i++;
    const digitsStart = i;
    // Bounded, so that a long junk line arriving byte by byte is left to the memoized search below.
    const limit = Math.min(end, digitsStart + 16);
    let v = 0;
    while (i < limit) {
      const c = buf[i];
      if (c < 48 || c > 57) break;
      v = v * 10 + (c - 48);
      i++;
    }
    const nd = i - digitsStart;
    // (A NUL type byte is left to the exact path: Redis' strchr stops at it and waits for more.)
    if (i + 1 < end && buf[this.start] !== 0 && buf[i] === CR && nd > 0 && nd <= 15 && (buf[digitsStart] !== 48 || (nd === 1 && !neg))) {
      this.lineNext = i + 2;
      return neg ? -v : v;
    }
    // Exact path: Redis finds the line with strchr(p, '\r') and needs one byte after the CR.
    const cr = this.findByte(CR);
    if (cr < 0 || cr + 1 >= end) return NEED_MORE;
    this.lineNext = cr + 2;
    return string2ll(buf, this.start + 1, cr);
  }

  /**
   * Like strchr(buf + start, byte) over the unread bytes: the index of the first `byte`, or -1 when the
   * end of the input or a NUL byte comes first. Remembers how far it looked so that a line arriving
   * one byte at a time is scanned once.
   */
  private findByte(byte: number): number {
    if (this.memoStart !== this.start) {
      this.memoStart = this.start;
      this.memoScanned = 0;
      this.memoBlocked = false;
    }
    if (this.memoBlocked) return -1;
    const from = this.start + this.memoScanned;
    const window = this.buf.subarray(from, this.end);
    const at = window.indexOf(byte);
    const nul = (at < 0 ? window : window.subarray(0, at)).indexOf(0);
    if (nul >= 0) {
      this.memoBlocked = true;
      return -1;
    }
    if (at < 0) {
      this.memoScanned = this.end - this.start;
      return -1;
    }
    return from + at;
  }

  private fail(message: string): ReadResult {
    this.failed = true;
    // Drop everything: Redis closes the connection after the error reply.
    this.setBuffer(EMPTY_BUFFER);
    this.start = this.end = 0;
    this.args = NO_ARGS;
    this.argCount = 0;
    this.argBytes = 0;
    this.big = null;
    this.bigFill = 0;
    return { kind: 'protocol-error', message, reply: Buffer.from(`-${message}\r\n`, 'latin1') };
  }
}

const NEED_MORE = -Infinity;

/** C isspace() in the "C" locale. */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * sdssplitargs over buf[s, e) (which holds no NUL: the line search stops at one). Returns null for
 * unbalanced quotes, like Redis. Double quotes know \xHH, \n \r \t \b \a and \<any>; single quotes only
 * \'. A closing quote must be followed by a space or the end of the line.
 */
export function splitInlineArgs(buf: Buffer, s: number, e: number): Buffer[] | null {
  // at(i) is the C string's byte: 0 past the end of the line.
  const at = (i: number): number => (i < e ? buf[i] : 0);
  const args: Buffer[] = [];
  let p = s;
  for (;;) {
    while (p < e && isSpace(buf[p])) p++;
    if (p >= e) return args;
    const cur: number[] = [];
    let inq = false;
    let insq = false;
    let done = false;
    while (!done) {
      const c = at(p);
      if (inq) {
        if (c === 92 && at(p + 1) === 120 && hexValue(at(p + 2)) >= 0 && hexValue(at(p + 3)) >= 0) {
          cur.push(hexValue(at(p + 2)) * 16 + hexValue(at(p + 3)));
          p += 3;
        } else if (c === 92 && at(p + 1) !== 0) {
          p++;
          const esc = buf[p];
          cur.push(esc === 110 ? 10 : esc === 114 ? 13 : esc === 116 ? 9 : esc === 98 ? 8 : esc === 97 ? 7 : esc);
        } else if (c === 34) {
          if (at(p + 1) !== 0 && !isSpace(at(p + 1))) return null;
          done = true;
        } else if (c === 0) {
          return null;
        } else {
          cur.push(c);
        }
      } else if (insq) {
        if (c === 92 && at(p + 1) === 39) {
          p++;
          cur.push(39);
        } else if (c === 39) {
          if (at(p + 1) !== 0 && !isSpace(at(p + 1))) return null;
          done = true;
        } else if (c === 0) {
          return null;
        } else {
          cur.push(c);
        }
      } else if (c === 32 || c === 10 || c === 13 || c === 9 || c === 0) {
        done = true;
      } else if (c === 34) {
        inq = true;
      } else if (c === 39) {
        insq = true;
      } else {
        cur.push(c);
      }
      if (p < e) p++;
    }
    args.push(Buffer.from(cur));
  }
}
