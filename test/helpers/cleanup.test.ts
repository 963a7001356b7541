// The teardown registry: what a test file started is stopped once, whoever stops it first, and a
// failing stop does not keep the others running.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cleanupAll, onCleanup, registered, trackChild, tracked } from './cleanup.js';
import { until } from './wait.js';

describe('cleanup registry', () => {
  it('stops what is left, once, newest first, and goes on after a failure', async () => {
    const order: string[] = [];
    const a = tracked({ stop: async () => void order.push('a') });
    onCleanup(() => {
      order.push('b');
      throw new Error('b failed');
    });
    onCleanup(() => void order.push('c'));
    await a.stop(); // stopped by the test itself: not again
    await expect(cleanupAll()).rejects.toThrow('1 cleanup(s) failed');
    expect(order).toEqual(['a', 'c', 'b']);
    expect(registered()).toBe(0);
    await cleanupAll();
    expect(order).toEqual(['a', 'c', 'b']);
  });

  it('kills a child process still running, and forgets one that exited', async () => {
    const running = trackChild(spawn('sleep', ['30']));
    const quick = trackChild(spawn('true'));
    await until(() => quick.exitCode !== null, 'true exited');
    await until(() => registered() === 1, 'the exited child forgotten');
    const exited = new Promise((r) => running.once('exit', r));
    await cleanupAll();
    await exited;
    expect(running.signalCode).toBe('SIGKILL');
  });
});
