// Redis 8 vector-set FILTER expressions → the vector service's filter language.
import { describe, expect, it } from 'vitest';
import { translateFilter } from '../../src/sideports/vector-filter.js';

describe('translateFilter', () => {
  it.each([
    ['.year > 1950 and .genre == "drama"', "year > 1950 AND genre = 'drama'"],
    ["(.a == 1 || .b != 'x') && .c <= -2.5", "(a = 1 OR b != 'x') AND c <= -2.5"],
    ['"x" in .tags', "tags CONTAINS 'x'"],
    ['.g in ["a", "b"]', "g IN ('a', 'b')"],
    ['.n in [1, 2.5e3]', 'n IN (1, 2.5e3)'],
    ['5 < .x', 'x > 5'],
    ['.ok == true', 'ok = true'],
    ['.a.b >= 2', 'a.b >= 2'],
    [".s == 'it\\'s'", "s = 'it\\'s'"],
    ['.x == 1 or .y == 2 and .z == 3', 'x = 1 OR y = 2 AND z = 3'],
  ])('%s → %s', (redis, service) => {
    expect(translateFilter(redis)).toBe(service);
  });

  it.each([
    ['.x + 1 > 2', /arithmetic has no counterpart/],
    ['not .x == 1', /'not' has no counterpart/],
    ['!(.x == 1)', /'not' has no counterpart/],
    ['.x', /the expression ends too early/],
    ['.x == ', /the expression ends too early/],
    ['(.x == 1', /missing '\)'/],
    ['.x == "open', /unterminated string/],
    ['1 == 2', /needs one selector/],
    ['.a == .b', /needs one selector/],
    ['', /empty expression/],
    ['.x == 1 .y', /unexpected '.y'/],
    ['.x == 1 @', /unexpected character '@'/],
  ])('refuses %s', (redis, problem) => {
    expect(() => translateFilter(redis)).toThrow(problem);
    expect(() => translateFilter(redis)).toThrow(/use WHERE with the service's filter language/);
  });
});
