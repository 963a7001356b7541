// The argument parsers of the hash-field expiration emulation (src/platform/kv/field-expiry-args.ts),
// in-process: the cases a fixture does not show (keyword order, limits, the time base).
import { describe, expect, it } from 'vitest';
import {
  clientSetinfoError,
  MAX_ABS_TIME_MS,
  parseExpire,
  parseFieldList,
  parseFieldOptions,
} from '../../src/platform/kv/field-expiry-args.js';

const NOW = 1_700_000_000_000;

describe('parseExpire (HEXPIRE family)', () => {
  it('reads seconds or milliseconds, relative to now or absolute', () => {
    expect(parseExpire(['HEXPIRE', 'k', '10', 'FIELDS', '1', 'a'], 'hexpire', NOW)).toEqual({ at: NOW + 10_000, cond: '', fields: ['a'] });
    expect(parseExpire(['HPEXPIRE', 'k', '10', 'FIELDS', '1', 'a'], 'hpexpire', NOW)).toMatchObject({ at: NOW + 10 });
    expect(parseExpire(['HEXPIREAT', 'k', '10', 'FIELDS', '1', 'a'], 'hexpireat', NOW)).toMatchObject({ at: 10_000 });
    expect(parseExpire(['HPEXPIREAT', 'k', '10', 'FIELDS', '1', 'a'], 'hpexpireat', NOW)).toMatchObject({ at: 10 });
  });

  it('takes the condition before or after FIELDS, once', () => {
    expect(parseExpire(['HEXPIRE', 'k', '1', 'FIELDS', '2', 'a', 'b', 'gt'], 'hexpire', NOW)).toMatchObject({
      cond: 'GT',
      fields: ['a', 'b'],
    });
    expect(parseExpire(['HEXPIRE', 'k', '1', 'LT', 'FIELDS', '1', 'a', 'LT'], 'hexpire', NOW)).toMatchObject({ cond: 'LT' });
    expect(parseExpire(['HEXPIRE', 'k', '1', 'LT', 'FIELDS', '1', 'a', 'NX'], 'hexpire', NOW)).toEqual({
      error: 'ERR Multiple condition flags specified',
    });
  });

  it("refuses times beyond Redis' largest, relative ones counting from now", () => {
    expect(parseExpire(['HPEXPIREAT', 'k', String(MAX_ABS_TIME_MS), 'FIELDS', '1', 'a'], 'hpexpireat', NOW)).toMatchObject({
      at: MAX_ABS_TIME_MS,
    });
    expect(parseExpire(['HPEXPIRE', 'k', String(MAX_ABS_TIME_MS - NOW), 'FIELDS', '1', 'a'], 'hpexpire', NOW)).toMatchObject({
      at: MAX_ABS_TIME_MS,
    });
    expect(parseExpire(['HPEXPIRE', 'k', String(MAX_ABS_TIME_MS - NOW + 1), 'FIELDS', '1', 'a'], 'hpexpire', NOW)).toEqual({
      error: "ERR invalid expire time in 'hpexpire' command",
    });
    expect(parseExpire(['HEXPIRE', 'k', '99999999999999999999', 'FIELDS', '1', 'a'], 'hexpire', NOW)).toEqual({
      error: 'ERR value is not an integer or out of range',
    });
    expect(parseExpire(['HEXPIRE', 'k', '010', 'FIELDS', '1', 'a'], 'hexpire', NOW)).toEqual({
      error: 'ERR value is not an integer or out of range',
    });
  });
});

describe('parseFieldList (HTTL family, HPERSIST)', () => {
  it('needs FIELDS at the third argument and an exact count', () => {
    expect(parseFieldList(['HTTL', 'k', 'fields', '2', 'a', 'b'])).toEqual({ fields: ['a', 'b'] });
    expect(parseFieldList(['HTTL', 'k', 'a', 'FIELDS', '1', 'a'])).toEqual({
      error: 'ERR Mandatory argument FIELDS is missing or not at the right position',
    });
    expect(parseFieldList(['HTTL', 'k', 'FIELDS', '3', 'a', 'b'])).toEqual({
      error: 'ERR The `numfields` parameter must match the number of arguments',
    });
  });
});

describe('parseFieldOptions (HGETEX, HSETEX)', () => {
  it('reads the options in any order around FIELDS', () => {
    expect(parseFieldOptions(['HSETEX', 'k', 'FIELDS', '1', 'f', 'v', 'FNX', 'KEEPTTL'], 'hsetex', NOW)).toEqual({
      fields: ['f', 'v'],
      cond: 'FNX',
      expiry: 'keep',
    });
    expect(parseFieldOptions(['HGETEX', 'k', 'FIELDS', '1', 'f', 'EXAT', '5'], 'hgetex', NOW)).toEqual({ fields: ['f'], expiry: 5000 });
    expect(parseFieldOptions(['HGETEX', 'k', 'PERSIST', 'FIELDS', '1', 'f'], 'hgetex', NOW)).toEqual({ fields: ['f'], expiry: 'persist' });
  });

  it('answers the errors of the command it parses for', () => {
    expect(parseFieldOptions(['HSETEX', 'k', 'EX', '1', 'PX', '1', 'FIELDS', '1', 'f', 'v'], 'hsetex', NOW)).toEqual({
      error: 'ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified',
    });
    expect(parseFieldOptions(['HGETEX', 'k', 'EX', '1', 'PX', '1', 'FIELDS', '1', 'f'], 'hgetex', NOW)).toEqual({
      error: 'ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified',
    });
    expect(parseFieldOptions(['HGETEX', 'k', 'FNX', 'FIELDS', '1', 'f'], 'hgetex', NOW)).toEqual({ error: 'ERR unknown argument: FNX' });
    expect(parseFieldOptions(['HSETEX', 'k', 'FIELDS'], 'hsetex', NOW)).toEqual({
      error: "ERR wrong number of arguments for 'hsetex' command",
    });
    expect(parseFieldOptions(['HGETEX', 'k', 'EX', '1'], 'hgetex', NOW)).toEqual({ error: 'ERR missing FIELDS argument' });
  });
});

describe('clientSetinfoError', () => {
  it('accepts printable names and versions, refuses the rest as Redis does', () => {
    expect(clientSetinfoError(['CLIENT', 'SETINFO', 'LIB-NAME', 'ioredis'])).toBeUndefined();
    expect(clientSetinfoError(['CLIENT', 'SETINFO', 'lib-ver', ''])).toBeUndefined();
    expect(clientSetinfoError(['CLIENT', 'SETINFO', 'lib-ver', 'é'])).toBe(
      'ERR lib-ver cannot contain spaces, newlines or special characters.',
    );
    expect(clientSetinfoError(['CLIENT', 'SETINFO', 'name', 'x'])).toBe("ERR Unrecognized option 'name'");
  });
});
