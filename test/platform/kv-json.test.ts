// The JSON command group over REST: a table of commands with the replies of RedisJSON's documentation
// examples (redis.io JSON.* pages; the order of `..` matches follows the real service, see docs/json.md),
// path syntax, precision, errors, atomicity, permissions and the library's life cycle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

type Reply = { result?: unknown; error?: string };
async function run(args: (string | number)[], token?: string): Promise<Reply> {
  return (await command(p, args, token ? { token } : {})).json;
}

/** Steps of one scenario: a command and the `{result}` or `{error}` it must answer. */
type Step = [(string | number)[], Reply];
const ok = (result: unknown): Reply => ({ result });
const fails = (error: string): Reply => ({ error });

const scenarios: Record<string, Step[]> = {
  'JSON.SET replaces, adds and updates several paths': [
    [['JSON.SET', 'set1', '$', '{"a":2}'], ok('OK')],
    [['JSON.SET', 'set1', '$.a', '3'], ok('OK')],
    [['JSON.GET', 'set1', '$'], ok('[{"a":3}]')],
    [['JSON.SET', 'set1', '$.b', '8'], ok('OK')],
    [['JSON.GET', 'set1', '$'], ok('[{"a":3,"b":8}]')],
    [['JSON.SET', 'set2', '$', '{"f1": {"a":1}, "f2":{"a":2}}'], ok('OK')],
    [['JSON.SET', 'set2', '$..a', '3'], ok('OK')],
    [['JSON.GET', 'set2'], ok('{"f1":{"a":3},"f2":{"a":3}}')],
    [['JSON.SET', 'set2', '$', '{"x":1}', 'NX'], ok(null)],
    [['JSON.SET', 'set2', '$.f1.a', '5', 'XX'], ok('OK')],
    [['JSON.SET', 'set2', '$.f1.z', '5', 'XX'], ok(null)],
    [['JSON.SET', 'set2', '$.f1.z', '5', 'NX'], ok('OK')],
    [['JSON.SET', 'set2', '$.f1.z', '6', 'NX'], ok(null)],
    [['JSON.SET', 'missing', '$', '1', 'XX'], ok(null)],
    [['JSON.SET', 'missing', '$.x', '1'], fails('ERR new objects must be created at the root')],
    [['JSON.SET', 'set2', '$.no.such', '1'], ok(null)],
    [['JSON.SET', 'set2', '$..q', '1'], fails('Err wrong static path')],
    [['JSON.SET', 'set2', '$', '{"a":1}', 'XY'], fails('ERR syntax error')],
    [['JSON.SET', 'set2', '$'], fails("ERR wrong number of arguments for 'json.set' command")],
  ],
  'JSON.GET: JSONPath arrays, legacy scalars, several paths, formatting': [
    [['JSON.SET', 'get1', '$', '{"a":2, "b": 3, "nested": {"a": 4, "b": null}}'], ok('OK')],
    [['JSON.GET', 'get1', '$..b'], ok('[null,3]')],
    [['JSON.GET', 'get1', '..a', '$..b'], ok('{"..a":[4,2],"$..b":[null,3]}')],
    [['JSON.GET', 'get1', '.a', '.nested.a'], ok('{".a":2,".nested.a":4}')],
    [['JSON.GET', 'get1', '.nested'], ok('{"a":4,"b":null}')],
    [['JSON.GET', 'get1', 'nested.a'], ok('4')],
    [['JSON.GET', 'get1', '$.nope'], ok('[]')],
    [['JSON.GET', 'get1', '.nope'], fails('ERR Path does not exist')],
    [['JSON.GET', 'get1', 'INDENT', '\t', 'NEWLINE', '\n', 'SPACE', ' ', '.nested'], ok('{\n\t"a": 4,\n\t"b": null\n}')],
    [['JSON.GET', 'get1', 'INDENT', '  ', 'NEWLINE', '\n', '$.nested'], ok('[\n  {\n    "a":4,\n    "b":null\n  }\n]')],
    [['JSON.GET', 'nosuchkey'], ok(null)],
    [['JSON.GET', 'get1', '$.a[', '$'], fails("Error occurred at position 5, expected '<number>[,<number>,...]'")],
  ],
  'JSON.MGET and JSON.MSET': [
    [['JSON.SET', 'mg1', '$', '{"a":1, "b": 2, "nested": {"a": 3}, "c": null}'], ok('OK')],
    [['JSON.SET', 'mg2', '$', '{"a":4, "b": 5, "nested": {"a": 6}, "c": null}'], ok('OK')],
    [['SET', 'mgstr', 'plain'], ok('OK')],
    [['JSON.MGET', 'mg1', 'mg2', 'mgstr', 'mgnone', '$..a'], ok(['[3,1]', '[6,4]', null, null])],
    [['JSON.MGET', 'mg1', 'mg2', '.b'], ok(['2', '5'])],
    [['JSON.MSET', 'ms1', '$', '{"a":1}', 'ms2', '$', '{"f":{"a":2}}', 'ms3', '$', '{"f1":{"a":0},"f2":{"a":0}}'], ok('OK')],
    [['JSON.MSET', 'ms1', '$', '{"a":2}', 'ms2', '$.f.a', '3', 'ms3', '$', '{"f1":{"a":1},"f2":{"a":2}}'], ok('OK')],
    [['JSON.GET', 'ms1', '$'], ok('[{"a":2}]')],
    [['JSON.GET', 'ms2', '$'], ok('[{"f":{"a":3}}]')],
    [['JSON.GET', 'ms3', '$..a'], ok('[1,2]')],
    [['JSON.MSET', 'ms1', '$', '{"a":9}', 'msnew', '$.x', '1'], fails('ERR new objects must be created at the root')],
    [['JSON.GET', 'ms1', '$'], ok('[{"a":2}]')],
    [['JSON.MSET', 'ms1', '$'], fails("ERR wrong number of arguments for 'json.mset' command")],
  ],
  'JSON.MERGE (RFC 7396)': [
    [['JSON.SET', 'mer', '$', '{"a":2}'], ok('OK')],
    [['JSON.MERGE', 'mer', '$.b', '8'], ok('OK')],
    [['JSON.GET', 'mer', '$'], ok('[{"a":2,"b":8}]')],
    [['JSON.MERGE', 'mer', '$', '{"a":null}'], ok('OK')],
    [['JSON.GET', 'mer', '$'], ok('[{"b":8}]')],
    [['JSON.SET', 'mer2', '$', '{"f1": {"a":1}, "f2":{"a":2}}'], ok('OK')],
    [['JSON.MERGE', 'mer2', '$', '{"f1": null, "f2":{"a":3, "b":4}, "f3":[2,4,6]}'], ok('OK')],
    [['JSON.GET', 'mer2'], ok('{"f2":{"a":3,"b":4},"f3":[2,4,6]}')],
    [['JSON.MERGE', 'mer2', '$..a', '7'], ok('OK')],
    [['JSON.GET', 'mer2'], ok('{"f2":{"a":7,"b":4},"f3":[2,4,6]}')],
    [['JSON.MERGE', 'mernew', '$.a', '1'], fails('ERR new objects must be created at the root')],
  ],
  'JSON.DEL, JSON.FORGET and the empty document': [
    [['JSON.SET', 'del1', '$', '{"a": 1, "nested": {"a": 2, "b": 3}}'], ok('OK')],
    [['JSON.DEL', 'del1', '$..a'], ok(2)],
    [['JSON.GET', 'del1', '$'], ok('[{"nested":{"b":3}}]')],
    [['JSON.FORGET', 'del1', '$.nested.b'], ok(1)],
    [['JSON.DEL', 'del1', '$.nope'], ok(0)],
    [['JSON.SET', 'del2', '$', '[1,2,3,4,5]'], ok('OK')],
    [['JSON.DEL', 'del2', '$[1,3]'], ok(2)],
    [['JSON.GET', 'del2'], ok('[1,3,5]')],
    [['JSON.DEL', 'del2'], ok(1)],
    [['EXISTS', 'del2'], ok(0)],
    [['JSON.SET', 'del3', '.', '{"foo": "bar"}'], ok('OK')],
    [['JSON.DEL', 'del3', '.foo'], ok(1)],
    [['JSON.GET', 'del3'], ok(null)],
    [['JSON.DEL', 'nosuchkey'], ok(0)],
  ],
  'JSON.TYPE and TYPE': [
    [['JSON.SET', 'ty', '$', '{"a":2, "nested": {"a": true}, "foo": "bar", "f": 1.5, "n": null, "o": {}, "l": []}'], ok('OK')],
    [['JSON.TYPE', 'ty', '$..foo'], ok(['string'])],
    [['JSON.TYPE', 'ty', '$..a'], ok(['boolean', 'integer'])],
    [['JSON.TYPE', 'ty', '$..dummy'], ok([])],
    [['JSON.TYPE', 'ty', '$.*'], ok(['integer', 'object', 'string', 'number', 'null', 'object', 'array'])],
    [['JSON.TYPE', 'ty'], ok('object')],
    [['JSON.TYPE', 'ty', '.nope'], ok(null)],
    [['JSON.TYPE', 'nosuchkey'], ok(null)],
    [['TYPE', 'ty'], ok('ReJSON-RL')],
    [['SET', 'tystr', 'x'], ok('OK')],
    [['TYPE', 'tystr'], ok('string')],
    [['TYPE', 'nosuchkey'], ok('none')],
    [['JSON.GET', 'tystr'], fails('WRONGTYPE Operation against a key holding the wrong kind of value')],
    [['JSON.SET', 'tystr', '$', '1'], fails('WRONGTYPE Operation against a key holding the wrong kind of value')],
    [['TYPE'], fails("ERR wrong number of arguments for 'type' command")],
  ],
  'JSON.CLEAR and JSON.TOGGLE': [
    [['JSON.SET', 'cl', '$', '{"obj":{"a":1, "b":2}, "arr":[1,2,3], "str": "foo", "bool": true, "int": 42, "float": 3.14}'], ok('OK')],
    [['JSON.CLEAR', 'cl', '$.*'], ok(4)],
    [['JSON.GET', 'cl', '$'], ok('[{"obj":{},"arr":[],"str":"foo","bool":true,"int":0,"float":0}]')],
    [['JSON.CLEAR', 'cl'], ok(1)],
    [['JSON.GET', 'cl'], ok('{}')],
    [['JSON.SET', 'tg', '$', '{"bool": true}'], ok('OK')],
    [['JSON.TOGGLE', 'tg', '$.bool'], ok([0])],
    [['JSON.GET', 'tg', '$'], ok('[{"bool":false}]')],
    [['JSON.TOGGLE', 'tg', '$.bool'], ok([1])],
    [['JSON.TOGGLE', 'tg', '.bool'], ok('false')],
    [['JSON.TOGGLE', 'tg', '$'], ok([null])],
    [['JSON.TOGGLE', 'tg', '.'], fails('ERR Path does not exist or not a bool')],
    [['JSON.TOGGLE', 'nosuchkey', '$'], fails("ERR could not perform this operation on a key that doesn't exist")],
  ],
  'JSON.NUMINCRBY and JSON.NUMMULTBY': [
    [['JSON.SET', 'num', '$', '{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}'], ok('OK')],
    [['JSON.NUMINCRBY', 'num', '$.a', '2'], ok('[null]')],
    [['JSON.NUMINCRBY', 'num', '$..a', '2'], ok('[4,7,null,null]')],
    [['JSON.NUMMULTBY', 'num', '$..a', '2'], ok('[8,14,null,null]')],
    [['JSON.NUMINCRBY', 'num', '.b[0].a', '0.5'], ok('8.5')],
    [['JSON.NUMMULTBY', 'num', '.b[0].a', '2'], ok('17.0')],
    [['JSON.NUMINCRBY', 'num', '.a', '1'], fails('ERR Path does not exist or does not contains a number')],
    [['JSON.NUMINCRBY', 'num', '$.b[1].a', 'x'], fails('expected value at line 1 column 1')],
    [['JSON.SET', 'num2', '$', '0.1'], ok('OK')],
    [['JSON.NUMINCRBY', 'num2', '$', '0.2'], ok('[0.30000000000000004]')],
    [['JSON.SET', 'num3', '$', '9223372036854775806'], ok('OK')],
    [['JSON.NUMINCRBY', 'num3', '.', '1'], ok('9223372036854775807')],
    [['JSON.NUMINCRBY', 'num3', '.', '1'], fails('ERR numeric overflow')],
    [['JSON.NUMMULTBY', 'num3', '.', '-1'], ok('-9223372036854775807')],
    [['JSON.SET', 'num4', '$', '1.6350000000001313e+308'], ok('OK')],
    [['JSON.NUMMULTBY', 'num4', '.', '2'], fails('ERR result is not a number')],
  ],
  'JSON.STRAPPEND and JSON.STRLEN': [
    [['JSON.SET', 'str', '$', '{"a":"foo", "nested": {"a": "hello"}, "nested2": {"a": 31}}'], ok('OK')],
    [['JSON.STRAPPEND', 'str', '$..a', '"baz"'], ok([8, null, 6])],
    [['JSON.GET', 'str'], ok('{"a":"foobaz","nested":{"a":"hellobaz"},"nested2":{"a":31}}')],
    [['JSON.STRLEN', 'str', '$..a'], ok([8, null, 6])],
    [['JSON.STRLEN', 'str', '.a'], ok(6)],
    [['JSON.STRAPPEND', 'str', '.a', '"!"'], ok(7)],
    [['JSON.STRAPPEND', 'str', '.nested2.a', '"!"'], fails('ERR Path does not exist or not a string')],
    [['JSON.STRAPPEND', 'str', '$.a', '1'], fails('WRONGTYPE wrong type of path value - expected string')],
    [['JSON.SET', 'str2', '$', '"é"'], ok('OK')],
    [['JSON.STRLEN', 'str2'], ok(2)],
    [['JSON.STRAPPEND', 'str2', '"ü"'], ok(4)],
  ],
  'JSON.ARRAPPEND, ARRINSERT, ARRINDEX, ARRLEN': [
    [
      [
        'JSON.SET',
        'item:1',
        '$',
        '{"name":"Noise-cancelling Bluetooth headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver"]}',
      ],
      ok('OK'),
    ],
    [['JSON.ARRAPPEND', 'item:1', '$.colors', '"blue"'], ok([3])],
    [['JSON.GET', 'item:1', '$.colors'], ok('[["black","silver","blue"]]')],
    [['JSON.ARRINSERT', 'item:1', '$.colors', '2', '"yellow"', '"gold"'], ok([5])],
    [['JSON.GET', 'item:1', '$.colors'], ok('[["black","silver","yellow","gold","blue"]]')],
    [['JSON.ARRINDEX', 'item:1', '$..colors', '"silver"'], ok([1])],
    [['JSON.ARRINDEX', 'item:1', '$..colors', '"silver"', '2'], ok([-1])],
    [['JSON.ARRINDEX', 'item:1', '$..colors', '"blue"', '-2', '0'], ok([4])],
    [['JSON.ARRINDEX', 'item:1', '.colors', '"gold"'], ok(3)],
    [['JSON.ARRINDEX', 'item:1', '$.name', '"x"'], ok([null])],
    [['JSON.ARRLEN', 'item:1', '$.colors'], ok([5])],
    [['JSON.ARRLEN', 'item:1', '$..*'], ok([null, null, null, null, null, null, null, null, null, null, null, null, 5])],
    [['JSON.ARRLEN', 'item:1', '.colors'], ok(5)],
    [['JSON.ARRLEN', 'nosuchkey', '.colors'], ok(null)],
    [['JSON.ARRINSERT', 'item:1', '$.colors', '9', '"x"'], fails('ERR index out of bounds')],
    [['JSON.ARRINSERT', 'item:1', '$.colors', '-1', '"x"'], ok([6])],
    [['JSON.GET', 'item:1', '.colors[-2:]'], ok('"x"')],
    [['JSON.GET', 'item:1', '$.colors[-2:]'], ok('["x","blue"]')],
    [['JSON.ARRAPPEND', 'item:1', '.name', '1'], fails('ERR Path does not exist or not an array')],
    [['JSON.ARRAPPEND', 'item:1', '$.colors'], fails("ERR wrong number of arguments for 'json.arrappend' command")],
  ],
  'JSON.ARRPOP and JSON.ARRTRIM': [
    [['JSON.SET', 'pop', '$', '{"max_level":[80, 90, 100, 120]}'], ok('OK')],
    [['JSON.ARRPOP', 'pop', '$.max_level', '0'], ok(['80'])],
    [['JSON.ARRPOP', 'pop', '$.max_level'], ok(['120'])],
    [['JSON.GET', 'pop', '$.max_level'], ok('[[90,100]]')],
    [['JSON.ARRPOP', 'pop', '.max_level', '99'], ok('100')],
    [['JSON.ARRPOP', 'pop', '.max_level'], ok('90')],
    [['JSON.ARRPOP', 'pop', '.max_level'], ok(null)],
    [['JSON.ARRPOP', 'pop', '$.max_level'], ok([null])],
    [['JSON.SET', 'pop2', '$', '[{"a":1},[]]'], ok('OK')],
    [['JSON.ARRPOP', 'pop2'], ok('[]')],
    [['JSON.ARRPOP', 'pop2'], ok('{"a":1}')],
    [['JSON.SET', 'trim', '.', '[[], ["a"], ["a", "b"], ["a", "b", "c"]]'], ok('OK')],
    [['JSON.ARRTRIM', 'trim', '$[*]', '0', '1'], ok([0, 1, 2, 2])],
    [['JSON.GET', 'trim'], ok('[[],["a"],["a","b"],["a","b"]]')],
    [['JSON.SET', 'trim2', '.', '{"children": ["John", "Jack", "Tom", "Bob", "Mike"]}'], ok('OK')],
    [['JSON.ARRTRIM', 'trim2', '.children', '0', '1'], ok(2)],
    [['JSON.GET', 'trim2', '.children'], ok('["John","Jack"]')],
    [['JSON.ARRTRIM', 'trim2', '.children', '5', '9'], ok(0)],
    [['JSON.ARRTRIM', 'trim2', '.children', 'a', '1'], fails('ERR value is not an integer or out of range')],
  ],
  'JSON.OBJKEYS, JSON.OBJLEN, JSON.RESP, JSON.DEBUG MEMORY': [
    [['JSON.SET', 'obj', '$', '{"a":[3], "nested": {"a": {"b":2, "c": 1}}}'], ok('OK')],
    [['JSON.OBJKEYS', 'obj', '$..a'], ok([['b', 'c'], null])],
    [['JSON.OBJLEN', 'obj', '$..a'], ok([2, null])],
    [['JSON.OBJKEYS', 'obj'], ok(['a', 'nested'])],
    [['JSON.OBJLEN', 'obj', '.nested'], ok(1)],
    [['JSON.OBJKEYS', 'obj', '.a'], fails('ERR Path does not exist or not an object')],
    [
      [
        'JSON.SET',
        'item:2',
        '$',
        '{"name":"Wireless earbuds","connection":{"wireless":true,"type":"Bluetooth"},"price":64.99,"stock":17,"colors":["black","white"],"gift":null}',
      ],
      ok('OK'),
    ],
    [
      ['JSON.RESP', 'item:2'],
      ok([
        '{',
        'name',
        'Wireless earbuds',
        'connection',
        ['{', 'wireless', 'true', 'type', 'Bluetooth'],
        'price',
        '64.99',
        'stock',
        17,
        'colors',
        ['[', 'black', 'white'],
        'gift',
        null,
      ]),
    ],
    [['JSON.RESP', 'item:2', '$.colors[*]'], ok(['black', 'white'])],
    [['JSON.RESP', 'nosuchkey'], ok(null)],
    [['JSON.DEBUG', 'MEMORY', 'nosuchkey'], ok(0)],
    [['JSON.DEBUG', 'HELP'], ok(['MEMORY <key> [path] - reports memory usage', 'HELP                - this message'])],
    [['JSON.DEBUG', 'NOPE'], fails('ERR unknown subcommand - try `JSON.DEBUG HELP`')],
  ],
  'JSONPath: wildcards, slices, unions, filters, bracket names': [
    [
      [
        'JSON.SET',
        'store',
        '$',
        '{"inventory":{"headphones":[{"id":12345,"name":"Noise-cancelling Bluetooth headphones","price":99.98,"wireless":true,"connection":"Bluetooth"},{"id":12346,"name":"Wireless earbuds","price":64.99,"wireless":true,"connection":"Bluetooth"},{"id":12347,"name":"Mic headset","price":35.01,"wireless":false,"connection":"USB"}],"keyboards":[{"id":22345,"name":"Wireless keyboard","price":44.99,"wireless":true,"connection":"Bluetooth"},{"id":22346,"name":"USB-C keyboard","price":29.99,"wireless":false,"connection":"USB"}]},"a b":{"c.d":1}}',
      ],
      ok('OK'),
    ],
    [['JSON.GET', 'store', '$.inventory.*[?(@.price<50)].name'], ok('["Mic headset","Wireless keyboard","USB-C keyboard"]')],
    [['JSON.GET', 'store', '$..headphones[?(@.price < 70 && @.wireless == true)].id'], ok('[12346]')],
    [['JSON.GET', 'store', '$..[?(@.connection=="USB" || @.price > 90)].id'], ok('[12345,12347,22346]')],
    [['JSON.GET', 'store', '$..headphones[?(!(@.price > 50))].name'], ok('["Mic headset"]')],
    [['JSON.GET', 'store', '$..headphones[?(!@.wireless)].name'], ok('[]')],
    [['JSON.GET', 'store', "$..keyboards[?(@.name =~ 'USB')].id"], ok('[22346]')],
    [['JSON.GET', 'store', '$.inventory.headphones[0:2].id'], ok('[12345,12346]')],
    [['JSON.GET', 'store', '$.inventory.headphones[:1].id'], ok('[12345]')],
    [['JSON.GET', 'store', '$.inventory.headphones[1:].id'], ok('[12346,12347]')],
    [['JSON.GET', 'store', '$.inventory.headphones[0:3:2].id'], ok('[12345,12347]')],
    [['JSON.GET', 'store', '$.inventory.headphones[-1].id'], ok('[12347]')],
    [['JSON.GET', 'store', '$.inventory.headphones[0,2].id'], ok('[12345,12347]')],
    [['JSON.GET', 'store', '$.inventory.keyboards[*].price'], ok('[44.99,29.99]')],
    [['JSON.GET', 'store', "$['a b']['c.d']"], ok('[1]')],
    [['JSON.GET', 'store', '$["inventory"]["keyboards"][1]["id"]'], ok('[22346]')],
    [['JSON.GET', 'store', '$..id'], ok('[12345,12346,12347,22345,22346]')],
    [['JSON.GET', 'store', '.inventory.keyboards[1].id'], ok('22346')],
    [['JSON.SET', 'store', '$.inventory.headphones[?(@.price < 40)].price', '30'], ok('OK')],
    [['JSON.GET', 'store', '$.inventory.headphones[2].price'], ok('[30]')],
  ],
  'numbers, strings and containers keep their form': [
    [
      [
        'JSON.SET',
        'form',
        '$',
        '{"max":9223372036854775807,"min":-9223372036854775808,"u":18446744073709551615,"huge":123456789012345678901234567890,"f":1.0,"e":1e2,"small":0.000001,"tiny":1.5e-7,"big":1e16,"neg0":-0.0,"pi":3.141592653589793,"arr":[],"obj":{},"nested":[[],{}]}',
      ],
      ok('OK'),
    ],
    [
      ['JSON.GET', 'form'],
      ok(
        '{"max":9223372036854775807,"min":-9223372036854775808,"u":18446744073709551615,"huge":1.2345678901234568e29,"f":1.0,"e":100.0,"small":1e-6,"tiny":1.5e-7,"big":1e16,"neg0":-0.0,"pi":3.141592653589793,"arr":[],"obj":{},"nested":[[],{}]}',
      ),
    ],
    [['JSON.TYPE', 'form', '$.max'], ok(['integer'])],
    [['JSON.TYPE', 'form', '$.f'], ok(['number'])],
    [['JSON.SET', 'esc', '$', '"\\u00e9\\ud83d\\ude00 \\n\\t\\"\\\\\\/ \\u0001"'], ok('OK')],
    [['JSON.GET', 'esc'], ok('"é😀 \\n\\t\\"\\\\/ \\u0001"')],
    [['JSON.STRLEN', 'esc'], ok(14)],
    [['JSON.SET', 'esc2', '$', '{"ключ":"значение","emoji":"🎉"}'], ok('OK')],
    [['JSON.GET', 'esc2', '$["ключ"]'], ok('["значение"]')],
    [['JSON.GET', 'esc2', '$.emoji'], ok('["🎉"]')],
  ],
  "RedisJSON's own tests (tests/pytest/test.py: NX/XX, bracket notation, special keys, path errors)": [
    [['JSON.SET', 'rj', '.', '{}', 'XX'], ok(null)],
    [['JSON.SET', 'rj', '.', '{}', 'NX'], ok('OK')],
    [['JSON.SET', 'rj', '.', '{}', 'NX'], ok(null)],
    [['JSON.SET', 'rj', '.', '{}', 'XX'], ok('OK')],
    [['JSON.SET', 'rj', '.foo', '[]', 'XX'], ok(null)],
    [['JSON.SET', 'rj', '.foo', '[]', 'NX'], ok('OK')],
    [['JSON.SET', 'rj', '.foo', '[]', 'NX'], ok(null)],
    [['JSON.SET', 'rj', '.foo', '[1]', 'XX'], ok('OK')],
    [['JSON.SET', 'rj', '.foo[1]', 'null', 'NX'], fails('ERR array index out of range')],
    [['JSON.SET', 'rj', '.foo', '[]', ''], fails('ERR syntax error')],
    [['JSON.SET', 'rj', '.foo', '[]', 'NN'], fails('ERR syntax error')],
    [['JSON.SET', 'rj', '.foo', '[]', 'XX', 'XN'], fails('ERR syntax error')],
    [['JSON.SET', 'x', '.', '{}'], ok('OK')],
    [['JSON.SET', 'x', '.["f1"]', '{}'], ok('OK')],
    [['JSON.SET', 'x', '.["f1"].f2', '[0,0,0]'], ok('OK')],
    [['JSON.SET', 'x', '.["f1"].f2[1]', '{}'], ok('OK')],
    [['JSON.SET', 'x', '.["f1"].f2[1]["f.]$.f"]', '{}'], ok('OK')],
    [['JSON.SET', 'x', '.["f1"]["f2"][1]["f.]$.f"]', '1'], ok('OK')],
    [['JSON.SET', 'x', '.["f3"].f2', '1'], ok(null)],
    [['JSON.GET', 'x'], ok('{"f1":{"f2":[0,{"f.]$.f":1},0]}}')],
    [['JSON.SET', 'xa', '.', '[1,2,3]'], ok('OK')],
    [['JSON.GET', 'xa', '.[1]'], ok('2')],
    [['JSON.GET', 'xa', '[1]'], ok('2')],
    [['JSON.GET', 'xa', '$.[1]'], ok('[2]')],
    [['JSON.GET', 'xa', '$[1]'], ok('[2]')],
    [['JSON.SET', 'sk', '$', '{"$":"$"}'], ok('OK')],
    [['JSON.SET', 'sk', 'a', '"a"'], ok('OK')],
    [['JSON.SET', 'sk', '$a', '"$a"'], ok('OK')],
    [['JSON.SET', 'sk', '$["$a["]', '"$a["'], ok('OK')],
    [['JSON.GET', 'sk', '$'], ok('[{"$":"$","a":"a","$a":"$a","$a[":"$a["}]')],
    [['JSON.GET', 'sk', '$.$'], ok('["$"]')],
    [['JSON.GET', 'sk', '$["$"]'], ok('["$"]')],
    [['JSON.GET', 'sk', 'a'], ok('"a"')],
    [['JSON.GET', 'sk', '$.$a'], ok('["$a"]')],
    [['JSON.GET', 'sk', '$a'], ok('"$a"')],
    [['JSON.SET', 'x', '$..f', '1'], fails('Err wrong static path')],
    [['JSON.SET', 'x', '$[0]', '1'], fails('ERR array index out of range')],
  ],
  "RedisJSON's own tests: ARRINDEX, ARRINSERT, ARRTRIM, ARRPOP": [
    [['JSON.SET', 'ai', '.', '{ "arr": [0, 1, 2, 3, 2, 1, 0] }'], ok('OK')],
    ...(
      [
        [['0'], 0],
        [['3'], 3],
        [['4'], -1],
        [['0', '1'], 6],
        [['0', '-1'], 6],
        [['0', '6'], 6],
        [['0', '4', '0'], 6],
        [['0', '5', '-1'], -1],
        [['0', '5', '0'], 6],
        [['2', '-2', '6'], -1],
        [['"foo"'], -1],
      ] as const
    ).map(([args, index]): Step => [['JSON.ARRINDEX', 'ai', '.arr', ...args], ok(index)]),
    [['JSON.ARRINSERT', 'ai', '.arr', '4', '[4]'], ok(8)],
    [['JSON.ARRINDEX', 'ai', '.arr', '2', '3'], ok(5)],
    [['JSON.ARRINDEX', 'ai', '.arr', '[4]'], ok(4)],
    [['JSON.ARRINDEX', 'ai', '$.arr', '2', '1', '4'], ok([2])],
    [['JSON.ARRINDEX', 'ai', '$.arr', '3', '0', '2'], ok([-1])],
    [['JSON.SET', 'ains', '.', '{ "arr": [] }'], ok('OK')],
    [['JSON.ARRINSERT', 'ains', '.arr', '0', '1'], ok(1)],
    [['JSON.ARRINSERT', 'ains', '.arr', '-1', '2'], ok(2)],
    [['JSON.ARRINSERT', 'ains', '.arr', '-2', '3'], ok(3)],
    [['JSON.ARRINSERT', 'ains', '.arr', '3', '4'], ok(4)],
    [['JSON.GET', 'ains', '.arr'], ok('[3,2,1,4]')],
    [['JSON.ARRINSERT', 'ains', '.arr', '1', '5'], ok(5)],
    [['JSON.ARRINSERT', 'ains', '.arr', '-2', '6'], ok(6)],
    [['JSON.ARRINSERT', 'ains', '.arr', '-3', '7', '{"A":"Z"}', '9'], ok(9)],
    [['JSON.GET', 'ains', '.arr'], ok('[3,5,2,7,{"A":"Z"},9,6,1,4]')],
    [['JSON.ARRINSERT', 'ains', '.arr', '-10', '10'], fails('ERR index out of bounds')],
    [['JSON.ARRINSERT', 'ains', '.arr', '10', '10'], fails('ERR index out of bounds')],
    [['JSON.GET', 'ains', '.arr'], ok('[3,5,2,7,{"A":"Z"},9,6,1,4]')],
    [['JSON.SET', 'at', '.', '{ "arr": [0, 1, 2, 3, 2, 1, 0] }'], ok('OK')],
    [['JSON.ARRTRIM', 'at', '.arr', '1', '-2'], ok(5)],
    [['JSON.GET', 'at', '.arr'], ok('[1,2,3,2,1]')],
    [['JSON.ARRTRIM', 'at', '.arr', '0', '99'], ok(5)],
    [['JSON.ARRTRIM', 'at', '.arr', '0', '2'], ok(3)],
    [['JSON.GET', 'at', '.arr'], ok('[1,2,3]')],
    [['JSON.ARRTRIM', 'at', '.arr', '99', '2'], ok(0)],
    [['JSON.GET', 'at', '.arr'], ok('[]')],
    [['JSON.ARRTRIM', 'at', '.arr', '-1', '0'], ok(0)],
    [['JSON.SET', 'at', '.', '{ "arr": [0, 1, 2, 3, 2, 1, 0] }'], ok('OK')],
    [['JSON.ARRTRIM', 'at', '.arr', '-4', '1'], ok(0)],
    [['JSON.SET', 'ap', '.', '[1,2,3,4,5,6,7,8,9]'], ok('OK')],
    ...(
      [
        [[], '9'],
        [['.'], '8'],
        [['.', '-1'], '7'],
        [['.', '-2'], '5'],
        [['.', '0'], '1'],
        [['.', '2'], '4'],
        [['.', '99'], '6'],
        [['.', '-99'], '2'],
        [[], '3'],
        [[], null],
        [['.'], null],
        [['.', '2'], null],
      ] as const
    ).map(([args, popped]): Step => [['JSON.ARRPOP', 'ap', ...args], ok(popped)]),
    [['JSON.SET', 'ap1', '.', '1'], ok('OK')],
    [['JSON.ARRPOP', 'ap1'], fails('ERR Path does not exist or not an array')],
    [['JSON.ARRTRIM', 'ap1', '.', '0', '1'], fails('ERR Path does not exist or not an array')],
  ],
  "RedisJSON's own tests: escapes and filters (testEscape, testFilter, testFilterExpression/Precedence/Negation)": [
    [['JSON.SET', 'esc3', '$', '{"val": "escaped control here:\\b \\f \\n \\r \\t \\/ \\\\"}'], ok('OK')],
    [['JSON.GET', 'esc3', '$.val'], ok('["escaped control here:\\b \\f \\n \\r \\t / \\\\"]')],
    [['JSON.SET', 'esc3', '$', '{"val": "escaped quote here:\\""}'], ok('OK')],
    [['JSON.GET', 'esc3', '$.val'], ok('["escaped quote here:\\""]')],
    [['JSON.SET', 'esc3', '$', '{"val": "escaped unicode here:\\u2B50"}'], ok('OK')],
    [['JSON.GET', 'esc3', '$.val'], ok('["escaped unicode here:⭐"]')],
    [
      [
        'JSON.SET',
        'flt',
        '$',
        '{"arr": ["kaboom", "kafoosh", "four", "bar", 7.0, "foolish", ["food", "foo", "FoO", "fight"], -9, {"in": "fooctious"}, "ffool", "(?i)^[f][o][o]$", false, null], "pat_regex": ".*foo", "pat_plain": "(?i)^[f][o][o]$", "pat_bad": "[f.*", "pat_not_str1": 42, "pat_not_str2": null, "pat_not_str3": true, "pat_not_str4": {"p": ".*foo"}, "pat_not_str5": [".*foo"]}',
      ],
      ok('OK'),
    ],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ ".*foo")]'], ok('["kafoosh","foolish","ffool"]')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_regex)]'], ok('["kafoosh","foolish","ffool"]')],
    [['JSON.SET', 'flt', '$.pat_regex', '"k.*foo"'], ok('OK')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_regex)]'], ok('["kafoosh"]')],
    [['JSON.GET', 'flt', '$.arr[?(@ == $.pat_bad)]'], ok('[]')],
    [['JSON.GET', 'flt', '$.arr[?(@ == $.pat_bad || @>4.5)]'], ok('[7.0]')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_missing)]'], ok('[]')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_not_str1)]'], ok('[]')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_not_str2)]'], ok('[]')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_not_str3)]'], ok('[]')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_not_str4)]'], ok('[]')],
    [['JSON.GET', 'flt', '$.arr[?(@ =~ $.pat_not_str5)]'], ok('[]')],
    [['JSON.GET', 'flt', '$.arr[?(@ == $.pat_plain)]'], ok('["(?i)^[f][o][o]$"]')],
    [
      [
        'JSON.SET',
        'fex',
        '$',
        '[{"foo": 1, "bar": 2, "baz": 3, "quux": 4}, {"foo": 2, "bar": 4, "baz": 6, "quux": 9}, {"foo": 2, "bar": 3, "baz": 6, "quux": 10}]',
      ],
      ok('OK'),
    ],
    [['JSON.GET', 'fex', '$[?(@.foo>1 && @.quux>8 && @.bar>3 && @.baz>4)]'], ok('[{"foo":2,"bar":4,"baz":6,"quux":9}]')],
    [['JSON.SET', 'fpr', '$', '[{"t": true, "f": false, "one": 1}, {"t": true, "f": false, "one": 2}]'], ok('OK')],
    [['JSON.GET', 'fpr', '$[?(@.f==true || @.one==1 && @.t==true)]'], ok('[{"t":true,"f":false,"one":1}]')],
    [['JSON.GET', 'fpr', '$[?(@.f==true || @.one==1 && @.t==false)]'], ok('[]')],
    [['JSON.SET', 'fng', '$', '[{"a": 1, "b": 1}, {"b": 2}, {"a": 1}, {"c": 3}]'], ok('OK')],
    [['JSON.GET', 'fng', '$[?!@.a]'], ok('[{"b":2},{"c":3}]')],
    [['JSON.GET', 'fng', '$[?!!@.a]'], ok('[{"a":1,"b":1},{"a":1}]')],
    [['JSON.GET', 'fng', '$[?!(@.a==1)]'], ok('[{"b":2},{"c":3}]')],
    [['JSON.GET', 'fng', '$[?!@.a==1]'], ok('[{"b":2},{"c":3}]')],
    [['JSON.GET', 'fng', '$[?!@.a && @.b]'], ok('[{"b":2}]')],
    [['JSON.GET', 'fng', '$[?!(@.a || @.b)]'], ok('[{"c":3}]')],
  ],
  'invalid JSON and paths are refused with RedisJSON-style errors': [
    [['JSON.SET', 'bad', '$', '{"a":1'], fails('EOF while parsing an object at line 1 column 6')],
    [['JSON.SET', 'bad', '$', 'nope'], fails('expected ident at line 1 column 2')],
    [['JSON.SET', 'bad', '$', '[1,]'], fails('trailing comma at line 1 column 4')],
    [['JSON.SET', 'bad', '$', '{"a":1} x'], fails('trailing characters at line 1 column 9')],
    [['JSON.SET', 'bad', '$', '01'], fails('invalid number at line 1 column 2')],
    [['JSON.SET', 'bad', '$', '"\\x"'], fails('invalid escape at line 1 column 3')],
    [['JSON.SET', 'bad', '$', '1e400'], fails('number out of range at line 1 column 1')],
    [['JSON.SET', 'bad', '$', '['.repeat(200)], fails('recursion limit exceeded at line 1 column 129')],
    [['EXISTS', 'bad'], ok(0)],
    [['JSON.GET', 'store', '$.a..'], fails('Error occurred at position 6, expected <string>')],
    [['JSON.GET', 'store', '$x'], fails('ERR Path does not exist')],
    [['JSON.NOSUCH', 'k'], fails("ERR unknown command 'JSON.NOSUCH', with args beginning with: 'k' ")],
    [['JSON.SET', 'bad', '$', '{"arr":[1,2]}'], ok('OK')],
  ],
};

describe('JSON commands over REST (RedisJSON documentation examples)', () => {
  for (const [name, steps] of Object.entries(scenarios)) {
    it(name, async () => {
      for (const [args, expected] of steps) {
        const got = await run(args);
        expect({ args, got }).toEqual({ args, got: expected });
      }
    });
  }
});

describe('JSON arguments that are not UTF-8', () => {
  it('are refused like RedisJSON refuses them (testArrWrongChars)', async () => {
    // The path form carries raw bytes: %80 is the byte 0x80.
    expect((await kv(p, '/JSON.ARRAPPEND/bad/.arr/%80abc')).json).toEqual(fails("Couldn't parse as UTF-8 string"));
    expect((await kv(p, '/JSON.ARRINSERT/bad/.arr/0/%80abc')).json).toEqual(fails("Couldn't parse as UTF-8 string"));
    expect((await kv(p, '/JSON.GET/bad/%24.%80')).json).toEqual(fails("Couldn't parse as UTF-8 string"));
    expect((await kv(p, '/JSON.SET/bad/%24/%22%C3%A9%22')).json).toEqual(ok('OK'));
    expect(await run(['JSON.GET', 'bad'])).toEqual(ok('"é"'));
  });
});

describe('JSON commands run atomically inside redis-server', () => {
  it('50 concurrent clients incrementing one number past 2^53 give the exact total', async () => {
    await run(['JSON.SET', 'counter', '$', '{"n":9007199254740993,"hits":0}']);
    const clients = Array.from({ length: 50 }, async () => {
      for (let i = 0; i < 10; i++) {
        const [a, b] = await Promise.all([run(['JSON.NUMINCRBY', 'counter', '$.n', 1]), run(['JSON.NUMINCRBY', 'counter', '.hits', 1])]);
        expect(a.error ?? b.error).toBeUndefined();
      }
    });
    await Promise.all(clients);
    expect(await run(['JSON.GET', 'counter'])).toEqual(ok('{"n":9007199254741493,"hits":500}'));
  });

  it('inside /multi-exec: queued with the others, a runtime error stays in its place', async () => {
    const res = await kv(p, '/multi-exec', {
      body: JSON.stringify([
        ['JSON.SET', 'tx', '$', '{"a":1,"s":"x"}'],
        ['JSON.NUMINCRBY', 'tx', '$.a', '41'],
        ['JSON.STRAPPEND', 'tx', '.a', '"y"'],
        ['TYPE', 'tx'],
        ['JSON.GET', 'tx'],
      ]),
    });
    expect(res.json).toEqual([
      ok('OK'),
      ok('[42]'),
      fails('ERR Path does not exist or not a string'),
      ok('ReJSON-RL'),
      ok('{"a":42,"s":"x"}'),
    ]);
  });

  it('in /pipeline between other commands, in order', async () => {
    const res = await kv(p, '/pipeline', {
      body: JSON.stringify([
        ['SET', 'pl:s', 'v'],
        ['JSON.SET', 'pl:j', '$', '[1]'],
        ['JSON.ARRAPPEND', 'pl:j', '$', '2'],
        ['GET', 'pl:s'],
        ['JSON.GET', 'pl:j'],
      ]),
    });
    expect(res.json).toEqual([ok('OK'), ok('OK'), ok([2]), ok('v'), ok('[1,2]')]);
  });

  it('a command that fails part-way changes nothing (no half-applied multi-path write)', async () => {
    await run(['JSON.SET', 'half', '$', '{"b":[1,2,3],"a":[1]}']);
    expect(await run(['JSON.GET', 'half', '$.b'])).toEqual(ok('[[1,2,3]]'));
    expect(await run(['JSON.ARRINSERT', 'half', '$.*', '2', '"x"'])).toEqual(fails('ERR index out of bounds'));
    expect(await run(['JSON.GET', 'half', '$.b'])).toEqual(ok('[[1,2,3]]'));
    expect(await run(['JSON.GET', 'half'])).toEqual(ok('{"b":[1,2,3],"a":[1]}'));
  });

  it('sees changes made to the stored text by other commands', async () => {
    await run(['JSON.SET', 'other', '$', '{"a":1}']);
    expect(await run(['JSON.GET', 'other', '$.a'])).toEqual(ok('[1]'));
    const copied = await kv(p, '/pipeline', {
      body: JSON.stringify([
        ['JSON.SET', 'other2', '$', '{"a":2}'],
        ['COPY', 'other2', 'other', 'REPLACE'],
      ]),
    });
    expect(copied.json).toEqual([ok('OK'), ok(1)]);
    expect(await run(['JSON.GET', 'other', '$.a'])).toEqual(ok('[2]'));
    expect(await run(['TYPE', 'other'])).toEqual(ok('ReJSON-RL'));
  });

  it('keeps the key TTL when a document changes, like RedisJSON', async () => {
    await run(['JSON.SET', 'ttl', '$', '{"a":1}']);
    await run(['EXPIRE', 'ttl', '100']);
    await run(['JSON.SET', 'ttl', '$.a', '2']);
    await run(['JSON.SET', 'ttl', '$', '{"b":1}']);
    expect((await run(['TTL', 'ttl'])).result).toBeGreaterThan(90);
  });

  it('the Read Only token reads JSON and may not write it', async () => {
    await run(['JSON.SET', 'ro', '$', '{"a":1}']);
    expect(await run(['JSON.GET', 'ro', '$.a'], p.readonlyToken)).toEqual(ok('[1]'));
    expect(await run(['TYPE', 'ro'], p.readonlyToken)).toEqual(ok('ReJSON-RL'));
    expect(await run(['JSON.SET', 'ro', '$.a', '2'], p.readonlyToken)).toEqual(
      fails("NOPERM this user has no permissions to run the 'json.set' command"),
    );
    expect(await run(['JSON.DEL', 'ro'], p.readonlyToken)).toEqual(
      fails("NOPERM this user has no permissions to run the 'json.del' command"),
    );
    expect(await run(['JSON.GET', 'ro'])).toEqual(ok('{"a":1}'));
  });

  it('survives a FUNCTION FLUSH: the library is loaded again, for single commands and transactions', async () => {
    await run(['JSON.SET', 'ff', '$', '{"a":1}']);
    expect(await run(['FUNCTION', 'FLUSH'])).toEqual(ok('OK'));
    expect(await run(['JSON.GET', 'ff'])).toEqual(ok('{"a":1}'));
    expect(await run(['FUNCTION', 'DELETE', 'respgate_json'])).toEqual(ok('OK'));
    const pipe = await kv(p, '/pipeline', {
      body: JSON.stringify([
        ['JSON.NUMINCRBY', 'ff', '$.a', '1'],
        ['TYPE', 'ff'],
      ]),
    });
    expect(pipe.json).toEqual([ok('[2]'), ok('ReJSON-RL')]);
    await run(['FUNCTION', 'FLUSH']);
    const tx = await kv(p, '/multi-exec', {
      body: JSON.stringify([
        ['JSON.NUMINCRBY', 'ff', '$.a', '1'],
        ['JSON.GET', 'ff'],
      ]),
    });
    expect(tx.json).toEqual([ok('[3]'), ok('{"a":3}')]);
    // Flushed earlier in the same pipeline: the JSON command still answers (sent again after the reload).
    const same = await kv(p, '/pipeline', { body: JSON.stringify([['FUNCTION', 'FLUSH'], ['JSON.GET', 'ff', '$.a'], ['PING']]) });
    expect(same.json).toEqual([ok('OK'), ok('[3]'), ok('PONG')]);
    // Flushed inside a transaction: the next transaction with JSON finds the library again.
    expect((await kv(p, '/multi-exec', { body: JSON.stringify([['FUNCTION', 'FLUSH']]) })).json).toEqual([ok('OK')]);
    const after = await kv(p, '/multi-exec', { body: JSON.stringify([['JSON.GET', 'ff', '$.a']]) });
    expect(after.json).toEqual([ok('[3]')]);
  });
});

describe('JSON documents among other keys', () => {
  it('SCAN … TYPE ReJSON-RL lists documents, SCAN … TYPE string no longer does', async () => {
    await run(['JSON.SET', 'scan:j1', '$', '{}']);
    await run(['JSON.SET', 'scan:j2', '$', '[]']);
    await run(['SET', 'scan:s1', 'x']);
    await run(['HSET', 'scan:h1', 'f', 'v']);
    const all = async (type: string) => {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const r = await run(['SCAN', cursor, 'MATCH', 'scan:*', 'COUNT', '5', 'TYPE', type]);
        const [next, page] = r.result as [string, string[]];
        keys.push(...page);
        cursor = next;
      } while (cursor !== '0');
      return keys.sort();
    };
    expect(await all('ReJSON-RL')).toEqual(['scan:j1', 'scan:j2']);
    expect(await all('rejson-rl')).toEqual(['scan:j1', 'scan:j2']);
    expect(await all('string')).toEqual(['scan:s1']);
    expect(await all('hash')).toEqual(['scan:h1']);
  });

  it('FUNCTION LIST shows the user libraries, not the platform one', async () => {
    await run(['JSON.GET', 'scan:j1']);
    await run(['FUNCTION', 'LOAD', "#!lua name=mine\nredis.register_function('hello', function() return 'hi' end)"]);
    const list = (await run(['FUNCTION', 'LIST'])).result as unknown[][];
    expect(list.map((lib) => lib[1])).toEqual(['mine']);
    expect(await run(['FCALL', 'hello', '0'])).toEqual(ok('hi'));
    expect(await run(['JSON.GET', 'scan:j1'])).toEqual(ok('{}'));
    await run(['FUNCTION', 'DELETE', 'mine']);
  });
});
