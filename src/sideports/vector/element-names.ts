// Element names as Redis has them (any bytes, the empty string too) over a service whose ids are
// non-empty JSON strings: a name that is non-empty UTF-8 is its own id; any other name (bytes that are
// not UTF-8, the empty name, or a name that starts with the marker) is stored as the marker followed by
// its bytes in hex, and read back as those bytes. REST clients of the index see that form.

/** U+E000, the first private-use character: starts an encoded name. */
export const ENCODED_NAME_MARK = '\uE000';

/** The service id of an element name. */
export function elementId(name: Buffer): string {
  const s = name.toString('utf8');
  if (name.length > 0 && !s.startsWith(ENCODED_NAME_MARK) && Buffer.from(s, 'utf8').equals(name)) return s;
  return ENCODED_NAME_MARK + name.toString('hex');
}

/** The element name of a service id (the bytes of an encoded one). */
export function elementName(id: string): string | Buffer {
  if (!id.startsWith(ENCODED_NAME_MARK)) return id;
  const hex = id.slice(1);
  return hex.length % 2 === 0 && /^[0-9a-f]*$/.test(hex) ? Buffer.from(hex, 'hex') : id;
}

/** The bytes of an element name, for ordering as Redis orders names (VRANGE). */
export const nameBytes = (id: string): Buffer => {
  const n = elementName(id);
  return typeof n === 'string' ? Buffer.from(n, 'utf8') : n;
};
