// Rebuilds the RESP2 or RESP3 reply Redis would send from one item of a /multi-exec answer, the only
// upstream answer that is JSON. The JSON loses what the reply types give back (reply-shape.ts):
// - strings come base64-encoded (`Upstash-Encoding: base64`) except the status reply OK, which comes as
//   the text "OK" (never valid base64: 2 characters); the shape says whether a string was a status reply
//   (TYPE, HELP lines), a bulk string, a double or a verbatim text;
// - null does not say whether it was `$-1` or `*-1`: the shape does;
// - maps, sets and [member, score] pairs arrive as the flat RESP2 arrays, restructured for RESP3;
// - an error nested in an array (a script's `{err=…}`) arrives as its plain text, which is not base64:
//   a string that is not valid base64 is taken as such an error.
// Known losses (docs/proxy.md): a status reply other than OK nested where the shape says `any` (a
// script's `{ok=…}`) comes back as a bulk string; integers beyond 2^53 lose precision in JSON.
import type { ReplyShape } from '../resp/reply-shape.js';
import { itemShape } from '../resp/reply-shape.js';
import { errorReply, type Protocol } from '../resp/protocol.js';
import type { JsonItem } from './kv-client.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The reply bytes of one /multi-exec item (`{"result": …}` or `{"error": "…"}`). */
export function jsonItemToResp(item: JsonItem, shape: ReplyShape, protocol: Protocol): Buffer {
  if ('error' in item) return errorReply(item.error);
  return jsonToResp(item.result, shape, protocol);
}

/** The reply bytes of one decoded JSON value. */
export function jsonToResp(value: unknown, shape: ReplyShape, protocol: Protocol): Buffer {
  const out: Buffer[] = [];
  write(value, shape, protocol, out);
  return out.length === 1 ? out[0] : Buffer.concat(out);
}

function write(value: unknown, shape: ReplyShape, protocol: Protocol, out: Buffer[]): void {
  if (value === null || value === undefined) {
    if (protocol === 3) out.push(Buffer.from('_\r\n'));
    else out.push(Buffer.from(nullKind(shape) === 'array' ? '*-1\r\n' : '$-1\r\n'));
    return;
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (shape === 'bool' && protocol === 3 && (value === 1 || value === 0)) out.push(Buffer.from(value === 1 ? '#t\r\n' : '#f\r\n'));
    else out.push(Buffer.from(`:${integerText(value)}\r\n`));
    return;
  }
  if (typeof value === 'boolean') {
    out.push(Buffer.from(protocol === 3 ? (value ? '#t\r\n' : '#f\r\n') : value ? ':1\r\n' : ':0\r\n'));
    return;
  }
  if (typeof value === 'string') return writeString(value, shape, protocol, out);
  if (Array.isArray(value)) return writeArray(value, shape, protocol, out);
  // Not a value the upstream sends; keep the connection's framing intact.
  out.push(Buffer.from(`-ERR upstream sent an unexpected JSON value in a transaction result\r\n`));
}

function writeString(text: string, shape: ReplyShape, protocol: Protocol, out: Buffer[]): void {
  if (text === 'OK') {
    out.push(Buffer.from('+OK\r\n'));
    return;
  }
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    // An error reply nested in an array (top-level errors are {"error": …} items).
    out.push(errorReply(text));
    return;
  }
  const bytes = Buffer.from(text, 'base64');
  if (shape === 'status') {
    out.push(Buffer.from('+'), bytes, Buffer.from('\r\n'));
  } else if (shape === 'double' && protocol === 3) {
    out.push(Buffer.from(','), bytes, Buffer.from('\r\n'));
  } else if (shape === 'verbatim' && protocol === 3) {
    out.push(Buffer.from(`=${bytes.length + 4}\r\ntxt:`), bytes, Buffer.from('\r\n'));
  } else {
    out.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
}

function writeArray(items: unknown[], shape: ReplyShape, protocol: Protocol, out: Buffer[]): void {
  const n = items.length;
  if (typeof shape === 'string' || protocol === 2) {
    // RESP2 (and leaves): the array as it came; maps and pairs are flat arrays already.
    out.push(Buffer.from(`*${n}\r\n`));
    if (typeof shape !== 'string' && shape.kind === 'map') return writeMapItems(items, shape, protocol, out);
    if (typeof shape !== 'string' && shape.kind === 'pairs') {
      for (let i = 0; i < n; i++) write(items[i], i % 2 === 0 ? shape.first : shape.second, protocol, out);
      return;
    }
    for (let i = 0; i < n; i++) write(items[i], itemShape(shape, i), protocol, out);
    return;
  }
  switch (shape.kind) {
    case 'array':
    case 'tuple':
      out.push(Buffer.from(`*${n}\r\n`));
      for (let i = 0; i < n; i++) write(items[i], itemShape(shape, i), protocol, out);
      return;
    case 'set':
      out.push(Buffer.from(`~${n}\r\n`));
      for (const item of items) write(item, shape.of, protocol, out);
      return;
    case 'pairs':
      if (n % 2 !== 0) return writeArray(items, 'any', protocol, out);
      out.push(Buffer.from(`*${n / 2}\r\n`));
      for (let i = 0; i < n; i += 2) {
        out.push(Buffer.from('*2\r\n'));
        write(items[i], shape.first, protocol, out);
        write(items[i + 1], shape.second, protocol, out);
      }
      return;
    case 'map': {
      const nested = shape.resp2 === 'nested';
      if (nested ? !items.every((e) => Array.isArray(e) && e.length === 2) : n % 2 !== 0) return writeArray(items, 'any', protocol, out);
      out.push(Buffer.from(`%${nested ? n : n / 2}\r\n`));
      return writeMapItems(items, shape, protocol, out);
    }
  }
}

/** The entries of a map (after its header): flat key, value, … or nested [key, value] arrays (RESP2 keeps those headers). */
function writeMapItems(items: unknown[], shape: Extract<ReplyShape, { kind: 'map' }>, protocol: Protocol, out: Buffer[]): void {
  const nested = shape.resp2 === 'nested';
  const step = nested ? 1 : 2;
  for (let i = 0; i < items.length; i += step) {
    let key: unknown;
    let value: unknown;
    if (nested) {
      const entry = items[i];
      if (!Array.isArray(entry) || entry.length !== 2) {
        write(entry, 'any', protocol, out);
        continue;
      }
      if (protocol === 2) out.push(Buffer.from('*2\r\n'));
      [key, value] = entry;
    } else {
      key = items[i];
      value = items[i + 1];
    }
    write(key, shape.key, protocol, out);
    write(value, shape.fields ? (shape.fields[fieldName(key)] ?? shape.value) : shape.value, protocol, out);
  }
}

function fieldName(key: unknown): string {
  if (typeof key !== 'string' || key === 'OK' || !BASE64.test(key)) return typeof key === 'string' ? key : '';
  return Buffer.from(key, 'base64').toString('latin1');
}

function nullKind(shape: ReplyShape): 'bulk' | 'array' {
  if (typeof shape === 'string') return 'bulk';
  return shape.nil ?? 'array';
}

function integerText(n: number | bigint): string {
  if (typeof n === 'bigint') return n.toString();
  if (Number.isSafeInteger(n) || !Number.isFinite(n)) return String(n);
  return BigInt(Math.trunc(n)).toString();
}
