// The path form of an Area B command, for commands JSON cannot carry (an argument that is not
// valid UTF-8): `POST /{arg1}/{arg2}/…` with each argument percent-encoded as a path segment, and
// the last argument as the raw request body (spec 4.2: "Body: a JSON or binary value, appended as
// the last argument"). The upstream decodes each segment back to raw bytes.
import { isUtf8 } from 'node:buffer';

export interface PathFormRequest {
  /** Path below the base URL, starting with `/`. */
  path: string;
  /** The last argument, or null when it travels in the path. */
  body: Buffer | null;
}

/**
 * Builds the request for one command (at least one argument). The last argument goes as the body,
 * except when it is the only argument (a body alone would be read as a JSON command) or empty (an
 * empty body adds no argument): then it is an extra path segment, possibly an empty trailing one.
 */
export function pathForm(command: readonly Buffer[]): PathFormRequest {
  const last = command[command.length - 1];
  const bodyArg = command.length > 1 && last.length > 0;
  const inPath = bodyArg ? command.length - 1 : command.length;
  let path = '';
  for (let i = 0; i < inPath; i++) path += '/' + percentEncode(command[i]);
  return { path, body: bodyArg ? last : null };
}

/** Percent-encodes raw bytes as one path segment; only RFC 3986 unreserved characters stay as they are. */
export function percentEncode(bytes: Buffer): string {
  if (isUtf8(bytes)) return encodeURIComponent(bytes.toString('utf8'));
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += BYTE_TO_SEGMENT[bytes[i]];
  return out;
}

const BYTE_TO_SEGMENT: string[] = Array.from({ length: 256 }, (_, b) => {
  const c = String.fromCharCode(b);
  return /[A-Za-z0-9\-._~]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
});
