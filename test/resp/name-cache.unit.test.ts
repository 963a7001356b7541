import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lookupCommand } from '../../src/commands/table.js';
import { NameCache } from '../../src/resp/name-cache.js';

describe('NameCache', () => {
  it('always answers what resolve answers, through collisions and evictions (4 slots)', () => {
    const calls: string[] = [];
    const cache = new NameCache((name: string) => (calls.push(name), `v:${name}`), 4);
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: 50 }), (names) => {
        for (const bytes of names) {
          const buf = Buffer.from(bytes);
          expect(cache.get(buf)).toBe(`v:${buf.toString('latin1')}`);
        }
      }),
    );
    expect(calls.length).toBeGreaterThan(0);
  });

  it('reads the name inside a larger buffer, and asks resolve once per spelling it keeps', () => {
    let calls = 0;
    const cache = new NameCache((name: string) => (calls++, name.toUpperCase()));
    const body = Buffer.from('xxGETyyGETzz');
    expect(cache.get(body, 2, 5)).toBe('GET');
    expect(cache.get(body, 7, 10)).toBe('GET');
    expect(cache.get(Buffer.from('get'))).toBe('GET');
    expect(calls).toBe(2); // 'GET' once, then the other spelling 'get'
  });
});

describe('lookupCommand by bytes', () => {
  it('matches the lookup by text for every spelling, including non-ASCII look-alikes and unknown names', () => {
    const spellings = ['GET', 'get', 'GeT', 'set', 'CLIENT', 'nosuch', '', 'ge\u212at', 'x'.repeat(40), 'g\u00e9t', 'PING'];
    for (const s of spellings) {
      for (const buf of [Buffer.from(s, 'latin1'), Buffer.from(s, 'utf8')]) {
        expect(lookupCommand(buf)).toBe(lookupCommand(buf.toString('latin1')));
      }
    }
    expect(lookupCommand(Buffer.from('GeT'))?.name).toBe('get');
    expect(lookupCommand(Buffer.from('nosuch'))).toBeUndefined();
  });
});
