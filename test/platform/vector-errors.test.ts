// Bad inputs to the vector API get the service's status and error shape {"error", "status"}, and a text
// that names the problem; tokens and methods are checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { kv, startTestPlatform, type KvCall } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
  const r = await v('/dense/upsert', { body: JSON.stringify({ id: 'one', vector: Array(384).fill(0.1) }) });
  expect(r.status).toBe(200);
});
afterAll(async () => {
  await p?.stop();
});

const v = (path: string, call: KvCall = {}) => kv(p, `/vector${path}`, { method: 'POST', ...call });

async function expectError(path: string, call: KvCall, status: number, text: string | RegExp): Promise<void> {
  const r = await v(path, call);
  expect(r.status, r.text).toBe(status);
  expect(r.json.status).toBe(status);
  if (typeof text === 'string') expect(r.json.error).toBe(text);
  else expect(r.json.error).toMatch(text);
}

describe('vector API bad inputs', () => {
  it('dimension mismatch (upsert, query, update)', async () => {
    await expectError(
      '/dense/upsert',
      { body: JSON.stringify({ id: 'x', vector: [1, 2] }) },
      422,
      'Invalid vector dimension: 2, expected: 384',
    );
    await expectError(
      '/dense/query',
      { body: JSON.stringify({ vector: [1, 2, 3], topK: 1 }) },
      422,
      'Invalid vector dimension: 3, expected: 384',
    );
    await expectError(
      '/dense/update',
      { body: JSON.stringify({ id: 'one', vector: [1] }) },
      422,
      'Invalid vector dimension: 1, expected: 384',
    );
  });

  it('missing fields', async () => {
    await expectError(
      '/dense/upsert',
      { body: JSON.stringify({ vector: Array(384).fill(0) }) },
      422,
      'Failed to deserialize the JSON body into the target type: missing field `id`',
    );
    await expectError(
      '/dense/upsert',
      { body: JSON.stringify({ id: 'x' }) },
      422,
      'Failed to deserialize the JSON body into the target type: missing field `vector`',
    );
    await expectError(
      '/sparse/upsert',
      { body: JSON.stringify({ id: 'x', sparseVector: { indices: [1] } }) },
      422,
      'Failed to deserialize the JSON body into the target type: missing field `values`',
    );
    await expectError(
      '/dense/range',
      { body: JSON.stringify({ limit: 2 }) },
      422,
      'Failed to deserialize the JSON body into the target type: missing field `cursor`',
    );
    await expectError(
      '/dense-data/upsert-data',
      { body: JSON.stringify({ id: 'x' }) },
      422,
      'Failed to deserialize the JSON body into the target type: missing field `data`',
    );
    await expectError(
      '/dense/query',
      { body: JSON.stringify({ topK: 1 }) },
      422,
      'Failed to deserialize the JSON body into the target type: missing field `vector`',
    );
    await expectError(
      '/dense/resumable-query-next',
      { body: JSON.stringify({ additionalK: 1 }) },
      422,
      'Failed to deserialize the JSON body into the target type: missing field `uuid`',
    );
  });

  it('wrong types and shapes', async () => {
    await expectError(
      '/dense/upsert',
      { body: JSON.stringify({ id: 'x', vector: 'nope' }) },
      422,
      /vector: invalid type, expected a sequence of numbers/,
    );
    await expectError(
      '/dense/upsert',
      { body: JSON.stringify({ id: 'x', vector: Array(384).fill(0), metadata: [1] }) },
      422,
      /metadata: invalid type, expected a JSON object/,
    );
    await expectError(
      '/sparse/upsert',
      { body: JSON.stringify({ id: 'x', sparseVector: { indices: [1, 2], values: [1] } }) },
      422,
      'Sparse vector indices and values must have the same length: 2 indices, 1 values',
    );
    await expectError(
      '/dense/upsert',
      { body: JSON.stringify({ id: 'x', vector: Array(384).fill(0), sparseVector: { indices: [1], values: [1] } }) },
      422,
      'This index does not support sparse vectors: it is a DENSE index; send `vector`',
    );
    await expectError(
      '/dense/query',
      { body: JSON.stringify({ vector: Array(384).fill(0), topK: 1001 }) },
      400,
      'topK must be at most 1000, got 1001',
    );
    await expectError(
      '/dense/query',
      { body: JSON.stringify({ vector: Array(384).fill(0), fusionAlgorithm: 'MAX' }) },
      422,
      /fusionAlgorithm: unknown variant/,
    );
    await expectError('/dense/range', { body: JSON.stringify({ cursor: 'abc', limit: 2 }) }, 400, /Invalid cursor 'abc'/);
  });

  it('a query mode the index cannot embed', async () => {
    await expectError(
      '/dense-data/query-data',
      { body: JSON.stringify({ data: 'text', queryMode: 'SPARSE' }) },
      400,
      'queryMode SPARSE needs a sparse embedding model, and this index has none; use queryMode DENSE or HYBRID',
    );
  });

  it('bad JSON and an empty body', async () => {
    await expectError('/dense/upsert', { body: '{"id": "x", "vector": [1,' }, 400, /^Failed to parse the request body as JSON: /);
    await expectError('/dense/query', { body: '' }, 400, 'Failed to parse the request body as JSON: the body is empty; send a JSON object');
  });

  it('a filter syntax error says where', async () => {
    await expectError(
      '/dense/query',
      { body: JSON.stringify({ vector: Array(384).fill(0), filter: "genre = 'x' AND" }) },
      400,
      "Invalid filter: expected a condition, found the end of the filter at position 15 in 'genre = 'x' AND'",
    );
    await expectError('/dense/delete', { body: JSON.stringify({ filter: 'a >' }) }, 400, /^Invalid filter: .* at position 3/);
  });

  it('unknown namespace, index, operation and resumable query', async () => {
    for (const op of ['query', 'fetch', 'range', 'delete', 'update', 'reset', 'random', 'delete-namespace']) {
      const body =
        op === 'query'
          ? { vector: Array(384).fill(0) }
          : op === 'range'
            ? { cursor: '0', limit: 1 }
            : op === 'update'
              ? { id: 'x', metadata: {} }
              : { ids: ['x'] };
      await expectError(
        `/dense/${op}/nowhere`,
        { body: JSON.stringify(body) },
        404,
        'Namespace nowhere for the index dense does not exist',
      );
    }
    await expectError('/dense/delete-namespace', {}, 400, 'The default namespace cannot be deleted; use reset to remove its vectors');
    await expectError(
      '/nosuch/info',
      {},
      404,
      /^Index 'nosuch' does not exist on this platform; its indexes are dense, dense-data, sparse, hybrid/,
    );
    await expectError('/dense/frobnicate', {}, 404, /^Unknown operation 'frobnicate'/);
    await expectError(
      '/dense/resumable-query-next',
      { body: JSON.stringify({ uuid: 'nope', additionalK: 1 }) },
      404,
      /Resumable query nope does not exist/,
    );
  });

  it('tokens: none or a wrong one is 401; the read-only token reads but may not write', async () => {
    await expectError('/dense/info', { token: null }, 401, 'Unauthorized: send the index token as "Authorization: Bearer <token>"');
    await expectError('/dense/info', { token: 'not-the-token' }, 401, 'Unauthorized: the token is not valid for this index');
    const info = await v('/dense/info', { token: p.readonlyToken });
    expect(info.status).toBe(200);
    for (const op of ['upsert', 'update', 'delete', 'reset', 'delete-namespace']) {
      await expectError(
        `/dense/${op}`,
        { token: p.readonlyToken, body: JSON.stringify({ id: 'x', vector: Array(384).fill(0) }) },
        403,
        `The ${op} operation is not allowed with the read-only token; use the index's standard token`,
      );
    }
    // secrets never in errors
    const r = await v('/dense/info', { token: 'not-the-token' });
    expect(r.text).not.toContain(p.token);
  });

  it('the documented methods work besides POST; others are 405', async () => {
    expect((await v('/dense/info', { method: 'GET' })).json.result.vectorCount).toBe(1);
    expect((await v('/dense/list-namespaces', { method: 'GET' })).json.result).toEqual(['']);
    expect((await v('/dense/random', { method: 'GET' })).json.result.id).toBe('one');
    expect((await v('/dense/delete', { method: 'DELETE', body: JSON.stringify({ ids: ['none'] }) })).json.result).toEqual({ deleted: 0 });
    const put = await v('/dense/query', { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST');
    expect(put.json.error).toBe('Method PUT is not allowed for query; use POST');
  });
});
