// The two request encodings of the Area B client: hand-written JSON bodies and the path form.
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { percentDecode } from '../../src/platform/kv/percent-decode.js';
import { parseKvRequest } from '../../src/platform/kv/request.js';
import { pathForm, percentEncode } from '../../src/upstream/path-form.js';
import { measureCommand, plainBody, writeCommands, type Escapes } from '../../src/upstream/pipeline-body.js';

function body(commands: Buffer[][]): { text: Buffer; sizes: number[] } {
  const sizes = new Array<number>(commands.length);
  const escapes: { map: Escapes } = { map: undefined };
  for (let i = 0; i < commands.length; i++) sizes[i] = measureCommand(commands[i], escapes);
  return { text: writeCommands(commands, sizes, escapes.map, 0, commands.length), sizes };
}

describe('JSON pipeline body', () => {
  it('is byte-identical to JSON.stringify for any UTF-8 arguments, with exact sizes', () => {
    const arg = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', 'a', 'é', '\u2028', '𝄞') }),
      // Long arguments are scanned four bytes at a time (resp/json-text-scan.ts): a rare special one anywhere.
      fc.string({ unit: fc.constantFrom('a', 'b', ' ', '~', 'a', 'b', 'é', '"', '\n'), minLength: 60, maxLength: 300 }),
    );
    fc.assert(
      fc.property(fc.array(fc.array(arg, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 }), (rows) => {
        const commands = rows.map((r) => r.map((s) => Buffer.from(s)));
        const { text, sizes } = body(commands);
        expect(text.toString()).toBe(JSON.stringify(rows.map((r) => r.map((s) => Buffer.from(s).toString()))));
        const perCommand = sizes.reduce((a, n) => a + n, 0) + 2 + commands.length - 1;
        expect(text.length).toBe(perCommand);
      }),
      { numRuns: 300 },
    );
  });

  it('writes a sub-range, and measures what JSON cannot carry as -1', () => {
    const commands = [[Buffer.from('A')], [Buffer.from('B'), Buffer.from('x"y')], [Buffer.from('C')]];
    const sizes = commands.map((c) => measureCommand(c, { map: undefined }));
    const escapes: { map: Escapes } = { map: undefined };
    commands.forEach((c) => measureCommand(c, escapes));
    expect(writeCommands(commands, sizes, escapes.map, 1, 3).toString()).toBe('[["B","x\\"y"],["C"]]');
    expect(measureCommand([Buffer.from('GET'), Buffer.from([0xff])], { map: undefined })).toBe(-1);
    expect(measureCommand([], { map: undefined })).toBe(-1);
  });

  it('writes plain commands in one pass exactly as measure and write do, and declines what needs the general path', () => {
    const arg = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '~', 'é', '\u2028', '𝄞', '"', '\\', '\n', '\u0000', '\u007f') }),
      fc.string({ unit: fc.constantFrom('a', 'b', ' ', 'é', '"', '\n'), minLength: 60, maxLength: 300 }),
      fc.uint8Array({ maxLength: 80 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    );
    fc.assert(
      fc.property(fc.array(fc.array(arg, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 }), (rows) => {
        const commands = rows.map((r) => r.map((s) => Buffer.from(s)));
        const plain = plainBody(commands, 1 << 20, 1 << 20);
        const special = (a: Buffer) => a.some((c) => c < 0x20 || c === 0x22 || c === 0x5c);
        const needsGeneral = commands.some((c) => c.some((a) => !isUtf8(a) || special(a)));
        if (needsGeneral) expect(plain).toBeUndefined();
        else expect(plain?.toString()).toBe(body(commands).text.toString());
      }),
      { numRuns: 500 },
    );
    const commands = [
      [Buffer.from('SET'), Buffer.from('k'), Buffer.from('v')],
      [Buffer.from('GET'), Buffer.from('k')],
    ];
    expect(plainBody(commands, 1000, 1000)?.toString()).toBe('[["SET","k","v"],["GET","k"]]');
    // Exactly at the limit, then one byte over it.
    expect(plainBody(commands, 29, 1000)?.length).toBe(29);
    expect(plainBody(commands, 28, 1000)).toBeUndefined();
    // An argument of the large size goes the general way (maybe the path form).
    expect(plainBody(commands, 1000, 2)).toBeUndefined();
    expect(plainBody([[Buffer.from('GET'), Buffer.from([0xff])]], 1000, 1000)).toBeUndefined();
    expect(plainBody([[]], 1000, 1000)).toBeUndefined();
    expect(plainBody([], 1000, 1000)).toBeUndefined();
  });

  it('writes bodies one after another into shared slabs: every body stays intact, declined ones leave no trace', () => {
    // Arguments of any bytes (a random one may need the general path), batches up to ~150 KiB (past a slab).
    const arg = fc.oneof(
      fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ unit: fc.constantFrom('a', 'b', 'é', ':'), maxLength: 20 }).map((s) => Buffer.from(s)),
      fc.integer({ min: 60, max: 60_000 }).map((n) => Buffer.alloc(n, 0x78)),
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.array(arg, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }), { maxLength: 12 }),
        (batches) => {
          const kept: Array<[Buffer, string]> = [];
          for (const commands of batches) {
            const plain = plainBody(commands, 1 << 20, 1 << 20);
            const needsGeneral = commands.some((c) => c.some((a) => !isUtf8(a) || a.some((x) => x < 0x20 || x === 0x22 || x === 0x5c)));
            if (needsGeneral) {
              expect(plain).toBeUndefined();
              continue;
            }
            const want = JSON.stringify(commands.map((c) => c.map((a) => a.toString())));
            expect(plain!.toString()).toBe(want);
            kept.push([plain!, want]);
          }
          // Later bodies (and declined attempts) did not write over earlier ones.
          for (const [plain, want] of kept) expect(plain.toString()).toBe(want);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('does not keep a slab grown for one large body: the next body goes into a slab of the usual size', () => {
    const large = plainBody([[Buffer.from('SET'), Buffer.from('k'), Buffer.alloc(200_000, 0x78)]], 1 << 20, 1 << 20)!;
    expect(large.buffer.byteLength).toBeGreaterThan(200_000);
    const small = plainBody([[Buffer.from('GET'), Buffer.from('k')]], 1 << 20, 1 << 20)!;
    expect(small.toString()).toBe('[["GET","k"]]');
    expect(small.buffer).not.toBe(large.buffer);
    expect(small.buffer.byteLength).toBeLessThanOrEqual(64 * 1024);
    expect(large.toString()).toBe(JSON.stringify([['SET', 'k', 'x'.repeat(200_000)]]));
  });
});

describe('path form', () => {
  it('percent-encodes any bytes so that the platform decodes them back', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const buf = Buffer.from(bytes);
        const segment = percentEncode(buf);
        expect(segment).toMatch(/^[A-Za-z0-9\-._~!'()*%]*$/);
        expect(percentDecode(segment)).toEqual(buf);
      }),
      { numRuns: 500 },
    );
  });

  it('is read by the platform as the same command', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 12 }), { minLength: 1, maxLength: 5 }), (raw) => {
        const command = raw.map((a) => Buffer.from(a));
        command[0] = Buffer.concat([Buffer.from('x'), command[0]]); // a command name is never empty
        const { path, body } = pathForm(command);
        const parsed = parseKvRequest(path, '', body ?? Buffer.alloc(0));
        expect(parsed.kind).toBe('command');
        if (parsed.kind === 'command') expect(parsed.command.map((a) => Buffer.from(a))).toEqual(command);
      }),
      { numRuns: 500 },
    );
  });

  it('puts the last argument in the body unless it is the only one or empty', () => {
    expect(pathForm([Buffer.from('SET'), Buffer.from([0xff]), Buffer.from('v')])).toEqual({ path: '/SET/%FF', body: Buffer.from('v') });
    expect(pathForm([Buffer.from('SET'), Buffer.from([0xff]), Buffer.alloc(0)])).toEqual({ path: '/SET/%FF/', body: null });
    expect(pathForm([Buffer.from([0xff])])).toEqual({ path: '/%FF', body: null });
    expect(pathForm([Buffer.from('GET'), Buffer.from('a/b c')])).toEqual({ path: '/GET', body: Buffer.from('a/b c') });
    expect(isUtf8(Buffer.from(percentEncode(Buffer.from([0x80, 0x2f]))))).toBe(true);
  });
});
