// V8's allocation-site pretenuring off, for the process that serves the vector side port.
//
// Pipelined VADDs keep hundreds of requests waiting at once, so V8 learns that the objects made at the
// connection's allocation sites (a request's job and call objects) live long, and from then on makes
// them directly in the old generation. Each such object, dead as soon as its VSIM is answered, still
// points at the young arguments of that VSIM (390 Buffer views for VALUES 384), and a scavenge treats
// every old-to-young pointer as alive: every scavenge then kept the arguments of every VSIM since the
// previous one (3.2 MB, exactly 75 requests' 42 784 bytes), promoted them, and brought a mark-compact
// every 15-20 scavenges. With pretenuring off they die young: 130 KB survive, no mark-compact
// (bench/README.md, "The tail"; docs/decisions.md). V8 reads the flag at each decision, so setting it
// at run time works; it concerns the whole process, whose other parts gain the same.
import v8 from 'node:v8';

let applied = false;

export function avoidPretenuring(): void {
  if (applied) return;
  applied = true;
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
