// The side ports from the command line: flags and environment variables in --help, configuration
// errors, the dev stack's banner and ports, and the `vector` / `queue` roles against a real platform.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { makeTestCerts } from '../helpers/certs.js';
import { DEFAULT_INDEXES } from '../../src/platform/vector/config.js';
import { startTestPlatform } from '../helpers/platform.js';
import { RawClient } from '../helpers/stack.js';
import { runRespgate, startRespgate, stopRespgate } from '../helpers/respgate-cli.js';
import { until } from '../helpers/wait.js';

const run = promisify(execFile);

describe('help and configuration errors', () => {
  it('dev --help lists the side-port flags with their environment variables; vector and queue roles exist', async () => {
    const top = await runRespgate(['--help']);
    expect(top.stdout).toMatch(/^ {2}vector /m);
    expect(top.stdout).toMatch(/^ {2}queue /m);
    const dev = (await runRespgate(['dev', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const [flag, env] of [
      ['--vector-port', 'RESPGATE_VECTOR_PORT'],
      ['--vector-index', 'RESPGATE_VECTOR_INDEX'],
      ['--queue-port', 'RESPGATE_QUEUE_PORT'],
    ]) {
      expect(dev).toContain(flag);
      expect(dev).toContain(env);
    }
    const vector = (await runRespgate(['vector', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const env of ['RESPGATE_VECTOR_URL', 'RESPGATE_VECTOR_TOKEN', 'RESPGATE_VECTOR_PORT', 'RESPGATE_REQUIREPASS', 'RESPGATE_HOST'])
      expect(vector).toContain(env);
    const queue = (await runRespgate(['queue', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const env of [
      'RESPGATE_QUEUE_URL',
      'RESPGATE_QUEUE_TOKEN',
      'RESPGATE_QUEUE_PORT',
      'RESPGATE_ACCOUNT_URL',
      'RESPGATE_ACCOUNT_EMAIL',
      'RESPGATE_ACCOUNT_KEY',
    ])
      expect(queue).toContain(env);
  });

  it('names the missing or bad setting and the fix', async () => {
    const clean = { UPSTASH_VECTOR_REST_URL: '', UPSTASH_VECTOR_REST_TOKEN: '', QSTASH_URL: '', QSTASH_TOKEN: '' };
    const noUrl = await runRespgate(['vector'], clean);
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain(
      'configuration error: no --vector-url: give --vector-url (or RESPGATE_VECTOR_URL / UPSTASH_VECTOR_REST_URL)',
    );
    const redisUrl = await runRespgate(['vector', '--vector-url', 'redis://localhost:6379', '--vector-token', 't'], clean);
    expect(redisUrl.stderr).toContain("--vector-url must be an http:// or https:// REST URL, got 'redis://…'");
    const noToken = await runRespgate(['queue', '--queue-url', 'http://127.0.0.1:1/queue'], clean);
    expect(noToken.stderr).toContain('no queue token: give --queue-token (or RESPGATE_QUEUE_TOKEN / QSTASH_TOKEN)');
    const halfAccount = await runRespgate(
      ['queue', '--queue-url', 'http://127.0.0.1:1/queue', '--queue-token', 't', '--account-email', 'a@b.c'],
      clean,
    );
    expect(halfAccount.stderr).toContain('the account API needs both --account-email and --account-key');
    const badIndex = await runRespgate(['dev', '--vector-index', 'nope', '--port', '0', '--http-port', '0'], clean);
    expect(badIndex.stderr).toContain(
      "--vector-index 'nope' is not an index of the local platform; choose one of dense, dense-data, sparse, hybrid (or add it with --vector-config)",
    );
    const tlsNoCert = await runRespgate(
      ['vector', '--vector-url', 'http://127.0.0.1:1/vector/dense', '--vector-token', 't', '--vector-tls-port', '7000'],
      clean,
    );
    expect(tlsNoCert.stderr).toContain(
      'configuration error: --vector-tls-port needs --vector-tls-cert-file and --vector-tls-key-file (PEM files)',
    );
    const badMax = await runRespgate(['dev', '--queue-maxclients', '0'], clean);
    expect(badMax.stderr).toContain('configuration error: --queue-maxclients must be at least 1');
    const badPort = await runRespgate(['dev', '--vector-port', 'lots'], clean);
    expect(badPort.stderr).toContain("--vector-port must be a TCP port number from 0 to 65535, got 'lots'");
  });
});

describe('running', () => {
  let platform: RunningPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform({
      vectorIndexes: [...DEFAULT_INDEXES, { name: 'tiny', type: 'DENSE', dimension: 2, similarityFunction: 'COSINE' }],
    });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('the dev stack starts both side ports after the platform and prints redis-cli lines for them', async () => {
    const { child, output } = await startRespgate(
      ['dev', '--port', '0', '--http-port', '0', '--queue-port', '0', '--log-level', 'silent'],
      /Press Ctrl\+C/,
      { RESPGATE_VECTOR_PORT: '0' },
    );
    try {
      const vector = Number(/Vector side port \(VSIM…\)\s+redis:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]);
      const queue = Number(/Queue side port \(QPUBLISH…\)\s+redis:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]);
      expect(output).toContain(`redis-cli -p ${vector}`);
      expect(output).toContain(`redis-cli -p ${queue}`);
      // redis-cli answers HELP itself: the banner names what works there, and HELP for other clients.
      expect(output).toContain('commands: help @vector_set in redis-cli (help VSIM or VSIM HELP for one); HELP from other clients');
      expect(output).toContain('commands: help @queue, help @account in redis-cli (help QPUBLISH or QPUBLISH HELP for one)');
      expect(output).not.toContain('HELP lists the commands');
      // In the dev stack the side ports' series are in the platform's /metrics (docs/vector-sideport.md).
      const http = /Key-value REST API\s+(http:\/\/\S+)/.exec(output)![1];
      const metrics = await (await fetch(`${http}/metrics`)).text();
      expect(metrics).toMatch(/^respgate_vector_sideport_connections \d+$/m);
      expect(metrics).toMatch(/^respgate_queue_sideport_commands_total \d+$/m);
      const v = new IORedis({ port: vector });
      const q = new IORedis({ port: queue });
      // The dev stack's vector side port serves the 384-dimension "dense" index; a key of 2 dimensions
      // gets an index of 2 created on the platform (vset-2), as Redis takes any dimension.
      expect(await v.call('VADD', 'k', 'VALUES', '2', '1', '2', 'a')).toBe(1);
      expect(await v.call('VDIM', 'k')).toBe(2);
      expect(await v.call('VSIM', 'k', 'VALUES', '2', '1', '2')).toEqual(['a']);
      expect(Object.keys(Object.fromEntries(chunk((await q.call('QKEYS', 'GET')) as string[])))).toEqual(['current', 'next']);
      v.disconnect();
      q.disconnect();
    } finally {
      await stopRespgate(child);
    }
  });

  it('--vector-port off leaves the vector side port out', async () => {
    const { child, output } = await startRespgate(
      ['dev', '--port', '0', '--http-port', '0', '--queue-port', '0', '--vector-port', 'off', '--log-level', 'silent'],
      /Press Ctrl\+C/,
    );
    try {
      expect(output).not.toContain('Vector side port');
      expect(output).toContain('Queue side port');
    } finally {
      await stopRespgate(child);
    }
  });

  it('`respgate vector` takes its own TLS listener and limits from flags and RESPGATE_VECTOR_* variables', async () => {
    const certs = makeTestCerts();
    const vec = await startRespgate(
      ['vector', '--vector-port', '0', '--vector-tls-port', '0', '--vector-tls-auth-clients', 'no'],
      /vector side port ready/,
      {
        RESPGATE_VECTOR_URL: `${platform.url}/vector/dense`,
        RESPGATE_VECTOR_TOKEN: platform.token,
        RESPGATE_VECTOR_TLS_CERT_FILE: certs.serverCertFile,
        RESPGATE_VECTOR_TLS_KEY_FILE: certs.serverKeyFile,
        RESPGATE_VECTOR_MAXCLIENTS: '1',
      },
    );
    try {
      const port = Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(vec.output)![1]);
      const tlsPort = Number(/rediss:\/\/127\.0\.0\.1:(\d+)/.exec(vec.output)![1]);
      const cli = await run('redis-cli', ['--tls', '--cacert', certs.caFile, '-p', String(tlsPort), 'ECHO', 'tls']);
      expect(cli.stdout.trim()).toBe('tls');
      // redis-cli's TLS connection counted against maxclients 1 until the port saw it close.
      let first: RawClient | undefined;
      await until(async () => {
        const c = await RawClient.connect(port);
        if ((await c.call(['PING']))[0].toString() === '+PONG\r\n') return Boolean((first = c));
        c.close();
        return false;
      }, 'the TLS client released its slot');
      const second = await RawClient.connect(port);
      expect((await second.untilClosed()).toString()).toBe('-ERR max number of clients reached\r\n');
      first!.close();
    } finally {
      await stopRespgate(vec.child);
      certs.remove();
    }
  });

  it('`respgate vector` and `respgate queue` serve a remote platform given by URL and token (env vars)', async () => {
    const vec = await startRespgate(['vector', '--vector-port', '0', '--requirepass', 'pw'], /vector side port ready/, {
      RESPGATE_VECTOR_URL: `${platform.url}/vector/dense`,
      RESPGATE_VECTOR_TOKEN: platform.token,
      // A second index, of 2 dimensions (entries separated by spaces; without a token: --vector-token's).
      RESPGATE_VECTOR_INDEX: `${platform.url}/vector/tiny`,
    });
    const que = await startRespgate(['queue', '--queue-port', '0'], /queue side port ready/, {
      QSTASH_URL: `${platform.url}/queue`,
      QSTASH_TOKEN: platform.token,
    });
    try {
      expect(vec.output).not.toContain(platform.token);
      const vport = Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(vec.output)![1]);
      const qport = Number(/redis:\/\/127\.0\.0\.1:(\d+)/.exec(que.output)![1]);
      const v = new IORedis({ port: vport, password: 'pw' });
      expect(await v.call('VCARD', 'nothing')).toBe(0);
      expect(await v.call('VADD', 'small', 'VALUES', '2', '1', '2', 'a')).toBe(1);
      expect(await v.call('VDIM', 'small')).toBe(2);
      await v.call('DEL', 'small');
      v.disconnect();
      const q = new IORedis({ port: qport });
      expect(await q.call('QQUEUE', 'LIST')).toEqual([]);
      await expect(q.call('ACCOUNT', 'BUDGET', 'u', '100')).rejects.toThrow(/ACCOUNT commands need the account API/);
      q.disconnect();
    } finally {
      await stopRespgate(vec.child);
      await stopRespgate(que.child);
    }
  });
});

function chunk(flat: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}
