// Option parsing as data: a command's optional arguments are a table from the option's name to what it
// does to the parse state (reading its values from the cursor), so each command lists its options once.
import { ArgCursor, CommandError, SYNTAX_ERROR } from '../args.js';

/** What one option does: updates the state, reading the option's values from the cursor. */
export type OptionTable<S> = Record<string, (state: S, cur: ArgCursor, option: string) => void>;

/**
 * Reads every remaining argument as an option of `table`. An unknown option, or one missing its value,
 * is `redisError` when Redis has a text for it (`ERR syntax error in VSIM command`), else a syntax
 * error naming the option.
 */
export function readOptions<S>(cur: ArgCursor, table: OptionTable<S>, command: string, state: NoInfer<S>, redisError?: string): S {
  while (!cur.done) {
    const option = cur.option();
    const apply = Object.hasOwn(table, option) ? table[option] : undefined;
    if (!apply) {
      if (redisError) throw new CommandError(redisError);
      cur.unknown(command);
    }
    try {
      apply(state, cur, option);
    } catch (err) {
      if (redisError && err instanceof CommandError && err.message === SYNTAX_ERROR) throw new CommandError(redisError);
      throw err;
    }
  }
  return state;
}

/** A whole number in [min, max] as Redis' StringToLongLong reads it, else the command's own error text. */
export function redisInteger(b: Buffer, min: number, max: number, error: string): number {
  const s = b.toString('latin1');
  if (!/^(0|-?[1-9][0-9]{0,18})$/.test(s)) throw new CommandError(error);
  const n = Number(s);
  if (n < min || n > max) throw new CommandError(error);
  return n;
}

/** An option that only sets a flag. */
export const flag =
  <S>(set: (state: S) => void) =>
  (state: S): void =>
    set(state);

/** An option that is accepted and has no effect here. */
export const ignored = (): void => {};

/** Redis' `RedisModule_WrongArity` text for a vector-set command (a module's: its name in capitals). */
export const wrongArity = (name: string) => new CommandError(`ERR wrong number of arguments for '${name}' command`);
