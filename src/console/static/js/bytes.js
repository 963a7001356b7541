// Bytes as the console shows them: text when they are valid UTF-8 without control characters,
// hex otherwise, so a binary value is never shown as broken text.
const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

export function fromBase64(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toBase64(bytes) {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export function toUtf8(text) {
  return encoder.encode(text);
}

/** The bytes as text, or undefined when they are not printable UTF-8. */
export function asText(bytes) {
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text) ? undefined : text;
}

export function toHex(bytes, sep = ' ') {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(sep);
}

export function fromHex(hex) {
  const clean = hex.replace(/\s+/g, '');
  if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new Error('hex needs pairs of 0-9a-f digits');
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** One line for a list: text, or `0x…` hex for binary bytes. */
export function label(bytes) {
  const text = asText(bytes);
  return text === undefined ? `0x${toHex(bytes, '')}` : text;
}

/** Percent-encodes every byte outside the unreserved set, for the KV API's path form. */
export function pathSegment(bytes) {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
  }
  return out;
}
