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

/** plainBody writes its bodies one after another into a slab of this size; a larger body gets a larger slab. */
const SLAB_BYTES = 64 * 1024;
/**
 * The slab and where its free part begins. A body is a view of its part, which is never written again:
 * the slab lives as long as any body in it (a request in flight). Process-wide, like a pool.
 */
let slab: Buffer = Buffer.alloc(0);
let slabAt = 0;

/**
 * All `commands` as one JSON body in a single pass over their bytes, when every argument can stand in
 * a JSON string as it is (valid UTF-8 without `"`, `\` or control characters: the usual case) and the
 * body's size stays within `maxBytes` and no argument is `largeArgument` bytes or more (a large value
 * may go in the path form instead); undefined otherwise (then measureCommand and writeCommands,
 * which escape, split and isolate, do the work). Each byte is read once, checked and written in the
 * same loop: measureCommand's scan and writeCommands' copy read every argument twice (bench/README.md,
 * issue 25, hop branch). The body is written into a slab as it goes, each command's room known from
 * its arguments' lengths just before it is written: no pass over the whole batch first, no allocation
 * per body (issue 25, p16 branch).
 */
export function plainBody(commands: readonly (readonly Buffer[])[], maxBytes: number, largeArgument: number): Buffer | undefined {
  const n = commands.length;
  if (n === 0) return undefined;
  let out = slab;
  let start = slabAt;
  let pos = start;
  for (let i = 0; i < n; i++) {
    const command = commands[i];
    const argc = command.length;
    if (argc === 0) return undefined;
    // `[` or `,`, then `[`, the arguments in quotes with commas between them, `]`, and room for the body's `]`.
    let need = 3 + argc;
    for (let j = 0; j < argc; j++) {
      const len = command[j].length;
      if (len >= largeArgument) return undefined;
      need += len + 2;
    }
    if (pos - start + need > maxBytes) return undefined;
    if (pos + need > out.length) {
      // The body so far moves to a new slab with room for it and more.
      const next = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, 2 * (pos - start + need)));
      out.copy(next, 0, start, pos);
      pos -= start;
      start = 0;
      out = slab = next;
      slabAt = 0;
    }
    out[pos++] = i === 0 ? 0x5b : 0x2c; // the body's [, or a comma between commands
    out[pos++] = 0x5b;
    for (let j = 0; j < argc; j++) {
      if (j > 0) out[pos++] = 0x2c;
      const arg = command[j];
      const len = arg.length;
      out[pos++] = 0x22; // "
      if (len < BYTEWISE_BELOW) {
        // Checked and copied in one loop: a byte below 0x20, `"` or `\` needs an escape; above 0x7f, a UTF-8 check.
        let special = 0;
        for (let k = 0; k < len; k++) {
          const c = arg[k];
          out[pos++] = c;
          if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7f) special = 1;
        }
        if (special !== 0 && scanArgument(arg) !== ArgKind.Plain) return undefined;
      } else {
        if (scanArgument(arg) !== ArgKind.Plain) return undefined;
        pos += arg.copy(out, pos);
      }
      out[pos++] = 0x22;
    }
    out[pos++] = 0x5d; // ]
  }
  out[pos++] = 0x5d;
  slabAt = pos;
  // A slab grown for one large body is not kept: the next body starts a slab of the usual size (a sidecar's
  // memory stays flat after a burst of large batches; the large body keeps its own alive while in flight).
  if (out.length > SLAB_BYTES) {
    slab = Buffer.alloc(0);
    slabAt = 0;
  }
  return out.subarray(start, pos);
}
