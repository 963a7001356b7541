// Encodes commands as RESP multibulk requests (the client side of the protocol).

export type Arg = string | Buffer;

/** Encodes a list of commands into one buffer, ready to be written to a Redis connection. */
export function encodeCommands(commands: readonly (readonly Arg[])[]): Buffer {
  return allStrings(commands) ? encodeStrings(commands) : encodeMixed(commands);
}

function allStrings(commands: readonly (readonly Arg[])[]): boolean {
  for (const cmd of commands) for (const arg of cmd) if (typeof arg !== 'string') return false;
  return true;
}

/**
 * Text arguments (the platform's JSON requests): one string for the whole batch, encoded to UTF-8 in
 * one call. Measured 2.5–3.5× faster than a Buffer write per argument (bench in bench/README.md).
 */
function encodeStrings(commands: readonly (readonly Arg[])[]): Buffer {
  let s = '';
  for (const cmd of commands) {
    s += `*${cmd.length}\r\n`;
    for (const arg of cmd) s += `$${Buffer.byteLength(arg as string)}\r\n${arg as string}\r\n`;
  }
  return Buffer.from(s, 'utf8');
}

function encodeMixed(commands: readonly (readonly Arg[])[]): Buffer {
  let size = 0;
  for (const cmd of commands) {
    size += 3 + digits(cmd.length);
    for (const arg of cmd) {
      const len = typeof arg === 'string' ? Buffer.byteLength(arg) : arg.length;
      size += 5 + digits(len) + len;
    }
  }
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const cmd of commands) {
    pos += out.write(`*${cmd.length}\r\n`, pos, 'latin1');
    for (const arg of cmd) {
      if (typeof arg === 'string') {
        const len = Buffer.byteLength(arg);
        pos += out.write(`$${len}\r\n`, pos, 'latin1');
        pos += out.write(arg, pos, 'utf8');
      } else {
        pos += out.write(`$${arg.length}\r\n`, pos, 'latin1');
        pos += arg.copy(out, pos);
      }
      out[pos++] = 13;
      out[pos++] = 10;
    }
  }
  return out;
}

function digits(n: number): number {
  return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : String(n).length;
}
