// The fast path of /pipeline: a body that is an array of commands made only of plain JSON strings
// (no escapes, no numbers) naming commands that reach redis-server as they are sent (Executor.plainKind)
// is turned straight from its JSON bytes into RESP bytes, with no JSON.parse, no string per argument and
// no plan per command. Anything else (escapes, numbers, other commands, any syntax problem) returns
// undefined and takes the general path, which gives the same answer and every error text; so this path
// changes no behaviour, only the cost (bench/platform-pipeline.ts, docs/decisions.md).
//
// One pass: each byte of a short string is checked and written in the same loop (four at a time while
// they are plain), at the place its RESP bulk will have once the head before it is known, whose length
// is guessed from the last command's (bench/README.md, branch plat16).
import { isUtf8 } from 'node:buffer';
import { HIGH_BYTES, jsonTextFlags, NEEDS_ESCAPE } from '../../resp/json-text-scan.js';
import { NameCache } from '../../resp/name-cache.js';

/** What a plain command does: `read`, `write` (for the sync token), or undefined when it is not plain. */
export type PlainKind = 'read' | 'write' | undefined;

export interface PlainPipeline {
  /** The commands as RESP multibulk requests, ready for redis-server. */
  resp: Buffer;
  count: number;
  /** Whether any command may change data. */
  wrote: boolean;
}

const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const COMMA = 0x2c;
const QUOTE = 0x22;
/** Strings longer than this are scanned by resp/json-text-scan.ts (1 MiB a byte at a time: 3.5 ms). */
const SHORT_STRING = 64;
/** A short string's bytes are written this far past its header's start: `$NN\r\n` (4 bytes when under 10). */
const BULK_HEAD = 5;
/** A command's arguments are written this far past its start: `*N\r\n` (longer from 10 arguments on). */
const ARRAY_HEAD = 4;

/** What a byte is inside a JSON string (BYTE_CLASS): most are PLAIN. */
const PLAIN = 0;
const END = 1; // `"`
const ESCAPE = 2; // `\` or a control character: the general path decides
const HIGH = 3; // above 0x7f: valid only if the body is UTF-8
const BYTE_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) BYTE_CLASS[c] = ESCAPE;
BYTE_CLASS[QUOTE] = END;
BYTE_CLASS[0x5c] = ESCAPE;
for (let c = 0x80; c < 0x100; c++) BYTE_CLASS[c] = HIGH;

/** The head's room guessed for the first arguments of a command (4 or 5 bytes), from the last command's. */
const ROOM_SLOTS = 8;
const rooms = new Uint8Array(ROOM_SLOTS).fill(BULK_HEAD);

/** The RESP being written (reused, grown up to 1 MiB); the result is a copy of the used part. */
let scratch = Buffer.allocUnsafe(64 * 1024);
const SCRATCH_MAX = 1024 * 1024;
let scratchWords = new DataView(scratch.buffer, scratch.byteOffset, scratch.length);

/**
 * The body as RESP commands, or undefined when it is not an array of plain commands.
 * `kindOf` receives the command name as spelled (latin1 of its bytes).
 */
export function readPlainPipeline(body: Buffer, kindOf: (name: string) => PlainKind): PlainPipeline | undefined {
  const n = body.length | 0; // an int32 (a typed array's length is a double to V8): the index arithmetic stays in int32
  if (n !== body.length) return undefined; // 2 GiB or more: the general path
  // RESP of a command is at most 2.2 times its JSON (`["a"]` is `*1\r\n$1\r\na\r\n`); the headers'
  // room reserved before their sizes are known adds a few bytes at most.
  const bound = 3 * n + 64;
  if (scratch.length < bound && bound <= SCRATCH_MAX) {
    scratch = Buffer.allocUnsafe(bound);
    scratchWords = new DataView(scratch.buffer, scratch.byteOffset, scratch.length);
  }
  const out = scratch.length >= bound ? scratch : Buffer.allocUnsafe(bound);
  const bodyWords = new DataView(body.buffer, body.byteOffset, n);
  const outWords = out === scratch ? scratchWords : new DataView(out.buffer, out.byteOffset, out.length);
  let o = 0;
  let count = 0;
  let wrote = false;
  let highBytes = false;
  /** The previous command's name (where it is in the body) and kind: commands of a call often repeat it. */
  let lastName = -1;
  let lastLength = -1;
  let lastKind: PlainKind;
  let p = skipSpace(body, 0);
  if (body[p] !== OPEN) return undefined;
  p = skipSpace(body, p + 1);
  if (body[p] === CLOSE) return undefined; // an empty pipeline: the general path answers it
  for (;;) {
    if (body[p] !== OPEN) return undefined;
    p = skipSpace(body, p + 1);
    const command = o;
    o += ARRAY_HEAD;
    let args = 0;
    let nameStart = 0;
    let nameEnd = 0;
    for (;;) {
      if (body[p] !== QUOTE) return undefined;
      const s = p + 1;
      const head = o;
      // Where the bytes go: past a head as long as this argument's in the previous command (`$3\r\n` for a name).
      const room = args < ROOM_SLOTS ? rooms[args] : BULK_HEAD;
      // A byte at e goes to e + shift (one index for both: fewer registers in the loop).
      const shift = head + room - s;
      let e = s;
      let kind = PLAIN;
      const short = s + SHORT_STRING < n ? s + SHORT_STRING : n;
      // Four bytes at a time while none is below `#`, above 0x7f or a backslash ("Bit Twiddling Hacks":
      // hasless, haszero; `| 0` keeps V8 in int32), then a byte at a time: a key's bytes in a few steps.
      for (; e + 4 <= short; e += 4) {
        const word = bodyWords.getInt32(e, true);
        const backslash = word ^ 0x5c5c5c5c;
        if (((((word - 0x23232323) | 0) & ~word) | (((backslash - 0x01010101) | 0) & ~backslash) | word) & 0x80808080) break;
        outWords.setInt32(e + shift, word, true);
      }
      for (; e < short; e++) {
        const c = body[e];
        // Most bytes are ASCII from `#` on but `\`: two or three comparisons, no table.
        if (c <= QUOTE || c >= 0x7f || c === 0x5c) {
          kind = BYTE_CLASS[c];
          if (kind !== PLAIN) {
            if (kind !== HIGH) break;
            highBytes = true;
            kind = PLAIN;
          }
        }
        out[e + shift] = c;
      }
      if (kind === END) {
        let w = e + shift;
        const len = e - s;
        const fits = len < 10 ? 4 : 5;
        if (fits !== room) {
          // The head is not as long as the room left for it: the bytes move by one, and the next command's guess with them.
          if (fits < room) for (let k = head + fits; k < w - 1; k++) out[k] = out[k + 1];
          else for (let k = w; k > head + room; k--) out[k] = out[k - 1];
          w += fits - room;
          if (args < ROOM_SLOTS) rooms[args] = fits;
        }
        writeLength(out, head, 0x24, len);
        o = w;
      } else {
        if (kind === ESCAPE || e >= n) return undefined;
        // A long string (a large value): its end by memchr, its bytes checked four at a time.
        e = body.indexOf(QUOTE, e);
        if (e < 0) return undefined;
        const flags = jsonTextFlags(body, short, e);
        if (flags & NEEDS_ESCAPE) return undefined;
        if (flags & HIGH_BYTES) highBytes = true;
        o = writeLength(out, head, 0x24, e - s);
        o += body.copy(out, o, s, e);
      }
      out[o++] = 13;
      out[o++] = 10;
      if (args === 0) {
        nameStart = s;
        nameEnd = e;
      }
      args++;
      p = e + 1;
      let c = body[p];
      if (c !== COMMA && c !== CLOSE) c = body[(p = skipSpace(body, p))];
      if (c === COMMA) {
        p = skipSpace(body, p + 1);
        continue;
      }
      if (c === CLOSE) break;
      return undefined;
    }
    const nameLength = nameEnd - nameStart;
    if (nameLength === 0) return undefined; // an empty command name: the general path's error
    if (nameLength !== lastLength || !sameBytes(body, nameStart, lastName, nameLength)) {
      lastKind = nameKind(body, nameStart, nameEnd, kindOf);
      lastName = nameStart;
      lastLength = nameLength;
    }
    if (lastKind === undefined) return undefined;
    if (lastKind === 'write') wrote = true;
    o = writeArrayHead(out, command, o, args);
    count++;
    p++;
    let c = body[p];
    if (c !== COMMA && c !== CLOSE) c = body[(p = skipSpace(body, p))];
    if (c === COMMA) {
      p = skipSpace(body, p + 1);
      continue;
    }
    if (c === CLOSE) break;
    return undefined;
  }
  if (skipSpace(body, p + 1) !== n) return undefined;
  // JSON.parse of the body's UTF-8 text would replace invalid bytes: such a body takes the general path.
  if (highBytes && !isUtf8(body)) return undefined;
  if (out !== scratch) return { resp: out.subarray(0, o), count, wrote };
  // A copy, not a view of a slab written on: writing each call's RESP to fresh memory cost as much (cache misses).
  const resp = Buffer.allocUnsafe(o);
  out.copy(resp, 0, 0, o);
  return { resp, count, wrote };
}

/** Whether bytes [a, a + n) and [b, b + n) of `body` are the same (b < 0: no earlier name). */
function sameBytes(body: Buffer, a: number, b: number, n: number): boolean {
  if (b < 0) return false;
  for (let k = 0; k < n; k++) if (body[a + k] !== body[b + k]) return false;
  return true;
}

/**
 * `*N\r\n` at `command`, whose arguments were written from `command + ARRAY_HEAD` to `end`: moved on when
 * the head is longer than the room left for it (10 arguments or more). Returns the new end.
 */
function writeArrayHead(out: Buffer, command: number, end: number, args: number): number {
  const headLength = args < 10 ? ARRAY_HEAD : String(args).length + 3;
  if (headLength !== ARRAY_HEAD) out.copyWithin(command + headLength, command + ARRAY_HEAD, end);
  writeLength(out, command, 0x2a, args);
  return end + headLength - ARRAY_HEAD;
}

/**
 * The kinds of the command names seen, by their bytes (a string per command name was a tenth of this
 * path's cost). One cache per `kindOf` (the platform has one).
 */
let names: { kindOf: (name: string) => PlainKind; cache: NameCache<PlainKind> } | undefined;

function nameKind(body: Buffer, s: number, e: number, kindOf: (name: string) => PlainKind): PlainKind {
  if (names?.kindOf !== kindOf) names = { kindOf, cache: new NameCache(kindOf) };
  return names.cache.get(body, s, e);
}

/** JSON whitespace: space, tab, line feed, carriage return. */
function skipSpace(b: Buffer, p: number): number {
  while (p < b.length) {
    const c = b[p];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    p++;
  }
  return p;
}

/** `*3\r\n` or `$12\r\n`. */
function writeLength(out: Buffer, o: number, type: number, n: number): number {
  out[o++] = type;
  if (n < 10) out[o++] = 0x30 + n;
  else if (n < 100) {
    out[o++] = 0x30 + ((n / 10) | 0);
    out[o++] = 0x30 + (n % 10);
  } else o += out.write(String(n), o, 'latin1');
  out[o++] = 13;
  out[o++] = 10;
  return o;
}
