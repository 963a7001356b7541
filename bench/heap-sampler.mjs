// Preload for bench/alloc-per-command.ts (node --import bench/heap-sampler.mjs …): the first SIGUSR2 starts
// V8's sampling heap profiler counting every allocation, also the objects a scavenge or a full collection
// has freed since (node --heap-prof counts only what is still alive when it stops); the next SIGUSR2
// writes the profile to $HEAP_SAMPLE_DIR/heap-<pid>.heapprofile.
import { writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const session = new inspector.Session();
session.connect();
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return;
  }
  sampling = false;
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) return void console.error('heap-sampler:', err.message);
    const file = path.join(process.env.HEAP_SAMPLE_DIR ?? '.', `heap-${process.pid}.heapprofile`);
    writeFileSync(file, JSON.stringify(result.profile));
  });
});
