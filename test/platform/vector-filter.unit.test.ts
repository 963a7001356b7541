// The metadata filter language against a table of expressions and the records each must match.
import { describe, expect, it } from 'vitest';
import { FilterSyntaxError, parseFilter } from '../../src/platform/vector/filter.js';

const records: Record<string, Record<string, unknown>> = {
  paris: {
    city: 'Paris',
    country: 'FR',
    population: 2_100_000,
    is_capital: true,
    geo: { continent: 'Europe', coords: { lat: 48.8 } },
    tags: ['art', 'food', 'river'],
    'zip-code': '75',
  },
  lyon: { city: 'Lyon', country: 'FR', population: 520_000, is_capital: false, geo: { continent: 'Europe' }, tags: ['food'] },
  tokyo: {
    city: 'Tokyo',
    country: 'JP',
    population: 14_000_000,
    is_capital: true,
    geo: { continent: 'Asia' },
    tags: ['tech', 'food', 'sushi'],
  },
  austin: { city: 'Austin', country: 'US', population: 960_000, is_capital: false, geo: { continent: 'America' }, tags: [] },
  bare: {},
};

const table: Array<[string, string[]]> = [
  ["city = 'Paris'", ['paris']],
  ['city = "Paris"', ['paris']],
  ["city != 'Paris'", ['lyon', 'tokyo', 'austin']],
  ['population > 1000000', ['paris', 'tokyo']],
  ['population >= 960000', ['paris', 'tokyo', 'austin']],
  ['population < 960000', ['lyon']],
  ['population <= 960000', ['lyon', 'austin']],
  ['population = 520000', ['lyon']],
  ['is_capital = true', ['paris', 'tokyo']],
  ['is_capital = FALSE', ['lyon', 'austin']],
  ['is_capital = 1', ['paris', 'tokyo']],
  ["city GLOB 'P*'", ['paris']],
  ["city GLOB '?yon'", ['lyon']],
  ["city GLOB '[A-L]*'", ['lyon', 'austin']],
  ["city GLOB '[^A-L]*'", ['paris', 'tokyo']],
  ["city glob 'p*'", []],
  ["city NOT GLOB 'P*'", ['lyon', 'tokyo', 'austin']],
  ["country IN ('FR', 'JP')", ['paris', 'lyon', 'tokyo']],
  ["country NOT IN ('FR', 'JP')", ['austin']],
  ['population IN (520000, 960000)', ['lyon', 'austin']],
  ["tags CONTAINS 'food'", ['paris', 'lyon', 'tokyo']],
  ["tags NOT CONTAINS 'food'", ['austin']],
  ['HAS FIELD geo.coords', ['paris']],
  ['HAS NOT FIELD geo', ['bare']],
  ['has field tags[2]', ['paris', 'tokyo']],
  ["geo.continent = 'Europe'", ['paris', 'lyon']],
  ['geo.coords.lat > 48', ['paris']],
  ["tags[0] = 'food'", ['lyon']],
  ["tags[#-1] = 'sushi'", ['tokyo']],
  ["tags[#-1] = 'food'", ['lyon']],
  ["zip-code = '75'", ['paris']],
  // AND binds tighter than OR
  ["country = 'JP' OR country = 'FR' AND is_capital = false", ['lyon', 'tokyo']],
  ["(country = 'JP' OR country = 'FR') AND is_capital = false", ['lyon']],
  ["country = 'US' or population > 10000000 and geo.continent = 'Asia'", ['tokyo', 'austin']],
  ["NOT_A_FIELD = 1 OR city = 'Lyon'", ['lyon']],
  ['', ['paris', 'lyon', 'tokyo', 'austin', 'bare']],
];

function matches(filter: string): string[] {
  const p = parseFilter(filter);
  return Object.entries(records)
    .filter(([, m]) => p(m))
    .map(([name]) => name);
}

describe('filter language', () => {
  it.each(table)('%s', (filter, expected) => {
    expect(matches(filter).sort()).toEqual([...expected].sort());
  });

  const errors: Array<[string, string]> = [
    ["city = 'Paris", "unterminated string starting with ' at position 7"],
    ['city =', 'expected a value (a quoted string, a number, true or false), found the end of the filter at position 6'],
    ["city == 'x'", "expected a value (a quoted string, a number, true or false), found '=' at position 6"],
    ["(city = 'x'", "expected ')', found the end of the filter at position 11"],
    ["city = 'x' AND", 'expected a condition, found the end of the filter at position 14'],
    [
      "city 'x'",
      "expected an operator (=, !=, <, <=, >, >=, GLOB, NOT GLOB, IN, NOT IN, CONTAINS, NOT CONTAINS), found ''x'' at position 5",
    ],
    ["city > 'x'", "'>' compares numbers only at position 5"],
    ["country IN 'FR'", "expected '(' to open the list of values, found ''FR'' at position 11"],
    ['HAS geo', "expected 'FIELD', found 'geo' at position 4"],
    ["city = 'x' extra", "unexpected 'extra' at position 11"],
    ['a = 1 $', "unexpected character '$' at position 6"],
    ["tags[#-] = 'x'", 'malformed field name'],
  ];
  it.each(errors)('syntax error: %s', (filter, message) => {
    expect(() => parseFilter(filter)).toThrow(FilterSyntaxError);
    expect(() => parseFilter(filter)).toThrow(message);
  });
});
