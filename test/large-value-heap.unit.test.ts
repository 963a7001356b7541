import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('largeValuesSeen (large-value-heap.ts)', () => {
  it('sets V8 heap growing factor once, at the first large value', async () => {
    const v8 = await import('node:v8');
    const set = vi.spyOn(v8.default, 'setFlagsFromString').mockImplementation(() => {});
    const heap = await import('../src/large-value-heap.js');
    expect(heap.largeValueHeapApplied()).toBe(false);
    heap.largeValuesSeen();
    heap.largeValuesSeen();
    expect(set.mock.calls).toEqual([['--heap-growing-percent=200']]);
    expect(heap.largeValueHeapApplied()).toBe(true);
    set.mockRestore();
  });

  it('RESPGATE_LARGE_VALUE_HEAP=0 keeps V8 own factor', async () => {
    vi.stubEnv('RESPGATE_LARGE_VALUE_HEAP', '0');
    const v8 = await import('node:v8');
    const set = vi.spyOn(v8.default, 'setFlagsFromString').mockImplementation(() => {});
    const heap = await import('../src/large-value-heap.js');
    heap.largeValuesSeen();
    expect(set).not.toHaveBeenCalled();
    expect(heap.largeValueHeapApplied()).toBe(false);
    set.mockRestore();
  });

  it('a pooled value buffer counts as a large value; a small one does not', async () => {
    const v8 = await import('node:v8');
    const set = vi.spyOn(v8.default, 'setFlagsFromString').mockImplementation(() => {});
    const { LargeBuffers, POOLED_MIN_BYTES } = await import('../src/resp/large-buffers.js');
    const pool = new LargeBuffers();
    pool.take(POOLED_MIN_BYTES - 1);
    expect(set).not.toHaveBeenCalled();
    pool.take(POOLED_MIN_BYTES);
    expect(set).toHaveBeenCalledTimes(1);
    set.mockRestore();
  });
});
