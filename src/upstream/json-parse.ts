// JSON.parse that keeps integers beyond 2^53 exact (as BigInt): Redis integers are 64-bit, and the
// /multi-exec answer carries them as JSON numbers.

const MARK = '\u0000int:';

export function parseJsonExactIntegers(text: string): unknown {
  let marked: string | undefined;
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let j = i + 1;
      let integer = true;
      while (j < text.length) {
        const d = text.charCodeAt(j);
        if (d >= 48 && d <= 57) j++;
        else if (d === 46 || d === 101 || d === 69 || d === 43 || d === 45) {
          integer = false;
          j++;
        } else break;
      }
      const token = text.slice(i, j);
      if (integer && !Number.isSafeInteger(Number(token))) {
        // Escaped in the JSON text; JSON.parse turns it into MARK + digits.
        marked = (marked ?? '') + text.slice(last, i) + `"\\u0000int:${token}"`;
        last = j;
      }
      i = j - 1;
    }
  }
  if (marked === undefined) return JSON.parse(text);
  return JSON.parse(marked + text.slice(last), (_key, value) =>
    typeof value === 'string' && value.startsWith(MARK) ? BigInt(value.slice(MARK.length)) : value,
  );
}
