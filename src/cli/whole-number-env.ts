// The V8 tuning variables (RESPGATE_SEMI_SPACE_MIB, RESPGATE_RELEASE_AFTER_MS) are whole numbers read
// from the environment only; one reader gives them the same parsing and the same error text.
import { ConfigError } from '../config.js';

/**
 * A whole-number variable: undefined when unset or empty, else its value; anything else is a
 * configuration error naming the variable, its unit and what 0 means (`unit`, e.g. "MiB (0: V8's own growth)").
 */
export function wholeNumberEnv(env: NodeJS.ProcessEnv, name: string, unit: string): number | undefined {
  const asked = env[name]?.trim();
  if (asked === undefined || asked === '') return undefined;
  const value = Number(asked);
  if (!/^\d+$/.test(asked) || !Number.isSafeInteger(value))
    throw new ConfigError(`${name} must be a whole number of ${unit}, not '${asked}'`);
  return value;
}
