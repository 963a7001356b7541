// Shared by the micro-benchmarks: warm up, then the median rate of several timed rounds.

/** Runs `round` (which returns how many operations it did) and prints the median operations/s. */
export function measure(name: string, unit: string, round: () => number, rounds = 7): number {
  for (let i = 0; i < 3; i++) round(); // warm up: JIT
  const rates: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    const n = round();
    rates.push(n / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  rates.sort((a, b) => a - b);
  const median = rates[rates.length >> 1];
  console.log(`${name.padEnd(44)} ${Math.round(median).toLocaleString('en-US').padStart(13)} ${unit}/s  (median of ${rounds})`);
  return median;
}

/** The same for asynchronous rounds. */
export async function measureAsync(name: string, unit: string, round: () => Promise<number>, rounds = 7): Promise<number> {
  for (let i = 0; i < 3; i++) await round();
  const rates: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    const n = await round();
    rates.push(n / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  rates.sort((a, b) => a - b);
  const median = rates[rates.length >> 1];
  console.log(`${name.padEnd(44)} ${Math.round(median).toLocaleString('en-US').padStart(13)} ${unit}/s  (median of ${rounds})`);
  return median;
}
