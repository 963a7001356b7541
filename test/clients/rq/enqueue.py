# Enqueues the jobs of test/clients/rq.test.ts with RQ's own client, through the proxy: each enqueue
# is a MULTI/EXEC carrying the pickled (binary) job data. Usage: python3 enqueue.py PORT COUNT
import sys

import redis
from rq import Queue

import respgate_jobs

port, count = int(sys.argv[1]), int(sys.argv[2])
queue = Queue('default', connection=redis.Redis(port=port))
for n in range(count - 1):
    queue.enqueue(respgate_jobs.record, n, bytes(range(256)), job_id=f'job-{n}')
queue.enqueue(respgate_jobs.boom, count - 1, job_id='job-boom')
print(f'enqueued {len(queue)}')
