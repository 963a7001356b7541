// JSON request bodies for /pipeline and /multi-exec (`[["SET","k","v"],…]`), written straight from
// the argument bytes. An argument that is valid UTF-8 and holds no `"`, `\` or control character
// is already its own JSON string content, so it is copied as it is; the rare argument that needs
// escapes goes through JSON.stringify. Measured against JSON.stringify of `buf.toString()` per
// argument (bench/upstream-pipeline.bench.ts): 2-4x faster for small commands, equal for 1 KB values.
import { isUtf8 } from 'node:buffer';
import { HIGH_BYTES, jsonTextFlags, NEEDS_ESCAPE } from '../resp/json-text-scan.js';

/** Escaped JSON text of the arguments that need it, by argument identity (created when first needed). */
export type Escapes = Map<Buffer, Buffer> | undefined;

/**
 * Size in bytes of the command as a JSON array, or -1 when JSON cannot carry it (an argument that is
 * not valid UTF-8, or no argument at all). Records escaped arguments in `escapes`, returning the map.
 */
export function measureCommand(command: readonly Buffer[], escapes: { map: Escapes }): number {
  const n = command.length;
  if (n === 0) return -1;
  let size = 2 + n - 1; // [ ] and commas
  for (let j = 0; j < n; j++) {
    const arg = command[j];
    const kind = scanArgument(arg);
    if (kind === ArgKind.NotUtf8) return -1;
    if (kind === ArgKind.NeedsEscape) {
      const escaped = Buffer.from(JSON.stringify(arg.toString('utf8')));
      (escapes.map ??= new Map()).set(arg, escaped);
      size += escaped.length;
    } else {
      size += arg.length + 2;
    }
  }
  return size;
}

const enum ArgKind {
  /** Valid UTF-8 with nothing to escape: copied into the JSON string as it is. */
  Plain,
  NeedsEscape,
  NotUtf8,
}

/**
 * One pass per argument (resp/json-text-scan.ts: a byte loop for short ones, four bytes at a time for
 * long ones): JSON escapes needed (`"`, `\`, or a control character below 0x20), and whether a byte
 * above 0x7f makes a native UTF-8 check necessary. Most arguments are ASCII, and a call of `isUtf8`
 * per argument was a few percent of the proxy's CPU per command at -P 16 (bench/cpu-per-command.ts
 * profile, issue 14).
 */
function scanArgument(bytes: Buffer): ArgKind {
  const flags = jsonTextFlags(bytes, 0, bytes.length);
  // The scan stops at the first escape without looking for high bytes: the native check tells.
  if (flags & NEEDS_ESCAPE) return isUtf8(bytes) ? ArgKind.NeedsEscape : ArgKind.NotUtf8;
  if (flags & HIGH_BYTES && !isUtf8(bytes)) return ArgKind.NotUtf8;
  return ArgKind.Plain;
}

/** Writes commands [from, to) as one JSON array of arrays; `sizes` come from measureCommand. */
export function writeCommands(
  commands: readonly (readonly Buffer[])[],
  sizes: readonly number[],
  escapes: Escapes,
  from: number,
  to: number,
): Buffer {
  let total = 2 + to - from - 1;
  for (let i = from; i < to; i++) total += sizes[i];
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  out[pos++] = 0x5b; // [
  for (let i = from; i < to; i++) {
    if (i > from) out[pos++] = 0x2c; // ,
    out[pos++] = 0x5b;
    const command = commands[i];
    for (let j = 0; j < command.length; j++) {
      if (j > 0) out[pos++] = 0x2c;
      const arg = command[j];
      const escaped = escapes?.get(arg);
      if (escaped !== undefined) {
        pos += escaped.copy(out, pos);
      } else {
        out[pos++] = 0x22; // "
        if (arg.length < 32) {
          for (let k = 0; k < arg.length; k++) out[pos++] = arg[k];
        } else {
          pos += arg.copy(out, pos);
        }
        out[pos++] = 0x22;
      }
    }
    out[pos++] = 0x5d; // ]
  }
  out[pos] = 0x5d;
  return out;
}

/** Arguments from this size on are checked by the word-wise scan and copied by memcpy; shorter ones byte by byte. */
const BYTEWISE_BELOW = 64;

/**
 * All `commands` as one JSON body in a single pass over their bytes, when every argument can stand in
 * a JSON string as it is (valid UTF-8 without `"`, `\` or control characters: the usual case) and the
 * body's size stays within `maxBytes` and no argument is `largeArgument` bytes or more (a large value
 * may go in the path form instead); undefined otherwise (then measureCommand and writeCommands,
 * which escape, split and isolate, do the work). The body's size is known from the arguments' lengths
 * alone, so each byte is read once, checked and written in the same loop: measureCommand's scan and
 * writeCommands' copy read every argument twice (bench/README.md, issue 25, hop branch).
 */
export function plainBody(commands: readonly (readonly Buffer[])[], maxBytes: number, largeArgument: number): Buffer | undefined {
  const n = commands.length;
  if (n === 0) return undefined;
  let total = 1 + n; // [ ] and n - 1 commas between commands
  for (let i = 0; i < n; i++) {
    const command = commands[i];
    const argc = command.length;
    if (argc === 0) return undefined;
    total += 1 + argc; // [ ] and argc - 1 commas between arguments
    for (let j = 0; j < argc; j++) {
      const len = command[j].length;
      if (len >= largeArgument) return undefined;
      total += len + 2;
    }
    if (total > maxBytes) return undefined;
  }
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  out[pos++] = 0x5b; // [
  for (let i = 0; i < n; i++) {
    if (i > 0) out[pos++] = 0x2c; // ,
    pos = writePlain(commands[i], out, pos);
    if (pos < 0) return undefined;
  }
  out[pos] = 0x5d;
  return out;
}

/**
 * A command's JSON element (`["GET","k"]`) written when the command was read, while its bytes are still in
 * the CPU's cache: `json[jsonStart, jsonEnd)` of a shared slab, or `json` undefined when it was not (an
 * argument that needs an escape or is not UTF-8, a large command). The slab byte at `jsonEnd` is a comma, so
 * the elements of commands read one after another form one run that the body copies at once.
 */
export interface JsonElement {
  json?: Buffer | undefined;
  jsonStart?: number;
  jsonEnd?: number;
}

/** Elements are written into slabs of this size, in order; a full slab is left to the items that point into it. */
const SLAB_BYTES = 64 * 1024;
/** Commands whose element would be larger are not written early (the body writes them from their arguments). */
const EARLY_MAX_BYTES = 1024;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabPos = 0;

/**
 * Writes `command`'s JSON element and a comma into the current slab and points `element` at it; leaves
 * `element.json` undefined when the command is not plain (then the body is written from the arguments).
 * The same checks as plainBody, so a body made of these elements is byte-identical to plainBody's.
 */
export function encodeElement(command: readonly Buffer[], element: JsonElement): void {
  const argc = command.length;
  if (argc === 0) return;
  let size = 2 + argc; // [ ] , and argc - 1 commas
  for (let j = 0; j < argc; j++) size += command[j].length + 2;
  if (size > EARLY_MAX_BYTES) return;
  if (slabPos + size > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabPos = 0;
  }
  const out = slab;
  const start = slabPos;
  const end = writePlain(command, out, start);
  if (end < 0) return;
  element.json = out;
  element.jsonStart = start;
  element.jsonEnd = end;
  out[end] = 0x2c; // the comma after it, for runs
  slabPos = end + 1;
}

/**
 * plainBody for commands of which some carry their element written early (`elements[i]`, encodeElement):
 * those are copied in runs, the others written from their arguments. Byte-identical to plainBody, and
 * undefined in the same cases.
 */
export function plainBodyOf(
  commands: readonly (readonly Buffer[])[],
  elements: readonly JsonElement[],
  maxBytes: number,
  largeArgument: number,
): Buffer | undefined {
  const n = commands.length;
  if (n === 0) return undefined;
  let total = 1 + n;
  let early = 0;
  for (let i = 0; i < n; i++) {
    const element = elements[i];
    if (element.json !== undefined) {
      total += element.jsonEnd! - element.jsonStart!;
      early++;
      continue;
    }
    const command = commands[i];
    const argc = command.length;
    if (argc === 0) return undefined;
    total += 1 + argc;
    for (let j = 0; j < argc; j++) {
      const len = command[j].length;
      if (len >= largeArgument) return undefined;
      total += len + 2;
    }
  }
  if (total > maxBytes) return undefined;
  if (early === 0) return plainBody(commands, maxBytes, largeArgument);
  const out = Buffer.allocUnsafe(total);
  out[0] = 0x5b; // [
  let pos = 1;
  let i = 0;
  while (i < n) {
    if (i > 0) out[pos++] = 0x2c;
    const element = elements[i];
    const json = element.json;
    if (json === undefined) {
      const written = writePlain(commands[i], out, pos);
      if (written < 0) return undefined;
      pos = written;
      i++;
      continue;
    }
    // A run: the following elements that sit right after this one in the same slab (comma between).
    const start = element.jsonStart!;
    let end = element.jsonEnd!;
    i++;
    while (i < n) {
      const next = elements[i];
      if (next.json !== json || next.jsonStart !== end + 1) break;
      end = next.jsonEnd!;
      i++;
    }
    const len = end - start;
    if (len < BYTEWISE_BELOW) {
      for (let k = start; k < end; k++) out[pos++] = json[k];
    } else {
      pos += json.copy(out, pos, start, end);
    }
  }
  out[pos] = 0x5d;
  return out;
}

/** One command's element at `pos` of `out`, from its arguments; the position after it, or -1 when not plain. */
function writePlain(command: readonly Buffer[], out: Buffer, pos: number): number {
  out[pos++] = 0x5b;
  for (let j = 0; j < command.length; j++) {
    if (j > 0) out[pos++] = 0x2c;
    const arg = command[j];
    const len = arg.length;
    out[pos++] = 0x22;
    if (len < BYTEWISE_BELOW) {
      let special = 0;
      for (let k = 0; k < len; k++) {
        const c = arg[k];
        out[pos++] = c;
        if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7f) special = 1;
      }
      if (special !== 0 && scanArgument(arg) !== ArgKind.Plain) return -1;
    } else {
      if (scanArgument(arg) !== ArgKind.Plain) return -1;
      pos += arg.copy(out, pos);
    }
    out[pos++] = 0x22;
  }
  out[pos++] = 0x5d;
  return pos;
}
