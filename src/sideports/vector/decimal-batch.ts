// Reading the n values of `VALUES n v1 … vn` in one go: the values' bytes are copied into one JSON
// array text (`[v1,v2,…]`) and V8's JSON.parse reads it. A string and a Number() per value cost
// ~270 ns each for the 17-digit values clients print (String of a float32 as a double), so ~100 µs of
// a 384-value VSIM: the side port's largest cost beyond the REST query it wraps, where the platform
// reads the same numbers with one JSON.parse (bench/README.md, "The side port adds almost nothing").
//
// Exactness: JSON.parse converts each number with the same correctly rounded decimal-to-double
// conversion as Number(text) (V8's StringToDouble), and JSON's grammar (a number with optional spaces,
// tabs, CR or LF around it) accepts a subset of what Number(text) accepts, with the same value. The
// arguments are copied as they are, joined by commas, and JSON.parse checks the grammar: the answer is
// taken only when it is an array of exactly n finite numbers. That holds only when each argument is
// one JSON number: every argument fills at least one slot between our commas (an empty slot is a
// syntax error), so n numbers means one per argument, and anything else an argument could hold (a
// comma, brackets, strings, true/null) gives more slots, a non-number element or a syntax error.
// Otherwise (Redis' strtod accepts more: `+1`, `.5`, `1.`, `007`, hexadecimal, inf/nan; or a value
// out of range such as `1e400`) this answers undefined and the caller reads each value itself, with
// its own checks and error texts.

const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;

/** Kept between calls up to this size (a 384-value VSIM needs ~8 KB); larger vectors get their own. */
const KEEP_BYTES = 256 * 1024;
let scratch = Buffer.allocUnsafe(16 * 1024);

/**
 * args[from, from + n) read as doubles, each exactly Number(text); undefined when any of them is not a
 * finite JSON number (the caller then reads them one by one).
 */
export function readDecimals(args: readonly Uint8Array[], from: number, n: number): number[] | undefined {
  let bytes = n + 1;
  for (let k = 0; k < n; k++) bytes += args[from + k].length;
  let out = scratch;
  if (bytes > out.length) {
    out = Buffer.allocUnsafe(bytes);
    if (bytes <= KEEP_BYTES) scratch = out;
  }
  out[0] = OPEN;
  let at = 1;
  for (let k = 0; k < n; k++) {
    const b = args[from + k];
    out.set(b, at);
    at += b.length;
    out[at++] = COMMA;
  }
  out[at - 1] = CLOSE;
  let values: unknown;
  try {
    values = JSON.parse(out.toString('latin1', 0, at));
  } catch {
    return undefined;
  }
  if (!Array.isArray(values) || values.length !== n) return undefined;
  for (let k = 0; k < n; k++) {
    const v: unknown = values[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
  }
  return values as number[];
}
