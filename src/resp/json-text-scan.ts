// Whether bytes can stand inside a JSON string as they are: no `"`, `\` or control character (below
// 0x20), and whether any byte is above 0x7f (then only a native UTF-8 check can tell). The proxy asks
// it of every argument it writes into a /pipeline body and the platform of every string it reads from
// one. Short runs are checked a byte at a time; long ones (a large value) four bytes at a time with
// the word tricks of "Bit Twiddling Hacks" (has a zero byte, has a byte less than n), which are
// exact for "is there any": a 1 MiB value took 1.5 ms a byte at a time (bench/README.md, issue 25).

/** A `"`, `\` or control character: JSON needs an escape. */
export const NEEDS_ESCAPE = 1;
/** A byte above 0x7f: valid JSON only if the whole is valid UTF-8. */
export const HIGH_BYTES = 2;

/** Below this many bytes a plain byte loop is cheaper than setting up the word view. */
const WORDWISE_FROM = 64;
const HIGH = 0x80808080;
const ONES = 0x01010101;

/**
 * NEEDS_ESCAPE and/or HIGH_BYTES of bytes [from, to) of `b`. May stop at the first byte that needs an
 * escape: HIGH_BYTES is then not known (0 or set). Small on purpose, so that V8 inlines it into its
 * callers: the proxy calls it for every argument (21 per MSET), and a call of the whole scan per short
 * argument made the proxy's JSON body 1.6x slower than the byte loop it replaced (bench/README.md,
 * issue 20's last point).
 */
export function jsonTextFlags(b: Uint8Array, from: number, to: number): number {
  if (to - from >= WORDWISE_FROM) return longTextFlags(b, from, to);
  let escape = false;
  let high = false;
  for (let i = from; i < to; i++) {
    const c = b[i];
    if (c < 0x20 || c === 0x22 || c === 0x5c) escape = true;
    else if (c > 0x7f) high = true;
  }
  return (escape ? NEEDS_ESCAPE : 0) | (high ? HIGH_BYTES : 0);
}

/** jsonTextFlags of a long run (a large value): four bytes at a time; stops at the first escape. */
function longTextFlags(b: Uint8Array, from: number, to: number): number {
  let flags = 0;
  let i = from;
  // Up to the first 4-byte aligned address, a byte at a time.
  const aligned = i + ((4 - ((b.byteOffset + i) & 3)) & 3);
  for (; i < aligned; i++) {
    flags |= byteFlags(b[i]);
    if (flags & NEEDS_ESCAPE) return flags;
  }
  const words = (to - i) >> 2;
  const view = new Uint32Array(b.buffer, b.byteOffset + i, words);
  for (let k = 0; k < words; k++) {
    const w = view[k];
    const quote = w ^ 0x22222222;
    const backslash = w ^ 0x5c5c5c5c;
    // A byte below 0x20 (hasless), a byte equal to 0x22 or 0x5c (haszero of the xor), or above 0x7f.
    const special = ((w - 0x20202020) & ~w) | ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash);
    if (((special | w) & HIGH) === 0) continue;
    // Something in this word: which, a byte at a time (high bytes alone are common in UTF-8 text).
    for (let j = i + 4 * k, end = j + 4; j < end; j++) {
      flags |= byteFlags(b[j]);
      if (flags & NEEDS_ESCAPE) return flags;
    }
  }
  for (i += 4 * words; i < to; i++) {
    flags |= byteFlags(b[i]);
    if (flags & NEEDS_ESCAPE) return flags;
  }
  return flags;
}

function byteFlags(c: number): number {
  if (c < 0x20 || c === 0x22 || c === 0x5c) return NEEDS_ESCAPE;
  return c > 0x7f ? HIGH_BYTES : 0;
}
