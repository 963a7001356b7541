// Option parsing as data: a command's optional arguments are a table from the option's name to what it
// does to the parse state (reading its values from the cursor), so each command lists its options once.
import { ArgCursor } from '../args.js';

/** What one option does: updates the state, reading the option's values from the cursor. */
export type OptionTable<S> = Record<string, (state: S, cur: ArgCursor, option: string) => void>;

/** Reads every remaining argument as an option of `table`; an unknown one is a syntax error naming it. */
export function readOptions<S>(cur: ArgCursor, table: OptionTable<S>, command: string, state: NoInfer<S>): S {
  while (!cur.done) {
    const option = cur.option();
    const apply = Object.hasOwn(table, option) ? table[option] : undefined;
    if (!apply) cur.unknown(command);
    apply(state, cur, option);
  }
  return state;
}

/** An option that only sets a flag. */
export const flag =
  <S>(set: (state: S) => void) =>
  (state: S): void =>
    set(state);

/** An option that is accepted and has no effect here. */
export const ignored = (): void => {};
