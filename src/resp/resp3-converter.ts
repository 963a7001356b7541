// Turns one RESP2 reply (the upstream's bytes) into the RESP3 reply Redis 7.0 sends a HELLO 3 client,
// driven by a shape descriptor (reply-shape.ts): maps, sets, doubles, verbatim strings, [member, score]
// pairs, booleans; every null (`$-1`, `*-1`) becomes `_`. Errors pass through; a reply that does not
// have the expected type is copied with its nulls converted. Unchanged parts are copied as slices of
// the input, and a reply with nothing to change is returned as it is.
import { parseLength, scanReply } from './reply-scanner.js';
import type { ReplyShape } from './reply-shape.js';

const NULL3 = Buffer.from('_\r\n');
const TRUE3 = Buffer.from('#t\r\n');
const FALSE3 = Buffer.from('#f\r\n');
const CRLF = Buffer.from('\r\n');
/** Every RESP2 null ends so (`$-1\r\n`, `*-1\r\n`); a reply without it has no null to convert. */
const MINUS_ONE = Buffer.from('-1\r\n');

const DOLLAR = 0x24;
const STAR = 0x2a;
const COLON = 0x3a;
const MINUS = 0x2d;

/** The RESP3 form of a complete RESP2 reply of the given shape. */
export function toResp3(reply: Buffer, shape: ReplyShape): Buffer {
  const type = reply[0];
  if (type === MINUS) return reply;
  if (typeof shape === 'string') {
    if (type === DOLLAR) {
      if (reply[1] === MINUS) return NULL3;
      if (shape !== 'double' && shape !== 'verbatim') return reply;
    } else if (type === STAR) {
      if (reply[1] === MINUS) return NULL3;
      if (reply.indexOf(MINUS_ONE) < 0) return reply;
    } else if (type === COLON) {
      if (shape !== 'bool') return reply;
    } else {
      return reply;
    }
  }
  const out = new Output();
  try {
    if (convert(reply, 0, shape, out) !== reply.length) return reply;
  } catch {
    return reply; // not one complete reply: leave it alone
  }
  return out.toBuffer();
}

/** Collects the converted reply: new bytes, and slices of the input (contiguous slices merged). */
class Output {
  private chunks: Buffer[] = [];
  private src: Buffer | undefined;
  private from = 0;
  private to = 0;

  copy(buf: Buffer, from: number, to: number): void {
    if (this.src === buf && this.to === from) {
      this.to = to;
      return;
    }
    this.flush();
    this.src = buf;
    this.from = from;
    this.to = to;
  }

  bytes(b: Buffer): void {
    this.flush();
    this.chunks.push(b);
  }

  ascii(s: string): void {
    this.bytes(Buffer.from(s, 'latin1'));
  }

  toBuffer(): Buffer {
    this.flush();
    return this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
  }

  private flush(): void {
    if (this.src && this.to > this.from) this.chunks.push(this.src.subarray(this.from, this.to));
    this.src = undefined;
  }
}

/** Converts the reply at `pos`; returns the position just past it (RESP2 input). */
function convert(buf: Buffer, pos: number, shape: ReplyShape, out: Output): number {
  const type = buf[pos];
  const lineEnd = buf.indexOf(13, pos + 1);
  if (lineEnd < 0) throw new RangeError('incomplete reply');
  const next = lineEnd + 2;
  switch (type) {
    case DOLLAR: {
      const len = parseLength(buf, pos + 1, lineEnd);
      if (len < 0) {
        out.bytes(NULL3);
        return next;
      }
      const end = next + len + 2;
      if (shape === 'double') {
        out.ascii(',');
        out.copy(buf, next, next + len);
        out.bytes(CRLF);
      } else if (shape === 'verbatim') {
        out.ascii(`=${len + 4}\r\ntxt:`);
        out.copy(buf, next, end);
      } else {
        out.copy(buf, pos, end);
      }
      return end;
    }
    case STAR: {
      const n = parseLength(buf, pos + 1, lineEnd);
      if (n < 0) {
        out.bytes(NULL3);
        return next;
      }
      return convertArray(buf, pos, next, n, shape, out);
    }
    case COLON:
      if (shape === 'bool' && lineEnd === pos + 2 && (buf[pos + 1] === 0x31 || buf[pos + 1] === 0x30)) {
        out.bytes(buf[pos + 1] === 0x31 ? TRUE3 : FALSE3);
        return next;
      }
      out.copy(buf, pos, next);
      return next;
    default:
      // + - and anything else on one line
      out.copy(buf, pos, next);
      return next;
  }
}

function convertArray(buf: Buffer, pos: number, first: number, n: number, shape: ReplyShape, out: Output): number {
  let p = first;
  if (typeof shape === 'string') {
    out.copy(buf, pos, first);
    for (let i = 0; i < n; i++) p = convert(buf, p, 'any', out);
    return p;
  }
  switch (shape.kind) {
    case 'array':
    case 'tuple':
      out.copy(buf, pos, first);
      for (let i = 0; i < n; i++)
        p = convert(buf, p, shape.kind === 'array' ? shape.of : i < shape.items.length ? shape.items[i] : (shape.rest ?? 'any'), out);
      return p;
    case 'set':
      out.ascii(`~${n}\r\n`);
      for (let i = 0; i < n; i++) p = convert(buf, p, shape.of, out);
      return p;
    case 'pairs':
      if (n % 2 !== 0) return convertArray(buf, pos, first, n, 'any', out);
      out.ascii(`*${n / 2}\r\n`);
      for (let i = 0; i < n; i += 2) {
        out.ascii('*2\r\n');
        p = convert(buf, p, shape.first, out);
        p = convert(buf, p, shape.second, out);
      }
      return p;
    case 'map': {
      const nested = shape.resp2 === 'nested';
      if (nested ? !allPairs(buf, first, n) : n % 2 !== 0) return convertArray(buf, pos, first, n, 'any', out);
      out.ascii(`%${nested ? n : n / 2}\r\n`);
      for (let i = 0; i < (nested ? n : n / 2); i++) {
        if (nested) p += 4; // the entry's `*2\r\n`
        const keyAt = p;
        p = convert(buf, p, shape.key, out);
        const valueShape = shape.fields ? (shape.fields[keyText(buf, keyAt)] ?? shape.value) : shape.value;
        p = convert(buf, p, valueShape, out);
      }
      return p;
    }
  }
}

/** Whether the n items from `pos` are all two-item arrays (`*2`), as the entries of a nested map. */
function allPairs(buf: Buffer, pos: number, n: number): boolean {
  let p = pos;
  for (let i = 0; i < n; i++) {
    if (buf[p] !== STAR || buf[p + 1] !== 0x32 || buf[p + 2] !== 13) return false;
    p = scanReply(buf, p);
    if (p < 0) return false;
  }
  return true;
}

/** The text of the bulk or simple string at `pos` (latin1), or '' for other types. */
function keyText(buf: Buffer, pos: number): string {
  const eol = buf.indexOf(13, pos + 1);
  if (buf[pos] === DOLLAR) {
    const len = parseLength(buf, pos + 1, eol);
    return len < 0 ? '' : buf.toString('latin1', eol + 2, eol + 2 + len);
  }
  if (buf[pos] === 0x2b) return buf.toString('latin1', pos + 1, eol);
  return '';
}
