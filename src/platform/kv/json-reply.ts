// Turns raw RESP2 reply bytes from redis-server into the JSON values of the REST API:
// integers stay numbers (their digits are copied, so no precision is lost in the JSON text),
// bulk and status strings become JSON strings (base64 when asked, except a top-level status reply OK:
// the official SDK decodes every string inside an array, nested statuses included;
// invalid UTF-8 becomes U+FFFD otherwise), nil becomes null, arrays nest.
import { parseLength } from '../../resp/reply-scanner.js';

export interface JsonOptions {
  base64: boolean;
}

/** `{"result": …}` or `{"error": …}` for one reply. */
export function replyToJsonObject(reply: Buffer, opts: JsonOptions): string {
  if (reply[0] === 0x2d) return `{"error":${JSON.stringify(reply.toString('utf8', 1, reply.length - 2))}}`;
  return `{"result":${replyToJsonValue(reply, opts)}}`;
}

/** The JSON value of one non-error reply. */
export function replyToJsonValue(reply: Buffer, opts: JsonOptions): string {
  const out: string[] = [];
  writeValue(reply, 0, opts, out, 0);
  return out.join('');
}

function writeValue(buf: Buffer, pos: number, opts: JsonOptions, out: string[], depth: number): number {
  const type = buf[pos];
  const lineEnd = buf.indexOf(13, pos + 1);
  const next = lineEnd + 2;
  switch (type) {
    case 0x2b /* + */: {
      const text = buf.subarray(pos + 1, lineEnd);
      const topLevelOk = depth === 0 && text.length === 2 && text[0] === 0x4f && text[1] === 0x4b;
      out.push(opts.base64 && !topLevelOk ? `"${text.toString('base64')}"` : JSON.stringify(text.toString('utf8')));
      return next;
    }
    case 0x2d /* - : an error nested in an array (EXEC, scripts) is shown as its text, never base64: the
      proxy's /multi-exec decoder tells it from base64 strings that way (src/upstream/json-to-resp.ts) */:
      out.push(JSON.stringify(buf.toString('utf8', pos + 1, lineEnd)));
      return next;
    case 0x3a /* : */:
      out.push(buf.toString('latin1', pos + 1, lineEnd));
      return next;
    case 0x24 /* $ */: {
      const len = parseLength(buf, pos + 1, lineEnd);
      if (len < 0) {
        out.push('null');
        return next;
      }
      const data = buf.subarray(next, next + len);
      out.push(opts.base64 ? `"${data.toString('base64')}"` : JSON.stringify(data.toString('utf8')));
      return next + len + 2;
    }
    case 0x2a /* * */: {
      const n = parseLength(buf, pos + 1, lineEnd);
      if (n < 0) {
        out.push('null');
        return next;
      }
      out.push('[');
      let p = next;
      for (let i = 0; i < n; i++) {
        if (i > 0) out.push(',');
        p = writeValue(buf, p, opts, out, depth + 1);
      }
      out.push(']');
      return p;
    }
    default:
      throw new Error(`unexpected RESP2 reply type byte 0x${type.toString(16)} from redis-server`);
  }
}
