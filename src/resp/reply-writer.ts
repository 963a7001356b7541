// Reply encoder for RESP2 and RESP3, writing the bytes Redis 7.0 writes (networking.c addReply*),
// including its RESP2 fallbacks: map → flat array, set/push → array, double/big number/verbatim → bulk,
// boolean → integer 1/0, null → $-1 (null bulk) or *-1 (null array).

// Imported: the global `Buffer` is an accessor (node's bootstrap), a getter call per use in hot code.
import { Buffer } from 'node:buffer';
import type { Protocol } from './protocol.js';

export type { Protocol };

/** Payloads up to this size are copied into the scratch buffer; larger ones are queued zero-copy. */
const COPY_LIMIT = 1024;
const DEFAULT_SCRATCH = 16 * 1024;

/**
 * Accumulates replies as a list of Buffers: headers and small payloads go into a shared scratch
 * buffer, large Buffer payloads are referenced without copying (do not modify them after writing).
 * Bytes handed out by take() are never rewritten.
 */
export class ReplyWriter {
  /** Protocol of the connection: 2 (default) or 3 after HELLO 3. */
  protocol: Protocol;

  private readonly scratchSize: number;
  private chunks: Buffer[] = [];
  private queued = 0; // bytes in `chunks`
  private buf: Buffer;
  private mark = 0; // buf[mark, off) is written but not yet in `chunks`
  private off = 0;

  constructor(protocol: Protocol = 2, scratchSize = DEFAULT_SCRATCH) {
    this.protocol = protocol;
    this.scratchSize = scratchSize;
    this.buf = Buffer.allocUnsafe(scratchSize);
  }

  /** Bytes written and not yet taken. */
  get length(): number {
    return this.queued + this.off - this.mark;
  }

  /** Everything written so far, as chunks (for socket.write of each, or writev); empties the writer. */
  take(): Buffer[] {
    this.seal();
    const out = this.chunks;
    this.chunks = [];
    this.queued = 0;
    return out;
  }

  /** Everything written so far as one Buffer; empties the writer. */
  toBuffer(): Buffer {
    const chunks = this.take();
    if (chunks.length === 1) return chunks[0];
    return Buffer.concat(chunks);
  }

  /** Simple string: `+OK`. CR and LF would break the framing, so they become spaces. */
  simple(s: string): this {
    return this.line(43, s);
  }

  /**
   * Error: `-<message>`, where the message starts with its code ("ERR ...", "WRONGTYPE ...").
   * CR and LF become spaces, as Redis does for error texts.
   */
  error(message: string): this {
    return this.line(45, message);
  }

  /** Integer `:n` (a long long in Redis; pass a bigint beyond 2^53). */
  integer(n: number | bigint): this {
    this.reserve(24);
    this.buf[this.off++] = 58;
    this.digits(n);
    return this.crlf();
  }

  /** Bulk string; null is the null bulk (`$-1` in RESP2, `_` in RESP3). Strings are UTF-8. */
  bulk(value: Buffer | string | null): this {
    if (value === null) return this.nullBulk();
    if (typeof value === 'string') {
      const len = Buffer.byteLength(value);
      this.header(36, len);
      this.reserve(len + 2);
      this.off += this.buf.write(value, this.off, 'utf8');
      return this.crlf();
    }
    this.header(36, value.length);
    return this.payload(value).crlf();
  }

  /** Null as Redis' addReplyNull: `$-1` in RESP2, `_` in RESP3. */
  nullBulk(): this {
    return this.ascii(this.protocol === 2 ? '$-1\r\n' : '_\r\n');
  }

  /** Null as Redis' addReplyNullArray: `*-1` in RESP2, `_` in RESP3. */
  nullArray(): this {
    return this.ascii(this.protocol === 2 ? '*-1\r\n' : '_\r\n');
  }

  /** Array header `*n`; the n elements follow. */
  arrayHeader(n: number): this {
    return this.header(42, n);
  }

  /** Map header for n key/value pairs: `%n` in RESP3, `*2n` (flat array) in RESP2. */
  mapHeader(pairs: number): this {
    return this.protocol === 2 ? this.header(42, pairs * 2) : this.header(37, pairs);
  }

  /** Set header: `~n` in RESP3, `*n` in RESP2. */
  setHeader(n: number): this {
    return this.header(this.protocol === 2 ? 42 : 126, n);
  }

  /** Push header (pub/sub messages, invalidations): `>n` in RESP3, `*n` in RESP2. */
  pushHeader(n: number): this {
    return this.header(this.protocol === 2 ? 42 : 62, n);
  }

  /**
   * Attribute header `|n` (n key/value pairs, then the reply they describe). RESP3 only: Redis never
   * sends attributes to RESP2 clients, so this throws rather than corrupt the stream.
   */
  attributeHeader(pairs: number): this {
    if (this.protocol === 2) throw new Error('RESP2 has no attribute type');
    return this.header(124, pairs);
  }

  /** Double like addReplyDouble: `,<%.17g>` in RESP3, a bulk string of the same text in RESP2. */
  double(d: number): this {
    const text = formatDouble(d);
    if (this.protocol === 2) return this.header(36, text.length).ascii(text).crlf();
    this.reserve(1);
    this.buf[this.off++] = 44;
    return this.ascii(text).crlf();
  }

  /** Boolean `#t`/`#f` in RESP3, `:1`/`:0` in RESP2. */
  boolean(b: boolean): this {
    if (this.protocol === 2) return this.ascii(b ? ':1\r\n' : ':0\r\n');
    return this.ascii(b ? '#t\r\n' : '#f\r\n');
  }

  /** Big number `(<digits>` in RESP3, a bulk string of the digits in RESP2. */
  bigNumber(n: string | bigint): this {
    const text = typeof n === 'bigint' ? n.toString() : n;
    if (this.protocol === 2) return this.bulk(text);
    return this.line(40, text);
  }

  /**
   * Verbatim string `=<len>\r\n<fmt>:<text>` in RESP3 (format is 3 characters, "txt" or "mkd"),
   * a plain bulk string of the text in RESP2.
   */
  verbatim(text: Buffer | string, format = 'txt'): this {
    if (this.protocol === 2) return this.bulk(text);
    const body = typeof text === 'string' ? Buffer.from(text) : text;
    this.header(61, body.length + 4);
    this.ascii(format.slice(0, 3).padEnd(3, ' ')).ascii(':');
    return this.payload(body).crlf();
  }

  /** Bytes that already are encoded replies (pass-through from upstream). */
  raw(bytes: Buffer): this {
    return this.payload(bytes);
  }

  // ---- internals ----

  private line(type: number, text: string): this {
    if (text.includes('\r') || text.includes('\n')) text = text.replace(/[\r\n]/g, ' ');
    const len = Buffer.byteLength(text);
    this.reserve(len + 3);
    this.buf[this.off++] = type;
    this.off += this.buf.write(text, this.off, 'utf8');
    return this.crlf();
  }

  private header(type: number, n: number): this {
    this.reserve(24);
    this.buf[this.off++] = type;
    this.digits(n);
    return this.crlf();
  }

  private digits(n: number | bigint): void {
    if (typeof n === 'number' && n >= 0 && n < 10 && Number.isInteger(n)) {
      this.buf[this.off++] = 48 + n;
      return;
    }
    const s = typeof n === 'bigint' ? n.toString() : String(n);
    this.off += this.buf.write(s, this.off, 'latin1');
  }

  private ascii(s: string): this {
    this.reserve(s.length);
    this.off += this.buf.write(s, this.off, 'latin1');
    return this;
  }

  private crlf(): this {
    this.reserve(2);
    this.buf[this.off++] = 13;
    this.buf[this.off++] = 10;
    return this;
  }

  private payload(data: Buffer): this {
    if (data.length <= COPY_LIMIT) {
      this.reserve(data.length);
      data.copy(this.buf, this.off);
      this.off += data.length;
      return this;
    }
    this.seal();
    this.chunks.push(data);
    this.queued += data.length;
    return this;
  }

  /** Moves the written part of the scratch buffer into `chunks`. */
  private seal(): void {
    if (this.off > this.mark) {
      this.chunks.push(this.buf.subarray(this.mark, this.off));
      this.queued += this.off - this.mark;
      this.mark = this.off;
    }
  }

  /** Makes room for n more bytes in the scratch buffer (a fresh one: handed-out bytes stay intact). */
  private reserve(n: number): void {
    if (this.off + n <= this.buf.length) return;
    this.seal();
    this.buf = Buffer.allocUnsafe(Math.max(this.scratchSize, n));
    this.mark = this.off = 0;
  }
}

// ---- %.17g, exactly as glibc prints it ----

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/**
 * Formats a double like Redis 7.0's addReplyDouble: "inf", "-inf", "nan", else printf("%.17g"):
 * 17 significant digits, trailing zeros dropped, exponent form (e+XX) below 1e-4 or from 1e17.
 * glibc rounds exact ties to even where JavaScript rounds them away from zero, so ties are
 * decided exactly (e.g. 1000000000000000.25 prints as 1000000000000000.2).
 */
export function formatDouble(d: number): string {
  if (Number.isNaN(d)) return 'nan';
  if (d === Infinity) return 'inf';
  if (d === -Infinity) return '-inf';
  if (d === 0) return Object.is(d, -0) ? '-0' : '0';
  const sign = d < 0 ? '-' : '';
  const x = Math.abs(d);
  let digits: string;
  let exp: number;
  // 18 significant digits ending in 5 is the only way a 17-digit rounding can be an exact tie.
  const e18 = x.toExponential(17);
  if (e18.charCodeAt(18) === 53 /* '5' */) {
    [digits, exp] = roundExact17(x);
  } else {
    const e17 = x.toExponential(16);
    const ePos = e17.indexOf('e');
    digits = e17[0] + e17.slice(2, ePos);
    exp = Number(e17.slice(ePos + 1));
  }
  digits = digits.replace(/0+$/, '');
  if (exp < -4 || exp >= 17) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const ae = Math.abs(exp);
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${ae < 10 ? '0' : ''}${ae}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return sign + digits + '0'.repeat(exp + 1 - digits.length);
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** 17 significant digits of a positive finite double, rounded half-to-even from its exact value. */
function roundExact17(x: number): [string, number] {
  f64[0] = x;
  const bits = u64[0];
  const biased = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & 0xfffffffffffffn;
  let e2: number;
  if (biased === 0) e2 = -1074;
  else {
    mant |= 1n << 52n;
    e2 = biased - 1075;
  }
  // x = mant * 2^e2 = all * 10^-scale exactly.
  let all: string;
  let scale: number;
  if (e2 >= 0) {
    all = (mant << BigInt(e2)).toString();
    scale = 0;
  } else {
    all = (mant * 5n ** BigInt(-e2)).toString();
    scale = -e2;
  }
  let exp = all.length - scale - 1;
  if (all.length <= 17) return [all.padEnd(17, '0'), exp];
  let head = BigInt(all.slice(0, 17));
  const rest = all.slice(17);
  const firstRest = rest.charCodeAt(0) - 48;
  const tail = rest.slice(1).replace(/0+$/, '');
  if (firstRest > 5 || (firstRest === 5 && (tail.length > 0 || head % 2n === 1n))) head += 1n;
  let digits = head.toString();
  if (digits.length > 17) {
    digits = digits.slice(0, 17);
    exp++;
  }
  return [digits, exp];
}
