// Rebuilds the RESP2 or RESP3 reply Redis would send from one item of a JSON answer: /multi-exec, and
// /pipeline when the upstream answers JSON (kv-client's format json or auto). The JSON loses what the
// reply types give back (reply-shape.ts):
// - strings come base64-encoded (`Upstash-Encoding: base64`) except a top-level status reply OK, which
//   comes as the text "OK" (never valid base64: 2 characters); the shape says whether a string was a
//   status reply (TYPE, HELP lines), a bulk string, a double or a verbatim text. A nested status OK is
//   base64 like a bulk "OK" (the official SDK decodes every nested string): where the shape is `any`
//   (script replies) nested "OK" is taken as the status reply, the common `return {redis.call('SET', …)}`;
// - without base64 (an auto-mode answer that arrived as plain JSON), strings are UTF-8 text;
// - null does not say whether it was `$-1` or `*-1`: the shape does;
// - maps, sets and [member, score] pairs arrive as the flat RESP2 arrays, restructured for RESP3;
// - an error nested in an array (a script's `{err=…}`) arrives as its plain text, which is not base64:
//   a string that is not valid base64 is taken as such an error.
// Known losses (docs/proxy.md): a status reply other than OK nested where the shape says `any` (a
// script's `{ok=…}`) comes back as a bulk string; integers beyond 2^53 lose precision in JSON.
import type { ReplyShape } from '../resp/reply-shape.js';
import { itemShape } from '../resp/reply-shape.js';
import { errorReply, type Protocol } from '../resp/protocol.js';
import { replyShape } from '../commands/reply-types.js';
import { resolveCommand } from '../commands/table.js';
import { parseJsonExactIntegers } from './json-parse.js';

/** A decoded JSON item of the upstream (strings still base64 as it sent them). */
export type JsonItem = { result: unknown } | { error: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const OK_BYTES = Buffer.from('OK');

/** The reply bytes of one JSON item (`{"result": …}` or `{"error": "…"}`). */
export function jsonItemToResp(item: JsonItem, shape: ReplyShape, protocol: Protocol, base64 = true): Buffer {
  if ('error' in item) return errorReply(item.error);
  return jsonToResp(item.result, shape, protocol, base64);
}

/** The reply bytes of one decoded JSON value. */
export function jsonToResp(value: unknown, shape: ReplyShape, protocol: Protocol, base64 = true): Buffer {
  const out: Buffer[] = [];
  write(value, shape, { protocol, base64 }, out, false);
  return out.length === 1 ? out[0] : Buffer.concat(out);
}

/**
 * The RESP2 replies of a JSON answer to `commands` (a /pipeline array of items, or one item for a
 * single path-form command), each rebuilt by the reply type of its command; or what is wrong with it.
 */
export function jsonPipelineToResp(body: Buffer, commands: Buffer[][], base64: boolean): Buffer[] | { problem: string } {
  let parsed: unknown;
  try {
    parsed = parseJsonExactIntegers(body.toString('utf8'));
  } catch {
    return { problem: 'HTTP 200 with a JSON content type whose body is not JSON' };
  }
  const items = Array.isArray(parsed) ? parsed : commands.length === 1 && !Array.isArray(parsed) ? [parsed] : undefined;
  if (!items) return { problem: 'HTTP 200 whose JSON body is not an array of items' };
  if (items.length !== commands.length) return { problem: `${items.length} JSON items for ${commands.length} commands` };
  const replies: Buffer[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as JsonItem;
    if (!item || typeof item !== 'object' || !('result' in item || typeof (item as { error?: unknown }).error === 'string')) {
      return { problem: 'a JSON item is neither {"result": …} nor {"error": "…"}' };
    }
    const spec = resolveCommand(commands[i]);
    replies.push(jsonItemToResp(item, spec ? replyShape(spec, commands[i]) : 'any', 2, base64));
  }
  return replies;
}

/** How the JSON was written (strings base64 or UTF-8 text) and which protocol to answer in. */
interface Mode {
  protocol: Protocol;
  base64: boolean;
}

function write(value: unknown, shape: ReplyShape, mode: Mode, out: Buffer[], nested: boolean): void {
  const { protocol } = mode;
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
  if (typeof value === 'string') return writeString(value, shape, mode, out, nested);
  if (Array.isArray(value)) return writeArray(value, shape, mode, out);
  // Not a value the upstream sends; keep the connection's framing intact.
  out.push(Buffer.from(`-ERR upstream sent an unexpected JSON value in a transaction result\r\n`));
}

function writeString(text: string, shape: ReplyShape, mode: Mode, out: Buffer[], nested: boolean): void {
  const { protocol, base64 } = mode;
  if (text === 'OK' && (base64 || shape === 'status' || shape === 'any')) {
    out.push(Buffer.from('+OK\r\n'));
    return;
  }
  if (base64 && (text.length % 4 !== 0 || !BASE64.test(text))) {
    // An error reply nested in an array (top-level errors are {"error": …} items).
    out.push(errorReply(text));
    return;
  }
  const bytes = base64 ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
  if (shape === 'status' || (nested && shape === 'any' && bytes.equals(OK_BYTES))) {
    out.push(Buffer.from('+'), bytes, Buffer.from('\r\n'));
  } else if (shape === 'double' && protocol === 3) {
    out.push(Buffer.from(','), bytes, Buffer.from('\r\n'));
  } else if (shape === 'verbatim' && protocol === 3) {
    out.push(Buffer.from(`=${bytes.length + 4}\r\ntxt:`), bytes, Buffer.from('\r\n'));
  } else {
    out.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
}

function writeArray(items: unknown[], shape: ReplyShape, mode: Mode, out: Buffer[]): void {
  const { protocol } = mode;
  const n = items.length;
  if (typeof shape === 'string' || protocol === 2) {
    // RESP2 (and leaves): the array as it came; maps and pairs are flat arrays already.
    out.push(Buffer.from(`*${n}\r\n`));
    if (typeof shape !== 'string' && shape.kind === 'map') return writeMapItems(items, shape, mode, out);
    if (typeof shape !== 'string' && shape.kind === 'pairs') {
      for (let i = 0; i < n; i++) write(items[i], i % 2 === 0 ? shape.first : shape.second, mode, out, true);
      return;
    }
    for (let i = 0; i < n; i++) write(items[i], itemShape(shape, i), mode, out, true);
    return;
  }
  switch (shape.kind) {
    case 'array':
    case 'tuple':
      out.push(Buffer.from(`*${n}\r\n`));
      for (let i = 0; i < n; i++) write(items[i], itemShape(shape, i), mode, out, true);
      return;
    case 'set':
      out.push(Buffer.from(`~${n}\r\n`));
      for (const item of items) write(item, shape.of, mode, out, true);
      return;
    case 'pairs':
      if (n % 2 !== 0) return writeArray(items, 'any', mode, out);
      out.push(Buffer.from(`*${n / 2}\r\n`));
      for (let i = 0; i < n; i += 2) {
        out.push(Buffer.from('*2\r\n'));
        write(items[i], shape.first, mode, out, true);
        write(items[i + 1], shape.second, mode, out, true);
      }
      return;
    case 'map': {
      const nested = shape.resp2 === 'nested';
      if (nested ? !items.every((e) => Array.isArray(e) && e.length === 2) : n % 2 !== 0) return writeArray(items, 'any', mode, out);
      out.push(Buffer.from(`%${nested ? n : n / 2}\r\n`));
      return writeMapItems(items, shape, mode, out);
    }
  }
}

/** The entries of a map (after its header): flat key, value, … or nested [key, value] arrays (RESP2 keeps those headers). */
function writeMapItems(items: unknown[], shape: Extract<ReplyShape, { kind: 'map' }>, mode: Mode, out: Buffer[]): void {
  const { protocol } = mode;
  const nested = shape.resp2 === 'nested';
  const step = nested ? 1 : 2;
  for (let i = 0; i < items.length; i += step) {
    let key: unknown;
    let value: unknown;
    if (nested) {
      const entry = items[i];
      if (!Array.isArray(entry) || entry.length !== 2) {
        write(entry, 'any', mode, out, true);
        continue;
      }
      if (protocol === 2) out.push(Buffer.from('*2\r\n'));
      [key, value] = entry;
    } else {
      key = items[i];
      value = items[i + 1];
    }
    write(key, shape.key, mode, out, true);
    write(value, shape.fields ? (shape.fields[fieldName(key, mode.base64)] ?? shape.value) : shape.value, mode, out, true);
  }
}

function fieldName(key: unknown, base64: boolean): string {
  if (typeof key !== 'string' || key === 'OK' || !base64 || !BASE64.test(key)) return typeof key === 'string' ? key : '';
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
