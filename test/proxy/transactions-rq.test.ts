// RQ (Python; Debian's python3-rq) enqueues a job with one MULTI/EXEC whose HSET carries the
// pickled job data: binary arguments inside a transaction (issue 11, point 2). Through the proxy the
// job is stored byte for byte and reads back with its arguments.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDataStore, startStack, type Stack } from '../helpers/stack.js';

const run = promisify(execFile);
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('RQ through the proxy', () => {
  it('enqueues a job (pickled data in a transaction) and reads it back intact', async () => {
    const script = `
import sys, redis
from rq import Queue
from rq.job import Job
conn = redis.Redis(port=int(sys.argv[1]))
q = Queue('default', connection=conn)
job = q.enqueue('builtins.len', b'\\x00\\xff\\x80 binary \\r\\n', job_id='job-1')
back = Job.fetch('job-1', connection=conn)
print(len(q), back.func_name, repr(back.args))
`;
    const { stdout } = await run('/usr/bin/python3', ['-c', script, String(stack.proxy.port)], { timeout: 30_000 });
    expect(stdout.trim()).toBe("1 builtins.len (b'\\x00\\xff\\x80 binary \\r\\n',)");
    // The job hash's data field in the upstream's own store is the pickle RQ wrote (zlib-compressed, binary).
    const store = await connectDataStore(stack);
    try {
      const data = await store.hgetBuffer('rq:job:job-1', 'data');
      expect(data).not.toBeNull();
      expect(data!.subarray(0, 2).equals(Buffer.from([0x78, 0x9c]))).toBe(true);
      expect(await store.lrange('rq:queue:default', 0, -1)).toEqual(['job-1']);
    } finally {
      store.disconnect();
    }
  }, 60_000);
});
