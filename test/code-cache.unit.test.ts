// The code cache that `respgate proxy` starts through (src/cli/code-cache.ts): a CommonJS file run as Node
// runs one, a cache written once and read by the next run, never one made for another text, and no cache
// in a folder that another user may write to.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cacheDirectory, runWithCodeCache, WRAPPER } from '../src/cli/code-cache.js';

// Each run here is a new start: V8 must not answer a second compile of the same text from its in-process
// cache (where a cache file is never read). Vitest runs each test file in a process of its own.
beforeAll(() => v8.setFlagsFromString('--no-compilation-cache'));

let work: string;
beforeEach(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'respgate-code-cache-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** A CommonJS file that requires a neighbour, reports its own place and strictness, and ends with a build line. */
function writeBundle(name: string, answer: number, build = 'a'.repeat(32)): string {
  const file = path.join(work, name);
  writeFileSync(path.join(path.dirname(file), 'neighbour.cjs'), 'module.exports = { twice: (n) => 2 * n };\n');
  writeFileSync(
    file,
    "'use strict';\n" +
      "const { twice } = require('./neighbour.cjs');\n" +
      `exports.answer = () => twice(${answer});\n` +
      'exports.place = [__filename, __dirname];\n' +
      'exports.strict = (function () { return this === undefined; })();\n' +
      `// respgate-build ${build}\n`,
  );
  return file;
}

/** A cache folder as cacheDirectory makes one: only this user may enter it. */
function cacheFolder(): string {
  const dir = path.join(work, 'cache');
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** bundle.cjs run once with its cache written: the cache file's header line and V8's data behind it. */
function cachedBundle(): { file: string; dir: string; cacheFile: string; header: Buffer; v8Data: Buffer } {
  const dir = cacheFolder();
  const file = writeBundle('bundle.cjs', 21);
  const run = runWithCodeCache(file, dir);
  run.save();
  const written = readFileSync(run.cacheFile!);
  const headerLength = written.indexOf(10) + 1;
  return { file, dir, cacheFile: run.cacheFile!, header: written.subarray(0, headerLength), v8Data: written.subarray(headerLength) };
}

describe('runWithCodeCache', () => {
  it('runs the file as a CommonJS module: its exports, its own require, __filename and __dirname, strict mode', () => {
    const file = writeBundle('bundle.cjs', 21);
    const run = runWithCodeCache(file, undefined);
    expect(run.use).toBe('off');
    expect((run.exports.answer as () => number)()).toBe(42);
    expect(run.exports.place).toEqual([file, work]);
    expect(run.exports.strict).toBe(true);
  });

  it('writes the cache once and reads it on the next run; the caches of older builds of the same file go', () => {
    const dir = cacheFolder();
    const file = writeBundle('bundle.cjs', 21);
    const first = runWithCodeCache(file, dir);
    expect(first.use).toBe('missing');
    first.save();
    expect(readdirSync(dir)).toEqual([path.basename(first.cacheFile!)]);
    expect(statSync(first.cacheFile!).mode & 0o777).toBe(0o600);

    const second = runWithCodeCache(file, dir);
    expect(second.use).toBe('accepted');
    expect(second.cacheFile).toBe(first.cacheFile);
    expect((second.exports.answer as () => number)()).toBe(42);
    const written = statSync(first.cacheFile!).mtimeMs;
    second.save(); // an accepted cache is not written again
    expect(statSync(first.cacheFile!).mtimeMs).toBe(written);

    // A new build of the same file (same length: V8 alone would take the old cache for it) has a cache of its own.
    writeBundle('bundle.cjs', 12, 'b'.repeat(32));
    const rebuilt = runWithCodeCache(file, dir);
    expect(rebuilt.use).toBe('missing');
    expect(rebuilt.cacheFile).not.toBe(first.cacheFile);
    expect((rebuilt.exports.answer as () => number)()).toBe(24);
    rebuilt.save();
    expect(readdirSync(dir)).toEqual([path.basename(rebuilt.cacheFile!)]);

    // Another file (another install) keeps its own.
    const other = runWithCodeCache(writeBundle('other.cjs', 1), dir);
    other.save();
    expect(readdirSync(dir).sort()).toEqual([path.basename(rebuilt.cacheFile!), path.basename(other.cacheFile!)].sort());
  });

  it('a cache V8 refuses (damaged) is reported, the file still runs, and the cache is written again', () => {
    const { file, dir, cacheFile, header, v8Data } = cachedBundle();
    // V8's data damaged behind an intact header line.
    writeFileSync(cacheFile, Buffer.concat([header, Buffer.alloc(v8Data.length, 7)]));
    const damaged = runWithCodeCache(file, dir);
    expect(damaged.use).toBe('rejected');
    expect((damaged.exports.answer as () => number)()).toBe(42);
    damaged.save();
    expect(
      readFileSync(cacheFile)
        .subarray(header.length)
        .every((b) => b === 7),
    ).toBe(false);
    expect(runWithCodeCache(file, dir).use).toBe('accepted');
  });

  it('takes no cache made for another path under the same name (a hash collision), and writes its own', () => {
    const { file, dir, cacheFile, header, v8Data } = cachedBundle();
    expect(header.toString()).toBe(`respgate code cache for ${file}\n`);
    writeFileSync(cacheFile, Buffer.concat([Buffer.from(`respgate code cache for ${file}.elsewhere\n`), v8Data]));
    const collided = runWithCodeCache(file, dir);
    expect(collided.use).toBe('missing');
    collided.save();
    expect(runWithCodeCache(file, dir).use).toBe('accepted');
  });

  it("removes the caches of files that are gone and of older formats when it writes one; live files' caches and others' files stay", () => {
    const dir = cacheFolder();
    const installs = ['gone', 'kept', 'new'].map((name) => {
      mkdirSync(path.join(work, name));
      return path.join(name, 'proxy.cjs');
    });
    const runs = installs.slice(0, 2).map((name) => {
      const run = runWithCodeCache(writeBundle(name, 1), dir);
      run.save();
      return run;
    });
    // One of ours from before the header line, and two files that are not ours.
    const older = `proxy.cjs-0123abcd-${'c'.repeat(64)}-${process.version}-${process.arch}.cache`;
    writeFileSync(path.join(dir, older), 'no header');
    writeFileSync(path.join(dir, 'not-ours.cache'), 'no header');
    writeFileSync(path.join(dir, 'notes.txt'), '');
    rmSync(path.join(work, 'gone'), { recursive: true });
    expect(readdirSync(dir)).toHaveLength(5); // nothing is removed until a cache is written

    const fresh = runWithCodeCache(writeBundle(installs[2], 1), dir);
    fresh.save();
    expect(readdirSync(dir).sort()).toEqual(
      [path.basename(runs[1].cacheFile!), path.basename(fresh.cacheFile!), 'not-ours.cache', 'notes.txt'].sort(),
    );
    expect(runWithCodeCache(path.join(work, installs[1]), dir).use).toBe('accepted');
  });

  it("runs a file written inside Node's wrapper (proxy.cjs) as it is, and gives it a cache as well", () => {
    const plain = readFileSync(writeBundle('plain.cjs', 21), 'latin1');
    const build = plain.slice(plain.lastIndexOf('// respgate-build'));
    const file = path.join(work, 'wrapped.cjs');
    // Wrapped twice, the file's function would only be made, never called: no exports.
    writeFileSync(file, WRAPPER[0] + plain.slice(0, -build.length) + WRAPPER[1] + '\n' + build, 'latin1');
    const dir = cacheFolder();
    const first = runWithCodeCache(file, dir);
    expect((first.exports.answer as () => number)()).toBe(42);
    expect(first.exports.strict).toBe(true);
    first.save();
    const second = runWithCodeCache(file, dir);
    expect(second.use).toBe('accepted');
    expect((second.exports.answer as () => number)()).toBe(42);
  });

  it('a file without a build line runs without a cache', () => {
    const file = path.join(work, 'plain.cjs');
    writeFileSync(file, 'exports.x = 1;\n');
    const dir = cacheFolder();
    const run = runWithCodeCache(file, dir);
    expect(run.use).toBe('off');
    expect(run.exports.x).toBe(1);
    run.save();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('cacheDirectory', () => {
  it("is off with Node's NODE_DISABLE_COMPILE_CACHE", () => {
    expect(cacheDirectory({ NODE_DISABLE_COMPILE_CACHE: '1', NODE_COMPILE_CACHE: work })).toBeUndefined();
  });

  it("goes under Node's NODE_COMPILE_CACHE, in a folder only this user may enter", () => {
    const dir = cacheDirectory({ NODE_COMPILE_CACHE: work });
    expect(dir).toBe(path.join(work, 'respgate'));
    expect(statSync(dir!).mode & 0o777).toBe(0o700);
  });

  it('is in the temporary directory by default, one folder a user', () => {
    const dir = cacheDirectory({});
    expect(path.dirname(dir!)).toBe(os.tmpdir());
    expect(path.basename(dir!)).toBe(process.getuid ? `respgate-compile-cache-${process.getuid()}` : 'respgate-compile-cache');
  });

  it('is not used when others may write to its folder (code read from it runs as this user)', () => {
    const dir = path.join(work, 'respgate');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    expect(cacheDirectory({ NODE_COMPILE_CACHE: work })).toBeUndefined();
    chmodSync(dir, 0o700);
    expect(cacheDirectory({ NODE_COMPILE_CACHE: work })).toBe(dir);
  });

  it('is not used when it cannot be made', () => {
    const file = path.join(work, 'a-file');
    writeFileSync(file, '');
    expect(cacheDirectory({ NODE_COMPILE_CACHE: file })).toBeUndefined();
  });
});
