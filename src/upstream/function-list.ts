// Reads FUNCTION LIST WITHCODE's RESP2 reply: for each function, the library code that registers it
// and its flags. A transaction run as one upstream script runs a queued FCALL from that code
// (transaction-scripts.ts), since a script may not call FCALL.
import { arrayElements } from '../resp/reply-scanner.js';

export interface FunctionCode {
  /** The name as registered (Redis' error texts use it). */
  name: string;
  /** The code of its library (starting with its `#!lua name=…` line). */
  code: Buffer;
  flags: string[];
}

/** Functions by lowercase name (FCALL finds a function in any case), or undefined when the reply is not FUNCTION LIST's. */
export function readFunctionList(reply: Buffer): Map<string, FunctionCode> | undefined {
  const libraries = arrayElements(reply);
  if (!libraries) return undefined;
  const out = new Map<string, FunctionCode>();
  for (const library of libraries) {
    const fields = pairs(library);
    const code = fields?.get('library_code');
    const functions = fields?.get('functions');
    const list = functions && arrayElements(functions);
    if (!code || !list || code[0] !== 0x24) return undefined;
    for (const entry of list) {
      const f = pairs(entry);
      const name = f?.get('name');
      const flags = f?.get('flags');
      const flagList = flags && arrayElements(flags);
      if (!name || name[0] !== 0x24 || !flagList) return undefined;
      const text = bulk(name).toString('latin1');
      out.set(text.toLowerCase(), { name: text, code: bulk(code), flags: flagList.map((x) => bulk(x).toString('latin1')) });
    }
  }
  return out;
}

/** A flat array of key, value, key, value… as a map from key text to the raw value reply. */
function pairs(reply: Buffer): Map<string, Buffer> | undefined {
  const items = arrayElements(reply);
  if (!items || items.length % 2 !== 0) return undefined;
  const out = new Map<string, Buffer>();
  for (let i = 0; i < items.length; i += 2) {
    if (items[i][0] !== 0x24) return undefined;
    out.set(bulk(items[i]).toString('latin1'), items[i + 1]);
  }
  return out;
}

/** The bytes of a bulk string reply (`$n\r\n…\r\n`); a status reply's text. */
function bulk(reply: Buffer): Buffer {
  if (reply[0] !== 0x24) return reply.subarray(1, reply.length - 2);
  return reply.subarray(reply.indexOf(10) + 1, reply.length - 2);
}
