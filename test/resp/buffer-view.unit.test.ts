import { describe, expect, it } from 'vitest';
import { viewOf } from '../../src/resp/buffer-view.js';

describe('viewOf', () => {
  const base = Buffer.from('*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n');
  const view = (start: number, end: number) => viewOf(base.buffer, base.byteOffset, start, end);

  it('is a Buffer over the same bytes as subarray, sharing memory', () => {
    const v = view(8, 11);
    expect(Buffer.isBuffer(v)).toBe(true);
    expect(v).toBeInstanceOf(Buffer);
    expect(v.constructor).toBe(Buffer);
    expect(v.equals(base.subarray(8, 11))).toBe(true);
    expect(v.toString('latin1')).toBe('GET');
    expect(v).toEqual(Buffer.from('GET'));
    base[8] = 0x67; // g: the view sees the change, as a subarray would
    expect(v.toString()).toBe('gET');
    base[8] = 0x47;
  });

  it('works with every Buffer operation the proxy uses on arguments and replies', () => {
    const v = view(17, 20);
    expect(Buffer.concat([v, Buffer.from('!')]).toString()).toBe('key!');
    const sub = v.subarray(1);
    expect(Buffer.isBuffer(sub)).toBe(true);
    expect(sub.toString()).toBe('ey');
    expect(v.indexOf(0x79)).toBe(2);
    expect(v.readUInt8(0)).toBe(0x6b);
    expect(JSON.stringify(v)).toBe(JSON.stringify(Buffer.from('key')));
    expect(Buffer.compare(v, Buffer.from('key'))).toBe(0);
  });
});
