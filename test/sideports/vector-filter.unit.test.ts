// Redis 8 vector-set FILTER expressions, evaluated by the side port (src/sideports/vector/filter-expr.ts).
// Fixtures: every expected answer below was recorded from Redis 8.8.0's own expression engine
// (modules/vector-sets/expr.c at tag 8.8.0 of keix/rain-call, built with -DTEST_MAIN and run with each
// expression and attribute text); errors are the text Redis prints after
// "ERR syntax error in FILTER expression near: " (VSIM prints the whole expression when the position is
// the end).
import { describe, expect, it } from 'vitest';
import { strtodWhole } from '../../src/sideports/vector/c-number.js';
import { FilterExpression } from '../../src/sideports/vector/filter-expr.js';
import { jsonField } from '../../src/sideports/vector/json-field.js';

const A =
  '{"age": 25, "name": "Alice", "active": true, "off": false, "scores": [85, 90, 95], "city": "New York", "none": null, "nested": {"a": 1}, "s": "12", "hex": "0x10", "sp": " 7", "e": "", "tags": ["a", "b c", 3], "neg": -4.5, "big": 1e300, "esc": "a\\"b\\nc\\u00e9", "dash-key": 5, "inf": "inf"}';

const matches = (expr: string, attributes: string | null) => FilterExpression.compile(Buffer.from(expr)).matchesText(attributes);

describe('FILTER expressions as Redis 8.8.0 evaluates them', () => {
  it.each<[string, string, boolean]>([
    ['.age == 25', A, true],
    ['.age > 25', A, false],
    ['.age >= 25', A, true],
    ['.age < 26 and .age > 24', A, true],
    ['.age != 25', A, false],
    ['.age + 10 > 34', A, true],
    ['.age * 2 == 50', A, true],
    ['.age / 5 == 5', A, true],
    ['.age % 7 == 4', A, true],
    ['.age ** 2 == 625', A, true],
    ['2 ** 3 ** 2 == 512', A, true],
    ['(2 ** 3) ** 2 == 64', A, true],
    ['1 + 2 * 3 == 7', A, true],
    ['(1 + 2) * 3 == 9', A, true],
    ['10 - 2 - 3 == 5', A, true],
    ['-5 + 10 == 5', A, true],
    ['.age - -5 == 30', A, true],
    ['.neg < -4', A, true],
    ['1 / 0 > 1000', A, true],
    ['0 / 0', A, true],
    ['5 % 0', A, true],
    ['-7 % 3 == -1', A, true],
    ['1 ** (0/0) == 1', A, true],
    ['.active', A, true],
    ['.off', A, false],
    ['!.off', A, true],
    ['not .off', A, true],
    ['!(.age == 25)', A, false],
    ['not .age == 25', A, false],
    ['!.age == 0', A, true],
    ['.active and .off', A, false],
    ['.active && !.off', A, true],
    ['.off or .active', A, true],
    ['.off || .off', A, false],
    ['.name', A, true],
    ['.e', A, false],
    ['.none', A, false],
    ['.scores', A, true],
    ['0', A, false],
    ['1', A, true],
    ['"x"', A, true],
    ['""', A, false],
    ['null', A, false],
    ['[]', A, true],
    ['1 and 2 or 0', A, true],
    ['0 or 1 and 0', A, false],
    ['! 0', A, true],
    ['.missing == 1', A, false],
    ['.missing or 1', A, false],
    ['!.missing', A, false],
    ['.nested', A, false],
    ['.nested == 1 or 1', A, false],
    ['.dash-key == 5', A, true],
    ['.name == "Alice"', A, true],
    [".name == 'Alice'", A, true],
    ['.name != "Bob"', A, true],
    ['.name > "A"', A, false],
    ['.s == 12', A, true],
    ['.s > 11', A, true],
    ['.hex == 16', A, true],
    ['.sp == 7', A, true],
    ['.name == 0', A, true],
    ['.e == 0', A, true],
    ['.none == null', A, true],
    ['.none == 0', A, false],
    ['.none != null', A, false],
    ['.age == null', A, false],
    ['null == null', A, true],
    ['.active == 1', A, true],
    ['.off == 0', A, true],
    ['.inf > 1e308', A, true],
    ['"abc" == "abc"', A, true],
    ['.esc == "a\\"b\\nc\\u00e9"', A, false],
    ['"b\\nc" in .esc', A, false],
    ['"u00e9" in .esc', A, true],
    ['.big > 1e299', A, true],
    ['.age in [25, 35]', A, true],
    ['.age in [24, 26]', A, false],
    ['.name in ["Alice", "Bob"]', A, true],
    ['"lic" in .name', A, true],
    ['"xyz" in .name', A, false],
    ['"" in .name', A, true],
    ['.name in ""', A, false],
    ['"" in ""', A, true],
    ['90 in .scores', A, true],
    ['"90" in .scores', A, true],
    ['"b c" in .tags', A, true],
    ['3 in .tags', A, true],
    ['"b" in .tags', A, false],
    ['.age in "25"', A, false],
    ['25 in .name', A, false],
    ['.age in [25,]', A, true],
    ['.age in []', A, false],
    ['.age in [-25, 25.0]', A, true],
    ["'Ali' in .name and 'ice' in .name", A, true],
    ['"York" in .city', A, true],
    ['.a == 1', '{"a": 1, "a": 2}', true],
    ['.a == 2', '{"a": 1, "a": 2}', false],
    ['.a == 1', '{"a": 1, garbage', true],
    ['.b == 1', '{"a": 1, garbage, "b": 1}', false],
    ['.a', 'not json', false],
    ['1', 'not json', true],
    ['1', '', true],
    ['.a', '', false],
    ['.a == 1', '{ "a" : 1 }', true],
    ['.a == 1', '[{"a":1}]', false],
    ['.a', '{"a": tru}', false],
    ['.a', '{"a": truex}', false],
    ['.a == 1', '{"a": 1.0e0}', true],
    ['.a == 1', '{"a": +1}', true],
    ['.a', '{"a": -}', false],
    ['.a in [1, 2]', '{"a": [1, 2]}', false],
    ['1 in .a', '{"a": [[1], 1]}', true],
    ['.a == 0', '{"a": [1]}', true],
    ['.a', '{"a": []}', true],
    ['.b == 2', '{"a": {"x": [1, "}"]}, "b": 2}', true],
    ['.b == 2', '{"a": "x\\"}", "b": 2}', true],
    ['.a == "x"', '{"a": "x"}', true],
    ['.a', '{"a": "unterminated}', false],
    ['.a == 1', '{"a":1}', true],
    ['.a_b == 1', '{"a_b": 1}', true],
    ['1 2 +', A, true],
    ['1 !', A, false],
    ['.age 25 ==', A, true],
    ['.name == "it\\"s"', '{"name": "it\\"s"}', false],
    ["'it\\'s' == 'it\\'s'", A, true],
  ])('%s on %s → %s', (expr, attributes, want) => {
    expect(matches(expr, attributes)).toBe(want);
  });

  it('an element without attributes never matches, even a constant expression', () => {
    expect(matches('1', null)).toBe(false);
    expect(matches('1', '')).toBe(true);
  });

  it('compares bytes: non-ASCII text in attributes and expressions', () => {
    expect(matches('.city == "Zürich"', '{"city": "Zürich"}')).toBe(true);
    expect(matches('"ü" in .city', '{"city": "Zürich"}')).toBe(true);
    expect(matches('.city > "Z"', '{"city": "Zürich"}')).toBe(false);
  });
});

describe('FILTER syntax errors with Redis 8.8.0 texts', () => {
  it.each<[string, string]>([
    ['!!1', '!!1'],
    ['not not 1', 'not not 1'],
    ['', ''],
    ['.age ==', '.age =='],
    ['== 1', '== 1'],
    ['(.age == 25', '(.age == 25'],
    ['.age == 25)', '.age == 25)'],
    ['.age === 25', ' 25'],
    ['.age == true', '.age == true'],
    ['.age == true and .x', ' and .x'],
    ['.a.b == 1', '.a.b == 1'],
    ['.age = 25', ' 25'],
    ['.age == 1 @', '@'],
    ['.age == "open', '.age == "open'],
    ['.x & .y', ' .y'],
    ['.x | .y', ' .y'],
    ['.age == 1e', '.age == 1e'],
    ['.age == 1.2.3', '.age == 1.2.3'],
    ['.age in [1, .x]', '.x]'],
    ['.age in [1 2]', '2]'],
    ['.age in [1,', '.age in [1,'],
    ['AND', 'AND'],
    ['.age > 1 AND .age < 30', ' .age < 30'],
    ['(.a == null)', '(.a == null)'],
    ['-(1) == -1', '-(1) == -1'],
    ['. age', '. age'],
    ['.age == 0x10', '10'],
    ['.age == 25 andy', '.age == 25 andy'],
    ['#', '#'],
    ['[1, x]', 'x]'],
    ['.age in [true]', 'true]'],
    ['()', '()'],
    ['1 +', '1 +'],
    ['.x ==== 1', '.x ==== 1'],
    ['.age > 1 and', '.age > 1 and'],
    ['not', 'not'],
  ])('%s → near: %s', (expr, near) => {
    expect(() => FilterExpression.compile(Buffer.from(expr))).toThrow(new Error(`ERR syntax error in FILTER expression near: ${near}`));
  });

  it('reads the expression up to a NUL byte, as Redis reads a C string', () => {
    expect(matches('.age == 25\0garbage', A)).toBe(true);
  });
});

describe('the attribute scanner and C number reading under FILTER', () => {
  it('reads top-level fields only, first occurrence first', () => {
    expect(jsonField('{"a": {"b": 1}, "b": 2}', 'b')).toEqual({ t: 'num', v: 2 });
    expect(jsonField('{"a": 1, "a": 2}', 'a')).toEqual({ t: 'num', v: 1 });
    expect(jsonField('{"a": [1, "x", null, true]}', 'a')).toEqual({
      t: 'tuple',
      v: [{ t: 'num', v: 1 }, { t: 'str', v: 'x' }, { t: 'null' }, { t: 'num', v: 1 }],
    });
    expect(jsonField('{"a": {"b": 1}}', 'a')).toBeUndefined();
    expect(jsonField('"a"', 'a')).toBeUndefined();
  });

  it.each<[string, number | undefined]>([
    ['12', 12],
    [' 12', 12],
    ['12 ', undefined],
    ['0x10', 16],
    ['0x1.8p1', 3],
    ['-inf', -Infinity],
    ['Infinity', Infinity],
    ['1e3', 1000],
    ['.5', 0.5],
    ['abc', undefined],
    ['', 0],
  ])('strtod reads %j whole as %s', (text, want) => {
    expect(strtodWhole(text)).toBe(want);
  });

  it('strtod reads nan', () => {
    expect(strtodWhole('nan')).toBeNaN();
  });
});
