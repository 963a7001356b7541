// MONITOR's `[db lua]` lines: the commands a client's script runs, as redis-server shows them right
// after the script's own line. The proxy cannot see inside a script, so it takes these lines from
// the upstream's /monitor stream, and only those of its own clients' scripts: a script command the
// proxy shows (EVAL, EVALSHA, FCALL and their _RO forms) waits for the upstream line that runs it with
// the same arguments; the `lua` lines that follow that line are shown with the client's database.
// `lua` lines of anything else (the proxy's own transaction and WATCH scripts, the platform's scripts,
// other clients of the upstream) are dropped.
//
// Order: the upstream's lines arrive after the script's reply may have reached its client, so the
// proxy's later lines wait behind a script until its `lua` lines came (MATCHED_GRACE_MS after its
// upstream line), or until UNSEEN_MS passed without it (a transaction sent as one script, an
// upstream whose stream shows no script lines): the client reads Redis' order, at the cost of the
// monitor's lines being late by that bound. Nothing of this runs while no client monitors.

/** The script commands whose `lua` lines are shown. */
export const SCRIPT_COMMANDS: ReadonlySet<string> = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** After a script's upstream line: its `lua` lines come in the same burst; later ones are not its. */
const MATCHED_GRACE_MS = 10;
/** A script whose upstream line never comes holds the lines behind it no longer than this. */
const UNSEEN_MS = 500;
/** Scripts waiting for their upstream line, at most (the oldest are given up past it). */
const MAX_WAITING = 1024;

interface Entry {
  line: Buffer;
  /** A script: its arguments as the upstream's monitor line prints them (lower-case name first). */
  key?: string;
  db: number;
  /** Its upstream line came. */
  matched: boolean;
  /** Its line went to the monitors. */
  shown: boolean;
  /** Its `lua` lines are all there (or given up). */
  done: boolean;
  /** `lua` lines that came before the entry's own line was shown. */
  lua: Buffer[];
  timer?: NodeJS.Timeout;
}

/** The order of one proxy's monitor lines, with the `lua` lines of its clients' scripts. */
export class ScriptLines {
  /** Lines not shown yet, in order; the first may be a script already shown, waiting for its `lua` lines. */
  private readonly queue: Entry[] = [];
  /** The script whose `lua` lines the upstream stream is printing now. */
  private active: Entry | undefined;
  private waiting = 0;

  constructor(
    private readonly emit: (line: Buffer) => void,
    private readonly stamp: (nowMs?: number) => string,
  ) {}

  /** A line of the proxy's own; `key` (scriptKey) when it is a script whose `lua` lines will follow upstream. */
  show(line: Buffer, db: number, key?: string): void {
    if (this.queue.length === 0 && key === undefined) return this.emit(line);
    const entry: Entry = { line, key, db, matched: false, shown: false, done: key === undefined, lua: [] };
    if (key !== undefined) {
      entry.timer = setTimeout(() => this.finish(entry), UNSEEN_MS);
      entry.timer.unref();
      if (++this.waiting > MAX_WAITING) this.giveUpOldest();
    }
    this.queue.push(entry);
    this.drain();
  }

  /** One event of the upstream's /monitor stream: `<time> [<db> <client>] "arg" …`. */
  upstream(data: string): void {
    const open = data.indexOf(' [');
    const close = open < 0 ? -1 : data.indexOf('] ', open);
    if (close < 0) return;
    const client = data.slice(data.indexOf(' ', open + 2) + 1, close);
    const args = data.slice(close + 2);
    if (client === 'lua') {
      const entry = this.active;
      if (!entry) return;
      const line = Buffer.from(`+${this.stamp()} [${entry.db} lua] ${args}\r\n`, 'latin1');
      if (this.queue[0] === entry) this.emit(line);
      else entry.lua.push(line);
      return;
    }
    // Any other line ends the `lua` lines of the script before it.
    if (this.active) this.finish(this.active);
    const key = upstreamKey(args);
    if (key === undefined) return;
    // Not one given up already (its place in the order is gone).
    const entry = this.queue.find((e) => e.key === key && !e.matched && !e.done);
    if (!entry) return;
    entry.matched = true;
    this.waiting--;
    this.active = entry;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.finish(entry), MATCHED_GRACE_MS);
    entry.timer.unref();
  }

  /** No more monitors: nothing waits. */
  clear(): void {
    for (const e of this.queue) clearTimeout(e.timer);
    this.queue.length = 0;
    this.active = undefined;
    this.waiting = 0;
  }

  private finish(entry: Entry): void {
    if (entry.done) return;
    entry.done = true;
    clearTimeout(entry.timer);
    if (!entry.matched) this.waiting--;
    if (this.active === entry) this.active = undefined;
    this.drain();
  }

  /** Shows the lines in order; a script shown but not done holds the rest. */
  private drain(): void {
    while (this.queue.length > 0) {
      const first = this.queue[0];
      if (!first.shown) {
        first.shown = true;
        this.emit(first.line);
        for (const l of first.lua) this.emit(l);
        first.lua.length = 0;
      }
      if (!first.done) return;
      this.queue.shift();
    }
  }

  private giveUpOldest(): void {
    const oldest = this.queue.find((e) => e.key !== undefined && !e.matched && !e.done);
    if (oldest) this.finish(oldest);
  }
}

/** A script command's arguments as a monitor line prints them, name lower-cased: its key in ScriptLines. */
export function scriptKey(name: string, quoted: string[]): string {
  return [`"${name}"`, ...quoted.slice(1)].join(' ');
}

/** The key of an upstream line that runs a script command (its name lower-cased), or undefined. */
function upstreamKey(args: string): string | undefined {
  const end = args.indexOf('"', 1);
  if (args[0] !== '"' || end < 0) return undefined;
  const name = args.slice(1, end).toLowerCase();
  if (!SCRIPT_COMMANDS.has(name)) return undefined;
  return `"${name}"${args.slice(end + 1)}`;
}
