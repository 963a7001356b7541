// Loaded before every test file (vitest setupFiles): after the file's own afterAll hooks, stop
// whatever it started and did not stop (a failed beforeAll, a test that threw before its cleanup).
import { afterAll } from 'vitest';
import { cleanupAll } from './cleanup.js';

afterAll(cleanupAll);
