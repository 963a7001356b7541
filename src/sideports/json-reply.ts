// JSON answers of the REST areas as RESP replies: objects become maps (RESP3 `%`, RESP2 flat arrays
// as Redis flattens maps), arrays arrays, strings bulk strings, whole numbers integers, other numbers
// doubles, booleans booleans (RESP2 :1/:0), null the null bulk.
import type { ReplyWriter } from '../resp/reply-writer.js';

export function writeJson(w: ReplyWriter, value: unknown): void {
  if (value === null || value === undefined) {
    w.nullBulk();
  } else if (typeof value === 'string') {
    w.bulk(value);
  } else if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) w.integer(value);
    else w.double(value);
  } else if (typeof value === 'boolean') {
    w.boolean(value);
  } else if (Array.isArray(value)) {
    w.arrayHeader(value.length);
    for (const v of value) writeJson(w, v);
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    w.mapHeader(entries.length);
    for (const [k, v] of entries) {
      w.bulk(k);
      writeJson(w, v);
    }
  } else {
    w.bulk(String(value));
  }
}
