// Durations as the queue service writes them: "10s", "5m", "1d10h30m", Go-style "1h30m0.5s", and
// a bare integer meaning seconds. Returns milliseconds, or undefined when the text is not one.
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (value === '') return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < value.length) {
    const start = PART.lastIndex;
    const m = PART.exec(value);
    if (!m || m.index !== start) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]];
  }
  return Math.round(total);
}
