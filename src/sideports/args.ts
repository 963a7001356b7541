// Argument reading for side-port commands, with Redis' error texts where Redis has one
// ("ERR syntax error", "ERR value is not an integer or out of range") and texts that name the
// problem and the fix where it has none.

import { CommandError } from '../server/command-table.js';

export { CommandError };

export const SYNTAX_ERROR = 'ERR syntax error';

export function text(b: Buffer): string {
  return b.toString('utf8');
}

/** An argument that must survive JSON: valid UTF-8 only (JSON strings cannot carry other bytes). */
export function utf8Arg(b: Buffer, what: string): string {
  const s = b.toString('utf8');
  if (s.includes('\uFFFD') && !Buffer.from(s, 'utf8').equals(b)) {
    throw new CommandError(`ERR ${what} must be valid UTF-8: the service takes it in a JSON string, which cannot carry other bytes`);
  }
  return s;
}

export function upper(b: Buffer): string {
  return b.toString('latin1').toUpperCase();
}

/** Redis' string2ll: optional '-', digits, no leading zero, within 64 bits (as a JS number). */
export function integerArg(b: Buffer, what = 'value'): number {
  const s = b.toString('latin1');
  if (!/^(0|-?[1-9][0-9]{0,18})$/.test(s))
    throw new CommandError(
      what === 'value' ? 'ERR value is not an integer or out of range' : `ERR ${what} is not an integer or out of range`,
    );
  return Number(s);
}

export function positiveIntegerArg(b: Buffer, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = integerArg(b, what);
  if (n < 1 || n > max) throw new CommandError(`ERR ${what} must be a whole number from 1 to ${max}, got '${b.toString('latin1')}'`);
  return n;
}

export function nonNegativeIntegerArg(b: Buffer, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = integerArg(b, what);
  if (n < 0 || n > max) throw new CommandError(`ERR ${what} must be a whole number from 0 to ${max}, got '${b.toString('latin1')}'`);
  return n;
}

/** A finite floating point number as Redis reads it (strtod on the whole argument). */
export function floatArg(b: Buffer, what = 'value'): number {
  const s = b.toString('latin1');
  const n = /^\s*$/.test(s) ? NaN : Number(s);
  if (!Number.isFinite(n)) throw new CommandError(`ERR ${what} is not a valid float: '${s.slice(0, 64)}'`);
  return n;
}

/** Walks the optional arguments after the fixed ones. */
export class ArgCursor {
  constructor(
    readonly args: Buffer[],
    public i: number,
  ) {}

  get done(): boolean {
    return this.i >= this.args.length;
  }

  /** The next word upper-cased (an option name), advancing. */
  option(): string {
    return upper(this.args[this.i++]);
  }

  /** The value after an option; "ERR syntax error" when it is missing (as Redis does). */
  value(): Buffer {
    if (this.i >= this.args.length) throw new CommandError(SYNTAX_ERROR);
    return this.args[this.i++];
  }

  /** n values after an option. */
  values(n: number): Buffer[] {
    if (this.i + n > this.args.length) throw new CommandError(SYNTAX_ERROR);
    const out = this.args.slice(this.i, this.i + n);
    this.i += n;
    return out;
  }

  /** The option just read was not one the command knows. */
  unknown(command: string): never {
    const opt = this.args[this.i - 1].toString('utf8').slice(0, 128);
    // A subcommand (`qqueue|upsert`) is named as typed; its help is the container's.
    const [container] = command.toUpperCase().split('|');
    throw new CommandError(
      `ERR syntax error: unknown option '${opt}' for ${command.toUpperCase().replace('|', ' ')} (see ${container} HELP or HELP ${container})`,
    );
  }
}
