// The dev stack's vector side port calls its platform in-process (no HTTP round trip, issue 21): every
// reply, errors included, must be the bytes the same side port gives over HTTP. Two side ports on one
// platform, one per path, each on its own namespaces, receive the same commands.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import type { RunningSideport } from '../../src/sideports/server.js';
import { startTestPlatform } from '../helpers/platform.js';
import { rawText, vectorPort } from './harness.js';

let platform: RunningPlatform;
let http: RunningSideport;
let local: RunningSideport;
let localReadonly: RunningSideport;
let httpReadonly: RunningSideport;

const fp32 = (v: number[]) => Buffer.from(new Float32Array(v).buffer);

beforeAll(async () => {
  platform = await startTestPlatform({
    vectorIndexes: [
      { name: 'dense', type: 'DENSE', dimension: 3, similarityFunction: 'COSINE' },
      { name: 'hybrid', type: 'HYBRID', dimension: 2, similarityFunction: 'COSINE' },
    ],
  });
  const url = `${platform.url}/vector/dense`;
  const inProcess = (token: string) => (op: string, ns: string | undefined, body: unknown) =>
    platform.vectorLocal('dense', op, ns, body, token);
  http = await vectorPort({ url, token: platform.token });
  local = await vectorPort({ url, token: platform.token, local: inProcess(platform.token) });
  httpReadonly = await vectorPort({ url, token: platform.readonlyToken });
  localReadonly = await vectorPort({ url, token: platform.readonlyToken, local: inProcess(platform.readonlyToken) });
});
afterAll(async () => {
  for (const p of [http, local, httpReadonly, localReadonly]) await p?.stop();
  await platform?.stop();
});

/** The same commands on both paths, the key `k` replaced by a key of each path's own. */
async function both(port: { http: RunningSideport; local: RunningSideport }, commands: (string | Buffer)[][]) {
  const on = (p: RunningSideport, key: string) =>
    rawText(
      p.port,
      commands.map((c) => c.map((a) => (a === 'k' ? key : a))),
    );
  const [overHttp, inProcess] = await Promise.all([on(port.http, 'h'), on(port.local, 'l')]);
  return { overHttp, inProcess };
}

describe('vector side port in-process vs over HTTP', () => {
  it('answers writes, reads and searches with the same bytes', async () => {
    const { overHttp, inProcess } = await both({ http, local }, [
      ['VADD', 'k', 'VALUES', '3', '1', '0', '0', 'a', 'SETATTR', '{"rating": 8.0}'],
      ['VADD', 'k', 'FP32', fp32([0, 1, 0]), 'b'],
      ['VADD', 'k', 'VALUES', '3', '0.9', '0.1', '0', 'c', 'NOQUANT'],
      ['VADD', 'k', 'VALUES', '3', '1', '0', '0', 'a'],
      ['VCARD', 'k'],
      ['VDIM', 'k'],
      ['VSIM', 'k', 'VALUES', '3', '1', '0', '0', 'COUNT', '2', 'WITHSCORES'],
      ['VSIM', 'k', 'ELE', 'b', 'WITHSCORES', 'WITHATTRIBS'],
      ['VSIM', 'k', 'VALUES', '3', '1', '0', '0', 'FILTER', '.rating > 5'],
      ['VEMB', 'k', 'a'],
      ['VGETATTR', 'k', 'a'],
      ['VISMEMBER', 'k', 'zz'],
      ['VRANGE', 'k', '-', '+', '10'],
      ['VREM', 'k', 'b'],
      ['VCARD', 'k'],
    ]);
    expect(inProcess).toEqual(overHttp);
    expect(inProcess[6]).toMatch(/^\*4\r\n\$1\r\na\r\n/); // the search did find a
  });

  it('gives the same errors: a wrong dimension, a missing key, a missing element', async () => {
    const { overHttp, inProcess } = await both({ http, local }, [
      ['VADD', 'k', 'VALUES', '3', '1', '0', '0', 'a'],
      ['VADD', 'k', 'VALUES', '2', '1', '0', 'x'],
      ['VSIM', 'k', 'VALUES', '2', '1', '0'],
      ['VSIM', 'nokey', 'VALUES', '3', '1', '0', '0'],
      ['VSIM', 'k', 'ELE', 'nothere'],
      ['VEMB', 'nokey', 'a'],
    ]);
    expect(inProcess).toEqual(overHttp);
    expect(inProcess[1]).toMatch(/^-ERR Vector dimension mismatch/);
  });

  it('refuses writes with the read-only token, in the service words', async () => {
    const { overHttp, inProcess } = await both({ http: httpReadonly, local: localReadonly }, [
      ['VADD', 'k', 'VALUES', '3', '1', '0', '0', 'a'],
      ['VCARD', 'k'],
    ]);
    expect(inProcess).toEqual(overHttp);
    expect(inProcess[0]).toMatch(/^-ERR vector service error \(HTTP 403\)/);
  });

  it('keeps the platform objects apart from the side port (bodies and results are copies)', async () => {
    const records = [{ id: 'm', vector: [1, 2, 3], metadata: { tag: 'x' } }];
    await platform.vectorLocal('dense', 'upsert', 'copies', records, platform.token);
    records[0].metadata.tag = 'changed';
    const [fetched] = (await platform.vectorLocal('dense', 'fetch', 'copies', { ids: ['m'], includeMetadata: true }, platform.token)) as {
      metadata: { tag: string };
    }[];
    expect(fetched.metadata.tag).toBe('x');
    fetched.metadata.tag = 'changed again';
    const [again] = (await platform.vectorLocal('dense', 'fetch', 'copies', { ids: ['m'], includeMetadata: true }, platform.token)) as {
      metadata: { tag: string };
    }[];
    expect(again.metadata.tag).toBe('x');
  });

  it('refuses an unknown token, index or operation with the HTTP statuses', async () => {
    const status = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (e: { status: number }) => e.status,
      );
    expect(await status(platform.vectorLocal('dense', 'info', undefined, {}, 'wrong'))).toBe(401);
    expect(await status(platform.vectorLocal('nope', 'info', undefined, {}, platform.token))).toBe(404);
    expect(await status(platform.vectorLocal('dense', 'nope', undefined, {}, platform.token))).toBe(404);
    expect(await status(platform.vectorLocal('dense', 'info', 'ns', {}, platform.token))).toBe(404);
  });
});
