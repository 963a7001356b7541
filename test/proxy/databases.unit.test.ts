// The database registry and the COPY … DB check in-process (src/proxy/databases.ts).
import { describe, expect, it } from 'vitest';
import { resolveCommand } from '../../src/commands/table.js';
import type { Batcher } from '../../src/proxy/batcher.js';
import { checkCopyDb, databaseOf, Databases, DB_OUT_OF_RANGE, platformDatabases, type Database } from '../../src/proxy/databases.js';

const b = (...words: string[]) => words.map((w) => Buffer.from(w));
const fakeDb = (index: number, made: number[]): Database => {
  made.push(index);
  return {
    index,
    batcher: { stats: { calls: index, commands: 10 * index } } as unknown as Batcher,
    keyspaceDb: 0,
    close: async () => undefined,
  };
};

describe('Databases', () => {
  it('knows 0 and the configured numbers, and makes a database on its first use only', () => {
    const made: number[] = [];
    const dbs = new Databases(
      fakeDb(0, made),
      [
        { index: 5, url: 'http://a' },
        { index: 2, url: 'http://b' },
      ],
      (u) => fakeDb(u.index, made),
    );
    expect([dbs.has(0), dbs.has(2), dbs.has(5), dbs.has(1), dbs.has(-1)]).toEqual([true, true, true, false, false]);
    expect(dbs.count).toBe(3);
    expect(dbs.indexes()).toEqual([0, 2, 5]);
    expect(made).toEqual([0]);
    expect(dbs.get(5).index).toBe(5);
    expect(dbs.get(5)).toBe(dbs.get(5));
    expect(made).toEqual([0, 5]);
    expect(dbs.stats.get('calls')).toBe(5);
    expect(dbs.stats.get('commands')).toBe(50);
    expect(() => dbs.get(3)).toThrow(/database 3 is not configured/);
  });

  it("maps the platform's /db/<n> bases, each reporting its keys as db<n>", () => {
    expect(platformDatabases('http://h:1', 3)).toEqual([
      { index: 1, url: 'http://h:1/db/1', keyspaceDb: 1 },
      { index: 2, url: 'http://h:1/db/2', keyspaceDb: 2 },
    ]);
    expect(platformDatabases('http://h:1', 1)).toEqual([]);
  });
});

describe('databaseOf', () => {
  it('keeps pub/sub on database 0 (global in Redis) and everything else on the selected one', () => {
    expect(databaseOf(resolveCommand(b('PUBLISH', 'c', 'm'))!, 4)).toBe(0);
    expect(databaseOf(resolveCommand(b('PUBSUB', 'NUMSUB'))!, 4)).toBe(0);
    expect(databaseOf(resolveCommand(b('GET', 'k'))!, 4)).toBe(4);
    expect(databaseOf(resolveCommand(b('EVAL', 'return 1', '0'))!, 4)).toBe(4);
  });
});

describe('checkCopyDb', () => {
  const has = (i: number) => i === 0 || i === 3;
  it('drops DB of the selected database, refuses another configured one, answers out of range for the rest', () => {
    expect(checkCopyDb(b('COPY', 'a', 'b'), 3, has)).toEqual(b('COPY', 'a', 'b'));
    expect(checkCopyDb(b('COPY', 'a', 'b', 'db', '3', 'REPLACE'), 3, has)).toEqual(b('COPY', 'a', 'b', 'REPLACE'));
    expect(checkCopyDb(b('COPY', 'a', 'b', 'REPLACE', 'DB', '3'), 3, has)).toEqual(b('COPY', 'a', 'b', 'REPLACE'));
    expect(String(checkCopyDb(b('COPY', 'a', 'b', 'DB', '0'), 3, has))).toMatch(
      /^-ERR COPY to another database is not supported by respgate: databases 3 and 0 are separate REST databases/,
    );
    expect(checkCopyDb(b('COPY', 'a', 'b', 'DB', '7'), 3, has)).toEqual(DB_OUT_OF_RANGE);
    expect(checkCopyDb(b('COPY', 'a', 'b', 'DB', '-1'), 3, has)).toEqual(DB_OUT_OF_RANGE);
    // Not an integer as Redis reads one: the upstream answers its own parse error.
    for (const bad of ['x', '03', ' 3', '+3'])
      expect(checkCopyDb(b('COPY', 'a', 'b', 'DB', bad), 3, has)).toEqual(b('COPY', 'a', 'b', 'DB', bad));
  });
});
