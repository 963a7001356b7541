// Repeated runs of the heavy security scripts (flood.ts, chaos-writes.ts, fuzz-proxy.ts): each run
// returns its figures by name, and the summary gives the median and the range of every figure over
// the runs, as bench/README.md records them.

/** Figures of one run, in the order they are printed; a name ends with its unit when it has one. */
export type Figures = Record<string, number>;

/** `--runs N` (default 1). */
export function runsArgument(): number {
  const i = process.argv.indexOf('--runs');
  if (i < 0) return 1;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--runs needs a whole number of runs, 1 or more (got '${process.argv[i + 1]}')`);
  return n;
}

/** Runs `once` `runs` times one after the other, printing each run's figures, then the summary. */
export async function repeatRuns(title: string, runs: number, once: (run: number) => Promise<Figures>): Promise<Figures[]> {
  const all: Figures[] = [];
  for (let run = 1; run <= runs; run++) {
    const figures = await once(run);
    all.push(figures);
    console.log(
      `run ${run}/${runs}: ${Object.entries(figures)
        .map(([k, v]) => `${k} ${format(v)}`)
        .join(', ')}`,
    );
  }
  console.log(`\n${title}: median (range) of ${runs} run${runs === 1 ? '' : 's'}, ${new Date().toISOString().slice(0, 16)} UTC`);
  console.log(summaryTable(all));
  return all;
}

/** The median of the values (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** A Markdown table: figure | median | range. */
export function summaryTable(all: Figures[]): string {
  const rows = Object.keys(all[0] ?? {}).map((name) => {
    const values = all.map((f) => f[name]);
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    return [name, format(median(values)), lo === hi ? 'all equal' : `${format(lo)} – ${format(hi)}`];
  });
  const widths = [0, 1, 2].map((c) => Math.max(...[['figure', 'median', 'range'], ...rows].map((r) => r[c].length)));
  const line = (r: string[]) => `| ${r.map((x, c) => x.padEnd(widths[c])).join(' | ')} |`;
  return [line(['figure', 'median', 'range']), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Whole numbers with a space every three digits (as bench/README.md writes them); halves of medians kept below 1 000. */
function format(n: number): string {
  const value = Math.abs(n) >= 1000 ? Math.round(n) : n;
  return Number.isInteger(value) ? value.toLocaleString('en-US').replace(/,/g, ' ') : value.toFixed(1);
}
