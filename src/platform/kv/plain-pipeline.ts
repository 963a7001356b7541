// The fast path of /pipeline: a body that is an array of commands made only of plain JSON strings
// (no escapes, no numbers) naming commands that reach redis-server as they are sent (Executor.plainKind)
// is turned straight from its JSON bytes into RESP bytes, with no JSON.parse, no string per argument and
// no plan per command. Anything else (escapes, numbers, other commands, any syntax problem) returns
// undefined and takes the general path, which gives the same answer and every error text; so this path
// changes no behaviour, only the cost (bench/platform-pipeline.ts, docs/decisions.md).
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
const BACKSLASH = 0x5c;
/** Strings longer than this are scanned by resp/json-text-scan.ts (1 MiB a byte at a time: 3.5 ms). */
const SHORT_STRING = 64;

/** Where each argument of the command being read starts and ends in the body (reused: no allocation). */
let starts: Int32Array = new Int32Array(64);
let ends: Int32Array = new Int32Array(64);
/** The RESP being written (reused, grown up to 1 MiB); the result is a copy of the used part. */
let scratch = Buffer.allocUnsafe(64 * 1024);
const SCRATCH_MAX = 1024 * 1024;

/**
 * The body as RESP commands, or undefined when it is not an array of plain commands.
 * `kindOf` receives the command name as spelled (latin1 of its bytes).
 */
export function readPlainPipeline(body: Buffer, kindOf: (name: string) => PlainKind): PlainPipeline | undefined {
  const n = body.length;
  // RESP of a command is at most 2.2 times its JSON (`["a"]` is `*1\r\n$1\r\na\r\n`).
  const bound = 3 * n + 16;
  if (scratch.length < bound && bound <= SCRATCH_MAX) scratch = Buffer.allocUnsafe(bound);
  const out = scratch.length >= bound ? scratch : Buffer.allocUnsafe(bound);
  let o = 0;
  let count = 0;
  let wrote = false;
  let highBytes = false;
  let p = skipSpace(body, 0);
  if (body[p] !== OPEN) return undefined;
  p = skipSpace(body, p + 1);
  if (body[p] === CLOSE) return undefined; // an empty pipeline: the general path answers it
  for (;;) {
    if (body[p] !== OPEN) return undefined;
    p = skipSpace(body, p + 1);
    let args = 0;
    for (;;) {
      if (body[p] !== QUOTE) return undefined;
      const s = p + 1;
      let e = s;
      const short = Math.min(n, s + SHORT_STRING);
      for (; e < short; e++) {
        const c = body[e];
        if (c === QUOTE) break;
        if (c === BACKSLASH || c < 0x20) return undefined;
        if (c >= 0x80) highBytes = true;
      }
      if (e === short && e < n) {
        // A long string (a large value): its end by memchr, its bytes checked four at a time.
        const from = e;
        e = body.indexOf(QUOTE, from);
        if (e < 0) return undefined;
        const flags = jsonTextFlags(body, from, e);
        if (flags & NEEDS_ESCAPE) return undefined;
        if (flags & HIGH_BYTES) highBytes = true;
      }
      if (e >= n) return undefined;
      if (args === starts.length) {
        starts = grow(starts);
        ends = grow(ends);
      }
      starts[args] = s;
      ends[args] = e;
      args++;
      p = skipSpace(body, e + 1);
      if (body[p] === COMMA) {
        p = skipSpace(body, p + 1);
        continue;
      }
      if (body[p] === CLOSE) break;
      return undefined;
    }
    if (ends[0] === starts[0]) return undefined; // an empty command name: the general path's error
    const kind = nameKind(body, starts[0], ends[0], kindOf);
    if (kind === undefined) return undefined;
    if (kind === 'write') wrote = true;
    o = writeLength(out, o, 0x2a, args);
    for (let i = 0; i < args; i++) {
      const s = starts[i];
      const e = ends[i];
      o = writeLength(out, o, 0x24, e - s);
      if (e - s < 32) for (let k = s; k < e; k++) out[o++] = body[k];
      else o += body.copy(out, o, s, e);
      out[o++] = 13;
      out[o++] = 10;
    }
    count++;
    p = skipSpace(body, p + 1);
    if (body[p] === COMMA) {
      p = skipSpace(body, p + 1);
      continue;
    }
    if (body[p] === CLOSE) break;
    return undefined;
  }
  if (skipSpace(body, p + 1) !== n) return undefined;
  // JSON.parse of the body's UTF-8 text would replace invalid bytes: such a body takes the general path.
  if (highBytes && !isUtf8(body)) return undefined;
  if (out !== scratch) return { resp: out.subarray(0, o), count, wrote };
  const resp = Buffer.allocUnsafe(o);
  out.copy(resp, 0, 0, o);
  return { resp, count, wrote };
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

function grow(a: Int32Array): Int32Array {
  const bigger = new Int32Array(a.length * 2);
  bigger.set(a);
  return bigger;
}
