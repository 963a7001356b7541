// Reply writers of the vector-set commands: element lists with their fields (VSIM, VSCAN), records
// (VFETCH), vectors (VEMB) and attribute text.
import type { ReplyWriter } from '../../resp/reply-writer.js';
import type { SparseVector, VectorRecord } from '../../upstream/vector-client.js';
import { attributesText } from './attributes.js';
import { grisu2 } from './grisu.js';
import { elementName } from './element-names.js';

/**
 * A double as Redis 8 prints it (d2string): a whole number as an integer, else fpconv's digits (Grisu2, grisu.ts: shortest but for some doubles, which
 * get 17 digits) in fpconv's layout (`0.4960629642009735`, `0.000025`, `1.234e-7`, `1e+20`), where the
 * shared writer follows Redis 7.0's `%.17g`.
 */
export function formatDouble8(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  // Redis' d2string prints whole numbers that fit a long long (within ±2^62) as integers.
  if (Number.isInteger(x) && Math.abs(x) <= 2 ** 62) return BigInt(x).toString();
  const { digits, K: k } = grisu2(x); // |x| = digits × 10^k
  const n = digits.length;
  const exp = Math.abs(k + n - 1);
  const sign = x < 0 ? '-' : '';
  if (k >= 0 && exp < n + 7) return sign + digits + '0'.repeat(k);
  if (k < 0 && (k > -7 || exp < 4)) {
    const point = n + k;
    return sign + (point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : `${digits.slice(0, point)}.${digits.slice(point)}`);
  }
  return `${sign}${digits[0]}${n > 1 ? `.${digits.slice(1)}` : ''}e${k + n - 1 < 0 ? '-' : '+'}${exp}`;
}

/** A double reply in Redis 8's text: RESP3 `,text`, RESP2 a bulk string. */
export function writeDouble(w: ReplyWriter, x: number): void {
  const text = formatDouble8(x);
  if (w.protocol === 2) w.bulk(text);
  else w.raw(Buffer.from(`,${text}\r\n`, 'latin1'));
}

export interface Fields {
  scores: boolean;
  attribs: boolean;
  data: boolean;
}

/**
 * Elements with their requested fields, as VSIM does: no field → an array of names; fields → RESP3 a map
 * name → value (one field) or name → [values] (several); RESP2 a flat array name, value(s), name, ….
 */
export function writeElements(w: ReplyWriter, records: (VectorRecord & { score?: number })[], f: Fields): void {
  const n = (f.scores ? 1 : 0) + (f.attribs ? 1 : 0) + (f.data ? 1 : 0);
  if (n === 0) {
    w.arrayHeader(records.length);
    for (const r of records) w.bulk(elementName(r.id));
    return;
  }
  if (w.protocol === 3) w.mapHeader(records.length);
  else w.arrayHeader(records.length * (1 + n));
  for (const r of records) {
    w.bulk(elementName(r.id));
    if (w.protocol === 3 && n > 1) w.arrayHeader(n);
    if (f.scores) writeDouble(w, r.score ?? 0);
    if (f.attribs) w.bulk(attributesText(r.metadata));
    if (f.data) w.bulk(r.data ?? null);
  }
}

/** Names with their attributes and data, flat in one array (VSCAN's page). */
export function writeFlatElements(w: ReplyWriter, records: VectorRecord[], f: Fields): void {
  const n = 1 + (f.attribs ? 1 : 0) + (f.data ? 1 : 0);
  w.arrayHeader(records.length * n);
  for (const r of records) {
    w.bulk(elementName(r.id));
    if (f.attribs) w.bulk(attributesText(r.metadata));
    if (f.data) w.bulk(r.data ?? null);
  }
}

/** A record as a map (RESP2 flat) of its present fields; null when absent. */
export function writeRecord(w: ReplyWriter, r: VectorRecord | null): void {
  if (!r) return void w.nullBulk();
  const fields: [string, (w: ReplyWriter) => void][] = [['id', (x) => x.bulk(elementName(r.id))]];
  if (r.vector) fields.push(['vector', (x) => writeFloats(x, r.vector!)]);
  if (r.sparseVector) fields.push(['sparse', (x) => writeSparse(x, r.sparseVector!)]);
  const attrs = attributesText(r.metadata);
  if (attrs !== null) fields.push(['attributes', (x) => x.bulk(attrs)]);
  if (r.data !== undefined) fields.push(['data', (x) => x.bulk(r.data!)]);
  writeMap(w, fields);
}

/** A map of named fields (RESP3 `%`, RESP2 flat). */
export function writeMap(w: ReplyWriter, fields: [string, (w: ReplyWriter) => void][]): void {
  w.mapHeader(fields.length);
  for (const [k, write] of fields) {
    w.bulk(k);
    write(w);
  }
}

export function writeFloats(w: ReplyWriter, v: number[]): void {
  w.arrayHeader(v.length);
  for (const x of v) writeDouble(w, x);
}

export function writeSparse(w: ReplyWriter, s: SparseVector): void {
  w.mapHeader(2);
  w.bulk('indices').arrayHeader(s.indices.length);
  for (const i of s.indices) w.integer(i);
  w.bulk('values');
  writeFloats(w, s.values);
}

export function writeNames(w: ReplyWriter, names: (string | Buffer)[]): void {
  w.arrayHeader(names.length);
  for (const n of names) w.bulk(n);
}
