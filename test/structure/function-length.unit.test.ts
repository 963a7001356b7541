// No function in src/ over 150 lines, measured with the TypeScript compiler's parser (DESIGN.md's rule).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { functionLengths, longFunctions } from './function-length.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAX = 150;

describe('function length', () => {
  it(`finds no function, method or arrow in src/ over ${MAX} lines`, () => {
    expect(longFunctions(root, MAX)).toEqual([]);
  });

  it('measures declarations, methods, arrows and function expressions from their first line to the end of the body', () => {
    const src = [
      'function a() {', // 1
      '  return 1;',
      '}',
      'class K {',
      '  m(x: number) {', // 5
      '    const f = (y: number) =>',
      '      y + 1;',
      '    return f(x);',
      '  }',
      '}', // 10
      'export const g = function () {',
      '  // a comment holding } and `function h() {` is no code',
      '};',
      'const o = { p: async () => { await 0; } };',
    ].join('\n');
    expect(functionLengths(src).map((f) => `${f.name}:${f.line}+${f.lines}`)).toEqual(['a:1+3', 'm:5+5', 'f:6+2', 'g:11+3', 'p:14+1']);
  });

  it('counts the lines of an overlong function past the limit', () => {
    const long = `export function big() {\n${'  x++;\n'.repeat(MAX)}}\n`;
    expect(functionLengths(long)).toEqual([{ name: 'big', line: 1, lines: MAX + 2 }]);
  });
});
