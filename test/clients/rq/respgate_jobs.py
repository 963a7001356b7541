# Jobs of test/clients/rq.test.ts, imported by RQ's worker (a real `rq worker` process through the
# proxy). Each run records itself in the hash rq-test:done (HINCRBY: a job run twice shows 2).
from rq import get_current_job


def record(n, payload):
    job = get_current_job()
    job.connection.hincrby('rq-test:done', job.id, 1)
    return n * 2, len(payload)


def boom(n):
    raise ValueError(f'job {n} fails on purpose (the test wants it in the failed registry)')
