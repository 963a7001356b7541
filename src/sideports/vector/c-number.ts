// C's strtod on a whole string, as Redis' FILTER reads numbers: the value when the text is one number
// and nothing else (leading white space allowed, as strtod skips it), else undefined.

const C_SPACE = /^[ \t\n\v\f\r]*/;

export function strtodWhole(s: string): number | undefined {
  const t = s.slice(C_SPACE.exec(s)![0].length);
  if (t === '') return s === '' ? 0 : undefined;
  const sign = t[0] === '-' ? -1 : 1;
  const body = t[0] === '-' || t[0] === '+' ? t.slice(1) : t;
  if (/^(inf|infinity)$/i.test(body)) return sign * Infinity;
  if (/^nan(\([A-Za-z0-9_]*\))?$/i.test(body)) return NaN;
  if (/^0x/i.test(body)) return hexFloat(body.slice(2), sign);
  if (!/^(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(body)) return undefined;
  return sign * Number(body);
}

/** strtod's hexadecimal form: 0x1.8p3. */
function hexFloat(h: string, sign: number): number | undefined {
  const m = /^([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([-+]?\d+))?$/i.exec(h);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
  const digits = m[1] + (m[2] ?? '');
  let v = 0;
  for (const d of digits) v = v * 16 + parseInt(d, 16);
  const exp = (m[3] ? Number(m[3]) : 0) - 4 * (m[2]?.length ?? 0);
  return sign * v * 2 ** exp;
}
