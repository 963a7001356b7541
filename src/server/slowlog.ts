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
  readonly args: Buffer[];
  client: string;
  clientName: string;
}

/**
 * An entry holds its trimmed arguments as one copied block and where each ends; the argument Buffers
 * are made when SLOWLOG GET reads them. At -P 16 with 50 clients nearly every command is logged and
 * most entries are dropped unread: a view per argument at logging time was ~2 300 bytes of garbage per
 * MSET (heap sampling profile), more than everything else the proxy allocates for it.
 */
class Entry implements SlowlogEntry {
  constructor(
    readonly id: number,
    readonly timestamp: number,
    readonly durationUs: number,
    private readonly block: Buffer,
    /** End offset in `block` of each argument. */
    private readonly ends: number[],
    readonly client: string,
    readonly clientName: string,
  ) {}

  get args(): Buffer[] {
    const out: Buffer[] = [];
    for (let i = 0, from = 0; i < this.ends.length; from = this.ends[i++]) out.push(this.block.subarray(from, this.ends[i]));
    return out;
  }
}

export class Slowlog {
  /**
   * Oldest first; only the newest `visible` count. At `-P 16` with 50 clients nearly every command
   * waits past 10 ms, so this runs per command: appending (and dropping old entries 16 at a time) costs far less than unshift and truncate per entry, which reallocated the array each time.
   */
  private entries: Entry[] = [];
  /** Entries SLOWLOG shows: Redis trims to slowlog-max-len when it adds one, not when the setting changes. */
  private visible = 0;
  private nextId = 0;

  /** `slowerThanUs` < 0 disables the log, 0 logs every command (as in Redis); both change with CONFIG SET. */
  constructor(
    public slowerThanUs: number,
    public maxLen: number,
  ) {}

  /** Whether a command of this duration is logged (record() would keep it). */
  logs(durationUs: number): boolean {
    return !(this.slowerThanUs < 0 || durationUs < this.slowerThanUs || this.maxLen === 0);
  }

  /** Records the command when it was slow enough; returns whether it did. */
  record(durationUs: number, args: Buffer[], conn: { readonly address: string; readonly name: string }): boolean {
    if (!this.logs(durationUs)) return false;
    const { block, ends } = trimArgs(args);
    this.entries.push(
      new Entry(this.nextId++, Math.floor(Date.now() / 1000), Math.round(durationUs), block, ends, conn.address, conn.name),
    );
    this.visible = Math.min(this.visible + 1, this.maxLen);
    if (this.entries.length >= this.visible + DROP_EVERY) this.entries.splice(0, this.entries.length - this.visible);
    return true;
  }

  /** The newest `count` entries (all with -1), newest first. */
  get(count: number): SlowlogEntry[] {
    const n = count < 0 ? this.visible : Math.min(count, this.visible);
    const out: SlowlogEntry[] = [];
    for (let i = this.entries.length - 1; out.length < n; i--) out.push(this.entries[i]);
    return out;
  }

  get length(): number {
    return this.visible;
  }

  reset(): void {
    this.entries = [];
    this.visible = 0;
  }
}

/**
 * Entries past the visible ones kept before they are dropped together. Small: every entry holds copies
 * of its arguments (slices of Node's 8 KiB buffer pools, which they keep alive), so entries kept longer
 * reach the old generation; with 256 the dev stack's garbage collection per command was 2-5x base's at
 * -P 16 (bench/README.md, run F), with 16 it is back to base's.
 */
const DROP_EVERY = 16;

/**
 * The arguments as Redis keeps them (at most MAX_ARGC, each cut to MAX_STRING bytes with a note of the
 * rest), copied into one buffer: one pool slice per entry instead of one per argument (at -P 16 every
 * command is logged, and an MSET's 21 copies were most of the dev stack's SLOWLOG cost). The argument
 * views are made when SLOWLOG GET reads them.
 */
function trimArgs(args: Buffer[]): { block: Buffer; ends: number[] } {
  const kept = args.length > MAX_ARGC ? MAX_ARGC - 1 : args.length;
  let total = 0;
  for (let i = 0; i < kept; i++) total += args[i].length > MAX_STRING ? MAX_STRING + 40 : args[i].length;
  const block = Buffer.allocUnsafe(total + (args.length > MAX_ARGC ? 40 : 0));
  const ends = new Array<number>(kept + (args.length > MAX_ARGC ? 1 : 0));
  let o = 0;
  for (let i = 0; i < kept; i++) {
    const a = args[i];
    if (a.length > MAX_STRING) {
      o += a.copy(block, o, 0, MAX_STRING);
      o += block.write(`... (${a.length - MAX_STRING} more bytes)`, o, 'latin1');
    } else o += a.copy(block, o);
    ends[i] = o;
  }
  if (args.length > MAX_ARGC) {
    o += block.write(`... (${args.length - MAX_ARGC + 1} more arguments)`, o, 'latin1');
    ends[kept] = o;
  }
  return { block, ends };
}
