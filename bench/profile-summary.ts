// Self time by function of a `node --cpu-prof` profile (e.g. from bench/cpu-per-command.ts --profile DIR):
// where a process spends its busy time, in % of the samples that were not idle.
//
//   npx tsx bench/profile-summary.ts DIR/proxy-….cpuprofile [top=25]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (!file) throw new Error('give a .cpuprofile file: npx tsx bench/profile-summary.ts FILE [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let busy = 0;
for (const id of profile.samples) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  if (functionName === '(idle)' || (functionName === '(program)' && url === '')) {
    if (functionName === '(idle)') continue;
  }
  busy++;
  const where = url ? `${url.replace(/^.*\/(src|node_modules)\//, '$1/').replace(/^node:/, 'node:')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + 1);
}
console.log(`${file}: ${busy} busy samples of ${profile.samples.length}`);
for (const [key, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((100 * n) / busy).toFixed(1).padStart(5)}%  ${key}`);
}
