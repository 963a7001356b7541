// Things with one home in src/: the constant-time compare of secrets (safe-equal.ts) and the version
// strings (version.ts). A copy elsewhere would drift (a timing leak fixed in one place only, a
// version bumped in one place only).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { safeEqual } from '../../src/safe-equal.js';
import { REDIS_VERSION, RESPGATE_VERSION } from '../../src/version.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sources = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: `src/${f}`, text: readFileSync(path.join(root, 'src', f), 'utf8') }));

describe('one home in src/', () => {
  it('timingSafeEqual is called in safe-equal.ts only', () => {
    expect(sources.filter((s) => s.text.includes('timingSafeEqual')).map((s) => s.file)).toEqual(['src/safe-equal.ts']);
  });

  it("the versions are version.ts's: respgate's is package.json's, Redis' is written once", () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    expect(RESPGATE_VERSION).toBe(pkg.version);
    expect(sources.filter((s) => s.text.includes(`'${REDIS_VERSION}'`)).map((s) => s.file)).toEqual(['src/version.ts']);
  });
});

describe('safeEqual', () => {
  it('is true for equal secrets only, whatever their lengths and types', () => {
    expect(safeEqual('s3cret', 's3cret')).toBe(true);
    expect(safeEqual(Buffer.from('s3cret'), 's3cret')).toBe(true);
    expect(safeEqual('s3cret', 's3creT')).toBe(false);
    expect(safeEqual('s3cret', 's3cret!')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('é', Buffer.from('é', 'latin1'))).toBe(false);
  });
});
