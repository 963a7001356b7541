// Percent-decoding to raw bytes (decodeURIComponent would insist on UTF-8 and throw on %FF).

const HEX = (c: number): number =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;

/** Decodes %HH escapes (and `+` as space when `plusIsSpace`); a malformed escape stays as written. */
export function percentDecode(text: string, plusIsSpace = false): Buffer {
  const src = Buffer.from(text, 'utf8');
  if (src.indexOf(0x25) < 0 && !(plusIsSpace && src.indexOf(0x2b) >= 0)) return src;
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === 0x25 && i + 2 < src.length && HEX(src[i + 1]) >= 0 && HEX(src[i + 2]) >= 0) {
      out[n++] = (HEX(src[i + 1]) << 4) | HEX(src[i + 2]);
      i += 2;
    } else if (c === 0x2b && plusIsSpace) {
      out[n++] = 0x20;
    } else {
      out[n++] = c;
    }
  }
  return out.subarray(0, n);
}
