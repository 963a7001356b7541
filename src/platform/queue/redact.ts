// Upstash-Redact-Fields: parts of a message shown as REDACTED:<SHA-256 hex> by the API (messages,
// DLQ, logs, schedules) while the endpoint still gets the original values. The service's reference
// names `body`, `headers` and `headers[Name]`; the SDK sends `header` and `header[Name]`: both taken.
import { createHash } from 'node:crypto';
import { badRequest } from './errors.js';

/** Headers as name → values (publish-options' HeaderMap; not imported, publish-options imports this module). */
type HeaderMap = Record<string, string[]>;

export interface Redaction {
  body: boolean;
  allHeaders: boolean;
  /** Lowercase names of the headers redacted one by one. */
  headers: string[];
}

export function readRedaction(value: string | undefined): Redaction | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const r: Redaction = { body: false, allHeaders: false, headers: [] };
  for (const part of value.split(',').map((p) => p.trim())) {
    const named = /^headers?\[([^\]]+)\]$/i.exec(part);
    if (part === 'body') r.body = true;
    else if (part === 'header' || part === 'headers') r.allHeaders = true;
    else if (named) r.headers.push(named[1].trim().toLowerCase());
    else
      throw badRequest(`invalid Upstash-Redact-Fields header value '${value}': use body, headers or headers[Header-Name], comma-separated`);
  }
  return r;
}

export const redacted = (value: Buffer | string): string => `REDACTED:${createHash('sha256').update(value).digest('hex')}`;

export function redactHeaders(r: Redaction | undefined, header: HeaderMap): HeaderMap {
  if (!r || (!r.allHeaders && r.headers.length === 0)) return header;
  const out: HeaderMap = {};
  for (const [name, values] of Object.entries(header))
    out[name] = r.allHeaders || r.headers.includes(name.toLowerCase()) ? values.map(redacted) : values;
  return out;
}

/** The body fields of a view: `body` (text), `bodyBase64` (binary), or the redacted form; none when empty. */
export function bodyFields(body: Buffer, r: Redaction | undefined, showEmpty = true): { body?: string; bodyBase64?: string } {
  if (body.length === 0 && !showEmpty) return {};
  if (r?.body) return { body: redacted(body) };
  const text = body.toString('utf8');
  return Buffer.from(text, 'utf8').equals(body) ? { body: text } : { bodyBase64: body.toString('base64') };
}
