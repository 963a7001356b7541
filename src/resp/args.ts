// Command arguments read the way Redis reads them (util.c string2ll, case-insensitive names).

const MINUS = 45;
const LLONG_MAX_DIGITS = '9223372036854775807';
const LLONG_MIN_DIGITS = '9223372036854775808';

/**
 * Redis' string2ll over buf[s, e): optional '-', then "0" alone or a digit 1-9 and more digits, at most
 * 20 characters, within long long. Returns NaN when Redis would reject it. Values past 2^53 lose
 * precision: callers that need them exactly use parseLongLong.
 */
export function string2ll(buf: Buffer, s: number, e: number): number {
  const len = e - s;
  if (len === 0 || len >= 21) return NaN;
  if (len === 1 && buf[s] === 48) return 0;
  let p = s;
  const neg = buf[p] === MINUS;
  if (neg && ++p === e) return NaN;
  if (buf[p] < 49 || buf[p] > 57) return NaN;
  let v = 0;
  for (let i = p; i < e; i++) {
    const c = buf[i];
    if (c < 48 || c > 57) return NaN;
    v = v * 10 + (c - 48);
  }
  const nd = e - p;
  if (nd > 19) return NaN;
  if (nd === 19) {
    const digits = buf.toString('latin1', p, e);
    if (digits > (neg ? LLONG_MIN_DIGITS : LLONG_MAX_DIGITS)) return NaN;
  }
  return neg ? -v : v;
}

/** A whole argument as Redis' string2ll reads it, exactly (bigint); undefined when it is not such a number. */
export function parseLongLong(arg: Buffer): bigint | undefined {
  return Number.isNaN(string2ll(arg, 0, arg.length)) ? undefined : BigInt(arg.toString('latin1'));
}

/** A command, subcommand or option name, compared case-insensitively (as Redis' strcasecmp). */
export function lower(arg: Buffer): string {
  return arg.toString('latin1').toLowerCase();
}
