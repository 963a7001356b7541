// CLIENT PAUSE and CLIENT UNPAUSE for the proxy's own clients (Redis 7.0 networking.c pauseClients,
// server.c processCommand): while a pause lasts, a command of a client of this proxy that it covers
// (ALL: every command; WRITE: commands flagged write or may_replicate, and an EXEC whose queue holds
// one) waits, with every later command of its connection, until the pause ends (its timeout, or CLIENT
// UNPAUSE), then runs in order. A MONITOR connection is a replica to Redis and is never paused. A new
// pause never shortens the current one nor makes it weaker (ALL stays ALL), as in Redis.
//
// Only this proxy's clients pause: other clients of the upstream (other proxies, REST callers) go on.
import { parseLongLong } from '../resp/args.js';
import type { CommandSpec } from '../commands/table.js';
import type { PauseState } from './context.js';
import { errorReply, OK } from './replies.js';

type Mode = 'write' | 'all';

interface Pause {
  mode: Mode;
  endsAt: number;
  timer: NodeJS.Timeout | undefined;
  ended: Promise<void>;
  end: () => void;
}

const isWrite = (spec: CommandSpec) => spec.flags.has('write') || spec.flags.has('may_replicate');

/** The pause of one proxy (ServerState.pause). */
export class PauseControl implements PauseState {
  private pause: Pause | undefined;
  /** Connections whose MULTI queue holds a write (an EXEC that WRITE pauses). */
  private readonly queuedWrites = new WeakSet<object>();

  /** CLIENT PAUSE timeout [WRITE|ALL]: argument errors as networking.c answers them. */
  start(args: Buffer[]): Buffer {
    if (args.length > 4) return errorReply("ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.");
    const ms = parseLongLong(args[2]);
    if (ms === undefined) return errorReply('ERR timeout is not an integer or out of range');
    if (ms < 0n) return errorReply('ERR timeout is negative');
    let mode: Mode = 'all';
    if (args.length === 4) {
      const word = args[3].toString('latin1').toLowerCase();
      if (word !== 'write' && word !== 'all') return errorReply('ERR CLIENT PAUSE mode must be WRITE or ALL');
      mode = word;
    }
    const endsAt = Date.now() + Number(ms > 2_000_000_000_000n ? 2_000_000_000_000n : ms);
    const current = this.pause;
    if (current) {
      if (mode === 'all') current.mode = 'all';
      if (endsAt > current.endsAt) this.schedule(current, endsAt);
      return OK;
    }
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    this.pause = { mode, endsAt, timer: undefined, ended, end };
    this.schedule(this.pause, endsAt);
    return OK;
  }

  /** CLIENT UNPAUSE: the paused commands run now, in order. */
  stop(): Buffer {
    const pause = this.pause;
    if (pause) {
      this.pause = undefined;
      clearTimeout(pause.timer);
      pause.end();
    }
    return OK;
  }

  /** The pause `spec` must wait for on this connection, or undefined when it runs now. */
  until(conn: object, spec: CommandSpec, monitoring: boolean): Promise<void> | undefined {
    const pause = this.pause;
    if (!pause || monitoring) return undefined;
    if (pause.mode === 'all') return pause.ended;
    if (isWrite(spec) || (spec.name === 'exec' && this.queuedWrites.has(conn))) return pause.ended;
    return undefined;
  }

  /** MULTI's queue, for WRITE pauses of EXEC: a queued command; undefined at MULTI, EXEC, DISCARD. */
  noteQueued(conn: object, spec: CommandSpec | undefined): void {
    if (spec === undefined) this.queuedWrites.delete(conn);
    else if (isWrite(spec)) this.queuedWrites.add(conn);
  }

  private schedule(pause: Pause, endsAt: number): void {
    clearTimeout(pause.timer);
    pause.endsAt = endsAt;
    pause.timer = setTimeout(
      () => {
        if (this.pause === pause) this.stop();
      },
      Math.max(0, endsAt - Date.now()),
    );
    pause.timer.unref();
  }
}
