// Self time by function of a `node --cpu-prof` profile (e.g. from bench/cpu-per-command.ts --profile DIR):
// where a process spends its busy time, in % of the samples that were not idle.
//
//   npx tsx bench/profile-summary.ts DIR/proxy-….cpuprofile [top=25]
//   npx tsx bench/profile-summary.ts FILE 40 --skip 10         # leave out the first 10 s (start-up, warm-up)
//   npx tsx bench/profile-summary.ts FILE 40 --per 300000      # also ms of self time and µs per command
//                                                              # for that many commands in the profiled span
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const option = (name: string): number | undefined => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(argv[i + 1]);
  argv.splice(i, 2);
  return value;
};
const skipUs = (option('--skip') ?? 0) * 1e6;
const per = option('--per');
const file = argv[0];
const top = Number(argv[1] ?? 25);
if (!file) throw new Error('give a .cpuprofile file: npx tsx bench/profile-summary.ts FILE [top] [--skip S] [--per N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let busy = 0;
let busyUs = 0;
let at = 0;
let counted = 0;
for (let i = 0; i < profile.samples.length; i++) {
  // A sample's time is the delta to the next one (what that function held).
  const delta = profile.timeDeltas[i + 1] ?? 0;
  at += profile.timeDeltas[i];
  if (at < skipUs) continue;
  counted++;
  const { functionName, url, lineNumber } = byId.get(profile.samples[i])!.callFrame;
  if (functionName === '(idle)') continue;
  busy++;
  busyUs += delta;
  const where = url ? `${url.replace(/^.*\/(src|node_modules)\//, '$1/').replace(/^node:/, 'node:')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + delta);
}
console.log(
  `${file}: ${busy} busy samples of ${counted}${skipUs ? ` (after the first ${skipUs / 1e6} s)` : ''}, ${(busyUs / 1000).toFixed(0)} ms busy${per ? `, ${(busyUs / per).toFixed(3)} µs per command` : ''}`,
);
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  const perCommand = per ? `  ${(us / per).toFixed(3).padStart(7)} µs` : '';
  console.log(`${((100 * us) / busyUs).toFixed(1).padStart(5)}%${perCommand}  ${key}`);
}
