// A small cache from a name's bytes (a command name as the client spelled it) to what it resolves to,
// so the hot path needs no string per name: clients repeat a few spellings, and a latin1 string plus
// a Map lookup per command was a measurable share of the CPU per command (issue 14). Direct-mapped on
// an FNV-1a hash of the bytes: a collision replaces the slot, and a miss asks `resolve`.

/** Longer names are resolved without the cache (no command name is this long). */
const MAX_CACHED = 32;

export class NameCache<T> {
  private readonly names: Array<Buffer | undefined>;
  private readonly values: T[];

  constructor(
    /** The value of a name, from its latin1 text. */
    private readonly resolve: (name: string) => T,
    private readonly slots = 256,
  ) {
    this.names = new Array<Buffer | undefined>(slots).fill(undefined);
    this.values = new Array<T>(slots);
  }

  /** The value of the name in bytes [start, end) of `bytes`. */
  get(bytes: Buffer, start = 0, end = bytes.length): T {
    const len = end - start;
    if (len > MAX_CACHED) return this.resolve(bytes.toString('latin1', start, end));
    let h = 0x811c9dc5;
    for (let k = start; k < end; k++) h = Math.imul(h ^ bytes[k], 0x01000193);
    const slot = (h >>> 0) % this.slots;
    const known = this.names[slot];
    if (known !== undefined && known.length === len) {
      let k = 0;
      while (k < len && known[k] === bytes[start + k]) k++;
      if (k === len) return this.values[slot];
    }
    const value = this.resolve(bytes.toString('latin1', start, end));
    this.names[slot] = Buffer.from(bytes.subarray(start, end));
    this.values[slot] = value;
    return value;
  }
}
