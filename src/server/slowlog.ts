// The proxy's own SLOWLOG (Redis slowlog.c): commands whose time through the proxy — from the moment
// the command was read to the moment its upstream reply arrived, batching wait included — reached
// --slowlog-log-slower-than microseconds. Newest first, at most `maxLen` entries, arguments trimmed
// the way Redis trims them.

/** Redis' SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING. */
const MAX_ARGC = 32;
const MAX_STRING = 128;

export interface SlowlogEntry {
  id: number;
  /** Unix time in seconds when the command was logged. */
  timestamp: number;
  durationUs: number;
  args: Buffer[];
  client: string;
  clientName: string;
}

export class Slowlog {
  private entries: SlowlogEntry[] = [];
  private nextId = 0;

  /** `slowerThanUs` < 0 disables the log, 0 logs every command (as in Redis); both change with CONFIG SET. */
  constructor(
    public slowerThanUs: number,
    public maxLen: number,
  ) {}

  /** Records the command when it was slow enough; returns whether it did. */
  record(durationUs: number, args: Buffer[], conn: { readonly address: string; readonly name: string }): boolean {
    if (this.slowerThanUs < 0 || durationUs < this.slowerThanUs || this.maxLen === 0) return false;
    this.entries.unshift({
      id: this.nextId++,
      timestamp: Math.floor(Date.now() / 1000),
      durationUs: Math.round(durationUs),
      args: trimArgs(args),
      client: conn.address,
      clientName: conn.name,
    });
    if (this.entries.length > this.maxLen) this.entries.length = this.maxLen;
    return true;
  }

  /** The newest `count` entries (all with -1). */
  get(count: number): SlowlogEntry[] {
    return count < 0 ? [...this.entries] : this.entries.slice(0, count);
  }

  get length(): number {
    return this.entries.length;
  }

  reset(): void {
    this.entries = [];
  }
}

function trimArgs(args: Buffer[]): Buffer[] {
  const kept = args.length > MAX_ARGC ? MAX_ARGC - 1 : args.length;
  const out: Buffer[] = [];
  for (let i = 0; i < kept; i++) {
    const a = args[i];
    out.push(
      a.length > MAX_STRING
        ? Buffer.concat([a.subarray(0, MAX_STRING), Buffer.from(`... (${a.length - MAX_STRING} more bytes)`)])
        : Buffer.from(a),
    );
  }
  if (args.length > MAX_ARGC) out.push(Buffer.from(`... (${args.length - MAX_ARGC + 1} more arguments)`));
  return out;
}
