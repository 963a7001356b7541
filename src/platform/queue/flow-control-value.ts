// Reads the flow control of a publish: `Upstash-Flow-Control-Key` and `Upstash-Flow-Control-Value:
// parallelism=<n>, rate=<n>, period=<duration>` (the SDK's spelling; a bare period is seconds). Bad
// values are 400s in the service's words ("… should be either rate=X or parallelism=Y, …").
import { parseDuration } from './duration.js';
import { badRequest } from './errors.js';

/** The limits one message asks for its key; 0 = no limit of that kind. */
export interface FlowControlSetting {
  key: string;
  parallelism: number;
  rate: number;
  /** The rate's window in whole seconds (default 1). */
  periodS: number;
}

const SHAPE = 'Upstash-Flow-Control-Value should be either rate=X or parallelism=Y, or both as comma-separated values';
const EXAMPLE = 'for example parallelism=5, rate=10, period=1m';

export function readFlowControl(key: string | undefined, value: string | undefined): FlowControlSetting | undefined {
  if ((key === undefined || key === '') && (value === undefined || value.trim() === '')) return undefined;
  if (key === undefined || key === '')
    throw badRequest(`Upstash-Flow-Control-Key header is missing: Upstash-Flow-Control-Value needs a key to count against (${EXAMPLE})`);
  if (value === undefined || value.trim() === '')
    throw badRequest(`Upstash-Flow-Control-Value header is missing for Upstash-Flow-Control-Key '${key}': ${SHAPE} (${EXAMPLE})`);
  const setting: FlowControlSetting = { key, parallelism: 0, rate: 0, periodS: 1 };
  const seen = new Set<string>();
  for (const part of value.split(',')) {
    const text = part.trim();
    if (text === '') continue;
    const eq = text.indexOf('=');
    const name = (eq < 0 ? text : text.slice(0, eq)).trim().toLowerCase();
    const given = eq < 0 ? '' : text.slice(eq + 1).trim();
    if (!['parallelism', 'rate', 'period'].includes(name) || eq < 0) throw badRequest(`${SHAPE}, got '${text}' (${EXAMPLE})`);
    if (seen.has(name)) throw badRequest(`invalid Upstash-Flow-Control-Value '${value}': ${name} is given twice`);
    seen.add(name);
    if (name === 'period') setting.periodS = periodSeconds(given);
    else setting[name as 'parallelism' | 'rate'] = positiveInteger(name, given);
  }
  if (!seen.has('parallelism') && !seen.has('rate')) throw badRequest(`${SHAPE}, got '${value}' (${EXAMPLE})`);
  return setting;
}

function positiveInteger(name: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    throw badRequest(`invalid Upstash-Flow-Control-Value: ${name} must be a whole number >= 1, got '${text}'`);
  return Number(text);
}

/** A period as the SDK sends it ("10s", "1m", "2h", "1d", or bare seconds): whole seconds, at least 1. */
export function periodSeconds(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000 || ms % 1000 !== 0)
    throw badRequest(
      `invalid Upstash-Flow-Control-Value: period must be a whole number of seconds >= 1 such as 10s, 1m, 1h, 1d or 30, got '${text}'`,
    );
  return ms / 1000;
}
