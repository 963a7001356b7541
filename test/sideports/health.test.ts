// What an operator gets from a side port: readiness from one upstream call (with the reason when the
// upstream is down or refuses the token), and `--metrics-port` of the `vector` and `queue` roles
// answering /metrics, /healthz and /readyz; the banner says how redis-cli users find the commands.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../src/metrics.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { runProcess } from '../helpers/cleanup.js';
import { restartablePort } from '../helpers/ports.js';
import { until } from '../helpers/wait.js';
import { startRespgate, stopRespgate } from '../helpers/respgate-cli.js';
import { queuePort, redisCli, vectorPort } from './harness.js';

const bin = path.resolve(__dirname, '../../bin/respgate');
let platform: RunningPlatform;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await platform?.stop();
});

async function started(s: Promise<RunningSideport>): Promise<RunningSideport> {
  const port = await s;
  cleanups.push(() => port.stop());
  return port;
}

describe('readiness of a side port', () => {
  it('is ready when its upstream answers', async () => {
    const vector = await started(vectorPort({ url: `${platform.url}/vector/dense`, token: platform.token }));
    const queue = await started(queuePort({ url: `${platform.url}/queue`, token: platform.token }));
    expect(await vector.readiness()).toEqual({ ready: true });
    expect(await queue.readiness()).toEqual({ ready: true });
  });

  it('says the token is refused, naming the flag, without the token', async () => {
    const vector = await started(vectorPort({ url: `${platform.url}/vector/dense`, token: 'wrong-token-123' }));
    const queue = await started(queuePort({ url: `${platform.url}/queue`, token: 'wrong-token-123' }));
    const v = await vector.readiness();
    expect(v.ready).toBe(false);
    expect(v.problem).toMatch(/^the vector service refuses the token \(HTTP 401: .+\); check --vector-token$/);
    const q = await queue.readiness();
    expect(q.problem).toMatch(/^the queue service refuses the token \(HTTP 401: .+\); check --queue-token$/);
    expect(JSON.stringify([v, q])).not.toContain('wrong-token-123');
  });

  it('says the upstream does not answer when nothing listens there', async () => {
    const closed = await restartablePort();
    const vector = await started(vectorPort({ url: `http://127.0.0.1:${closed}/vector/dense`, token: 't' }));
    expect(await vector.readiness()).toEqual({
      ready: false,
      problem: `the vector service does not answer: http://127.0.0.1:${closed} unreachable: ECONNREFUSED`,
    });
  });

  it('probes that arrive together share one upstream call', async () => {
    // A real HTTP upstream that counts the calls and answers only when told to.
    let calls = 0;
    let answer: (() => void) | undefined;
    const upstream = http.createServer((req, res) => {
      calls++;
      answer = () => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('[]');
      };
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as AddressInfo;
    const queue = await started(queuePort({ url: `http://127.0.0.1:${port}`, token: 't' }));
    const probes = [queue.readiness(), queue.readiness(), queue.readiness()];
    await until(() => answer !== undefined, 'the probe reaching the upstream');
    answer!();
    expect(await Promise.all(probes)).toEqual([{ ready: true }, { ready: true }, { ready: true }]);
    expect(calls).toBe(1);
    upstream.closeAllConnections();
  });

  it('/readyz of the metrics server answers 200 or 503 with the reason; /metrics shows the side port', async () => {
    const good = await started(vectorPort({ url: `${platform.url}/vector/dense`, token: platform.token }));
    const bad = await started(queuePort({ url: `${platform.url}/queue`, token: 'nope' }));
    const goodMetrics = await startMetricsServer('127.0.0.1', 0, good.readiness);
    const badMetrics = await startMetricsServer('127.0.0.1', 0, bad.readiness);
    cleanups.push(goodMetrics.stop, badMetrics.stop);
    const ready = await fetch(`http://127.0.0.1:${goodMetrics.port}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    const notReady = await fetch(`http://127.0.0.1:${badMetrics.port}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: 'not ready', problem: expect.stringContaining('refuses the token') });
    expect((await fetch(`http://127.0.0.1:${badMetrics.port}/healthz`)).status).toBe(200);
    const client = new IORedis({ port: good.port });
    await client.ping();
    const metrics = await (await fetch(`http://127.0.0.1:${goodMetrics.port}/metrics`)).text();
    expect(metrics).toMatch(/^respgate_vector_sideport_connections [1-9]/m);
    expect(metrics).toMatch(/^respgate_vector_sideport_commands_total [1-9]/m);
    client.disconnect();
  });

  it('a busy metrics port names the flag', async () => {
    const taken = await startMetricsServer('127.0.0.1', 0);
    cleanups.push(taken.stop);
    await expect(startMetricsServer('127.0.0.1', taken.port)).rejects.toThrow(
      `metrics port ${taken.port} on 127.0.0.1 is already in use; choose another with --metrics-port`,
    );
  });
});

describe('the vector and queue roles with --metrics-port', () => {
  it('`respgate vector --metrics-port` serves /metrics, /healthz and /readyz; the banner tells how to find the commands', async () => {
    const { child, output } = await startRespgate(
      ['vector', '--vector-port', '0', '--metrics-port', '0', '--vector-url', `${platform.url}/vector/dense`],
      /health: \/healthz/,
      { RESPGATE_VECTOR_TOKEN: platform.token },
    );
    cleanups.push(() => stopRespgate(child));
    const port = Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]);
    const metricsPort = Number(/metrics: http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(output)![1]);
    expect(output).toContain(`\n  redis-cli -p ${port}\n  commands: help @vector_set`);
    expect(output).toContain('commands: help @vector_set in redis-cli (help VSIM or VSIM HELP for one); HELP from other clients');
    expect(output).not.toContain(platform.token);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).toMatch(/^respgate_vector_sideport_connections 0$/m);
    // What the banner promises: redis-cli lists the group from this port's COMMAND DOCS; other clients send HELP.
    expect(await redisCli(port, ['help', '@vector_set'])).toMatch(/VSIM/);
    expect(await redisCli(port, ['help', 'VSIM'])).toMatch(/summary:.*most similar/);
    // <CMD> HELP shows each option with the token that introduces it.
    expect(await redisCli(port, ['VSIM', 'HELP'])).toContain('[QUERYMODE HYBRID | DENSE | SPARSE] [FUSION RRF | DBSF] [WEIGHTING IDF]');
    const client = new IORedis({ port });
    expect(((await client.call('HELP')) as string[]).join('\n')).toMatch(/VSIM/);
    client.disconnect();
  });

  it('`respgate queue` reads RESPGATE_METRICS_PORT; /readyz is 503 with the reason when the token is refused', async () => {
    const metricsPort = await restartablePort();
    const { child, output } = await startRespgate(['queue', '--queue-port', '0'], /health: \/healthz/, {
      RESPGATE_METRICS_PORT: String(metricsPort),
      RESPGATE_QUEUE_URL: `${platform.url}/queue`,
      RESPGATE_QUEUE_TOKEN: 'not-the-token',
    });
    cleanups.push(() => stopRespgate(child));
    expect(output).toContain(`metrics: http://127.0.0.1:${metricsPort}/metrics`);
    expect(output).toContain('commands: help @queue, help @account in redis-cli (help QPUBLISH or QPUBLISH HELP for one)');
    const port = Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]);
    expect(await redisCli(port, ['help', '@queue'])).toMatch(/QPUBLISH/);
    const readyz = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
    expect(readyz.status).toBe(503);
    expect(((await readyz.json()) as { problem: string }).problem).toMatch(/queue service refuses the token .*--queue-token/);
  });

  it('a busy --metrics-port is a clear error and the process exits', async () => {
    const taken = await startMetricsServer('127.0.0.1', 0);
    cleanups.push(taken.stop);
    const { code, stderr } = await runProcess(
      process.execPath,
      [bin, 'vector', '--vector-port', '0', '--metrics-port', String(taken.port), '--vector-url', `${platform.url}/vector/dense`],
      { env: { ...process.env, RESPGATE_VECTOR_TOKEN: platform.token } },
    );
    expect(code).toBe(1);
    expect(stderr).toContain(`metrics port ${taken.port} on 127.0.0.1 is already in use; choose another with --metrics-port`);
  });
});
