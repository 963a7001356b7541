// RESP2 replies of the SEARCH.* commands, built from plain values: the platform answers them itself
// (they never reach redis-server), and the REST layer turns these bytes into JSON as for any reply.

/** A floating-point number: a bulk string in RESP2, as Redis sends doubles. */
export class Double {
  constructor(readonly value: number) {}
}

export type ReplyValue = string | number | Double | null | ReplyValue[] | Buffer;

/** `3` → `3`, `0.1 + 0.2` → `0.30000000000000004`: JavaScript's shortest round-trip form. */
export function formatDouble(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  return String(n);
}

function push(out: Buffer[], value: ReplyValue): void {
  if (value === null) out.push(Buffer.from('$-1\r\n'));
  else if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    out.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  } else if (Buffer.isBuffer(value)) out.push(Buffer.from(`$${value.length}\r\n`), value, CRLF);
  else if (typeof value === 'number') {
    // Integers only; anything else is a Double.
    out.push(Number.isInteger(value) ? Buffer.from(`:${value}\r\n`) : Buffer.from(bulk(formatDouble(value))));
  } else if (value instanceof Double) out.push(Buffer.from(bulk(formatDouble(value.value))));
  else {
    out.push(Buffer.from(`*${value.length}\r\n`));
    for (const v of value) push(out, v);
  }
}

const CRLF = Buffer.from('\r\n');

function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
}

export function encodeReply(value: ReplyValue): Buffer {
  const out: Buffer[] = [];
  push(out, value);
  return Buffer.concat(out);
}

/** An error of a SEARCH.* command: its text becomes a `-ERR …` reply. */
export class SearchError extends Error {}
