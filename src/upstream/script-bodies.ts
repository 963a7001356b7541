// The Lua script bodies the proxy has passed on to one upstream (EVAL, EVAL_RO, SCRIPT LOAD), by
// their SHA-1. A transaction that runs as one upstream script (WATCH, binary arguments:
// script-transaction.ts) cannot call EVALSHA (Redis forbids a script to call a script), so it runs
// the body of each queued script itself and needs it: this is where it finds the body of an EVALSHA.
// The map is content-addressed (a SHA-1 names one body for ever), so a body kept after the upstream
// flushed its own cache is never wrong: whether the upstream still has the script is asked before
// each such transaction (SCRIPT EXISTS), as that decides Redis' NOSCRIPT. Bounded: the oldest bodies
// go first.
import { cryptoOnUse } from '../crypto-on-use.js';

/** Bodies kept at most (BullMQ has about 50 scripts, Bull about 30). */
const MAX_SCRIPTS = 2000;
/** Bytes of bodies kept at most. */
const MAX_BYTES = 32 * 1024 * 1024;

export class ScriptBodies {
  private readonly bodies = new Map<string, Buffer>();
  private bytes = 0;

  /** The body of the script `sha` (40 hex digits, any case), if the proxy has passed it on. */
  get(sha: Buffer | string): Buffer | undefined {
    return this.bodies.get(sha.toString('latin1').toLowerCase());
  }

  /** Remembers a body and returns its SHA-1 (lowercase hex, as Redis names it). */
  remember(body: Buffer): string {
    const sha = sha1hex(body);
    const known = this.bodies.get(sha);
    if (known) {
      // Most recently used last: the eviction below takes the oldest first.
      this.bodies.delete(sha);
      this.bodies.set(sha, known);
      return sha;
    }
    if (body.length > MAX_BYTES) return sha;
    this.bodies.set(sha, Buffer.from(body)); // a copy: the argument may be a view into a larger read buffer
    this.bytes += body.length;
    for (const [oldest, b] of this.bodies) {
      if (this.bodies.size <= MAX_SCRIPTS && this.bytes <= MAX_BYTES) break;
      this.bodies.delete(oldest);
      this.bytes -= b.length;
    }
    return sha;
  }

  /** Learns the body a command carries: EVAL/EVAL_RO's script, SCRIPT LOAD's. Cheap for every other command. */
  learn(command: readonly Buffer[]): void {
    const name = command[0];
    if (name === undefined || command.length < 3) return;
    // First byte before any string: MSET, HSET … (4 letters, 3+ arguments) are common and never a script.
    if ((name.length === 4 || name.length === 7) && (name[0] | 0x20) === 0x65) {
      const lower = name.toString('latin1').toLowerCase();
      if (lower === 'eval' || lower === 'eval_ro') this.remember(command[1]);
    } else if (
      name.length === 6 &&
      command.length === 3 &&
      (name[0] | 0x20) === 0x73 &&
      name.toString('latin1').toLowerCase() === 'script'
    ) {
      if (command[1].toString('latin1').toLowerCase() === 'load') this.remember(command[2]);
    }
  }
}

export function sha1hex(body: Buffer | string): string {
  return cryptoOnUse().createHash('sha1').update(body).digest('hex');
}
