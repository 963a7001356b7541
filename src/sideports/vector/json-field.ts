// Reading one top-level field of an element's attributes for FILTER, the way Redis 8 does (vector
// sets' fastjson.c): the text is scanned, not parsed whole, so only the path to the field has to be
// well formed; the first occurrence of a key wins; strings, numbers, true/false (1/0), null and arrays
// of those become values; a nested object, a malformed value or a missing key give undefined (and the
// expression is then false). Text is latin1 (one char per byte).
import { strtodWhole } from './c-number.js';
import { num, type FilterValue } from './filter-values.js';

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';
const isNumberChar = (c: string | undefined): boolean => c !== undefined && /[0-9+\-.eE]/.test(c);

class Scanner {
  p = 0;
  constructor(readonly s: string) {}

  ch(): string | undefined {
    return this.s[this.p];
  }

  spaces(): void {
    while (isSpace(this.ch())) this.p++;
  }

  /** Past a string starting at p (a backslash skips the next char); false when unterminated. */
  skipString(): boolean {
    if (this.ch() !== '"') return false;
    this.p++;
    while (this.p < this.s.length) {
      if (this.ch() === '\\') this.p += 2;
      else if (this.ch() === '"') {
        this.p++;
        return true;
      } else this.p++;
    }
    return false;
  }

  /** Past a bracketed value, counting only its own kind of bracket outside strings. */
  skipBracketed(open: string, close: string): boolean {
    let depth = 1;
    this.p++;
    while (this.p < this.s.length && depth > 0) {
      const c = this.ch();
      if (c === '"') {
        if (!this.skipString()) return false;
        continue;
      }
      if (c === open) depth++;
      else if (c === close) depth--;
      this.p++;
    }
    return depth === 0;
  }

  skipValue(): boolean {
    this.spaces();
    const c = this.ch();
    if (c === undefined) return false;
    if (c === '"') return this.skipString();
    if (c === '{') return this.skipBracketed('{', '}');
    if (c === '[') return this.skipBracketed('[', ']');
    for (const lit of ['true', 'false', 'null']) {
      if (c === lit[0]) {
        if (!this.s.startsWith(lit, this.p)) return false;
        this.p += lit.length;
        return true;
      }
    }
    const start = this.p;
    while (isNumberChar(this.ch())) this.p++;
    return this.p > start;
  }

  /** Positions p at the value of the first top-level key equal to `field`; false when there is none. */
  seek(field: string): boolean {
    this.spaces();
    if (this.ch() !== '{') return false;
    this.p++;
    for (;;) {
      this.spaces();
      if (this.ch() !== '"') return false; // end, '}' or a key that is not a string
      const keyStart = this.p + 1;
      if (!this.skipString()) return false;
      const match = this.s.slice(keyStart, this.p - 1) === field;
      this.spaces();
      if (this.ch() !== ':') return false;
      this.p++;
      this.spaces();
      if (this.p >= this.s.length) return false;
      if (match) return true;
      if (!this.skipValue()) return false;
      this.spaces();
      if (this.ch() !== ',') return false;
      this.p++;
    }
  }

  value(): FilterValue | undefined {
    this.spaces();
    const c = this.ch();
    if (c === '"') return this.string();
    if (c === '[') return this.array();
    if (c === 't') return this.literal('true', num(1));
    if (c === 'f') return this.literal('false', num(0));
    if (c === 'n') return this.literal('null', { t: 'null' });
    if (c !== undefined && /[0-9+-]/.test(c)) return this.number();
    return undefined; // an object, or not JSON
  }

  private string(): FilterValue | undefined {
    let out = '';
    let q = this.p + 1;
    const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\\': '\\', '"': '"' };
    for (; q < this.s.length && this.s[q] !== '"'; q++) {
      if (this.s[q] === '\\') {
        q++;
        if (q >= this.s.length) return undefined;
        out += ESCAPES[this.s[q]] ?? this.s[q]; // other escapes (\u…, \/) keep the char after the backslash
      } else out += this.s[q];
    }
    if (q >= this.s.length) return undefined;
    this.p = q + 1;
    return { t: 'str', v: out };
  }

  private literal(word: string, v: FilterValue): FilterValue | undefined {
    if (!this.s.startsWith(word, this.p)) return undefined;
    const after = this.s[this.p + word.length];
    if (after !== undefined && !isSpace(after) && after !== ',' && after !== ']' && after !== '}') return undefined;
    this.p += word.length;
    return v;
  }

  private number(): FilterValue | undefined {
    const start = this.p;
    while (this.p - start < 255 && isNumberChar(this.ch())) this.p++;
    const v = strtodWhole(this.s.slice(start, this.p));
    return v === undefined ? undefined : num(v);
  }

  private array(): FilterValue | undefined {
    this.p++;
    this.spaces();
    const items: FilterValue[] = [];
    if (this.ch() === ']') {
      this.p++;
      return { t: 'tuple', v: items };
    }
    for (;;) {
      const item = this.value();
      if (!item) return undefined;
      items.push(item);
      this.spaces();
      if (this.ch() === ',') {
        this.p++;
        this.spaces();
      } else if (this.ch() === ']') {
        this.p++;
        return { t: 'tuple', v: items };
      } else return undefined;
    }
  }
}

/** The value of top-level field `field` of the attribute text, or undefined (missing or unreadable). */
export function jsonField(json: string, field: string): FilterValue | undefined {
  const s = new Scanner(json);
  return s.seek(field) ? s.value() : undefined;
}
