// Comparison modes of the differential suite. Most replies are compared byte for byte; a reply whose
// value is legitimately nondeterministic (client ids, idle times, hash-table iteration order, TIME)
// is compared through a normalizer that keeps everything that is deterministic about it (types,
// array lengths, error texts, the members of an unordered collection, the field names of a text).
import { expect } from 'vitest';

/** A decoded RESP2 reply, enough to normalize and re-render it. */
export type Resp = { t: '+' | '-'; s: string } | { t: ':'; n: string } | { t: '$'; b: Buffer | null } | { t: '*'; items: Resp[] | null };

/** Parses one complete RESP2 reply (the runner only hands complete replies to it). */
export function parseReply(buf: Buffer): Resp {
  const [value, end] = parseAt(buf, 0);
  if (end !== buf.length) throw new Error(`trailing bytes after a reply: ${printable(buf)}`);
  return value;
}

function parseAt(buf: Buffer, pos: number): [Resp, number] {
  const eol = buf.indexOf('\r\n', pos, 'latin1');
  if (eol < 0) throw new Error(`incomplete reply: ${printable(buf)}`);
  const line = buf.toString('latin1', pos + 1, eol);
  const type = String.fromCharCode(buf[pos]);
  switch (type) {
    case '+':
    case '-':
      return [{ t: type, s: line }, eol + 2];
    case ':':
      return [{ t: ':', n: line }, eol + 2];
    case '$': {
      const len = Number(line);
      if (len < 0) return [{ t: '$', b: null }, eol + 2];
      return [{ t: '$', b: buf.subarray(eol + 2, eol + 2 + len) }, eol + 2 + len + 2];
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return [{ t: '*', items: null }, eol + 2];
      const items: Resp[] = [];
      let p = eol + 2;
      for (let i = 0; i < n; i++) {
        const [item, next] = parseAt(buf, p);
        items.push(item);
        p = next;
      }
      return [{ t: '*', items }, p];
    }
    default:
      throw new Error(`not a RESP2 reply: ${printable(buf)}`);
  }
}

/** Renders a reply back to (latin1) RESP2 text, so normalized replies compare as strings. */
export function render(r: Resp): string {
  switch (r.t) {
    case '+':
    case '-':
      return `${r.t}${r.s}\r\n`;
    case ':':
      return `:${r.n}\r\n`;
    case '$':
      return r.b === null ? '$-1\r\n' : `$${r.b.length}\r\n${r.b.toString('latin1')}\r\n`;
    case '*':
      return r.items === null ? '*-1\r\n' : `*${r.items.length}\r\n${r.items.map(render).join('')}`;
  }
}

/** Bytes as a readable JSON string (latin1, so every byte shows), cut after `max` characters. */
export function printable(buf: Buffer | string, max = 1500): string {
  const s = JSON.stringify(typeof buf === 'string' ? buf : buf.toString('latin1'));
  return s.length > max ? `${s.slice(0, max)}…(${s.length} chars)` : s;
}

function mapTree(r: Resp, f: (leaf: Resp) => Resp): Resp {
  if (r.t === '*' && r.items) return { t: '*', items: r.items.map((i) => mapTree(i, f)) };
  return f(r);
}

const sortItems = (items: Resp[]): Resp[] => [...items].sort((a, b) => (render(a) < render(b) ? -1 : render(a) > render(b) ? 1 : 0));

/** Errors pass through every normalizer unchanged: an error where a value was expected is a difference. */
function unlessError(f: (r: Resp) => Resp): (r: Resp) => Resp {
  return (r) => (r.t === '-' ? r : f(r));
}

/** The comparison modes a step can ask for (by name, so failure messages can say which one was used). */
export const normalizers: Record<string, (r: Resp) => Resp> = {
  /** Byte-identical. */
  exact: (r: Resp) => r,
  /** An array whose order comes from a hash table (SMEMBERS, KEYS, SUNION…): compare as a multiset. */
  unordered: unlessError((r) => (r.t === '*' && r.items ? { t: '*', items: sortItems(r.items) } : r)),
  /** SCAN-like [cursor, [elements]]: the cursor exactly, the elements as a multiset. */
  unorderedScan: unlessError((r) => {
    if (r.t !== '*' || !r.items || r.items.length !== 2) return r;
    const [cursor, page] = r.items;
    return { t: '*', items: [cursor, page.t === '*' && page.items ? { t: '*', items: sortItems(page.items) } : page] };
  }),
  /** Every array at every depth as a multiset (COMMAND, COMMAND DOCS: commands and subcommands come from hash tables). */
  deepUnordered: unlessError(function deep(r: Resp): Resp {
    return r.t === '*' && r.items ? { t: '*', items: sortItems(r.items.map(deep)) } : r;
  }),
  /** A flat array of field/value pairs in hash-table order (CONFIG GET of several parameters): compare as a set of pairs. */
  unorderedPairs: unlessError((r) => {
    if (r.t !== '*' || !r.items) return r;
    const pairs: Resp[] = [];
    for (let i = 0; i < r.items.length; i += 2) pairs.push({ t: '*', items: r.items.slice(i, i + 2) });
    return { t: '*', items: sortItems(pairs) };
  }),
  /** FUNCTION LIST: libraries and each library's functions come from hash tables; compare both as sets. */
  functionList: unlessError((r) => {
    if (r.t !== '*' || !r.items) return r;
    const libraries = r.items.map((lib) => {
      if (lib.t !== '*' || !lib.items) return lib;
      const fields = [...lib.items];
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const key = fields[i];
        const value = fields[i + 1];
        if (key.t === '$' && key.b?.toString() === 'functions' && value.t === '*' && value.items)
          fields[i + 1] = { t: '*', items: sortItems(value.items) };
      }
      return { t: '*', items: fields } as Resp;
    });
    return { t: '*', items: sortItems(libraries) };
  }),
  /** Integers whose value is time- or process-dependent (TTL of a relative expiry, idle times, ids): type only. */
  maskIntegers: unlessError((r) => mapTree(r, (leaf) => (leaf.t === ':' ? { t: ':', n: '#' } : leaf))),
  /** Type skeleton only (TIME, random picks with repetition): every leaf keeps its type, arrays their length. */
  shape: unlessError((r) =>
    mapTree(r, (leaf) => {
      if (leaf.t === ':') return { t: ':', n: '#' };
      if (leaf.t === '$') return { t: '$', b: leaf.b === null ? null : Buffer.from('?') };
      return leaf;
    }),
  ),
  /** CLIENT INFO / CLIENT LIST line: field names in order, and the values that do not depend on the connection. */
  clientInfo: unlessError((r) => {
    if (r.t !== '$' || r.b === null) return r;
    const text = clientInfoText(r.b.toString('latin1'));
    return { t: '$', b: Buffer.from(text, 'latin1') };
  }),
  /**
   * CLIENT LIST: only this connection's line (the one running client|list; other connections come and
   * go), compared like CLIENT INFO.
   */
  clientList: unlessError((r) => {
    if (r.t !== '$' || r.b === null) return r;
    const own = r.b
      .toString('latin1')
      .split('\n')
      .filter((line) => line.includes(' cmd=client|list '));
    return normalizers.clientInfo({ t: '$', b: Buffer.from(own.map((l) => `${l}\n`).join(''), 'latin1') });
  }),
  /**
   * INFO text: section headers and field names in order; the values of the fields clients read during
   * their handshake; `db0:` keyspace lines exactly. Other values are process-specific (pids, memory,
   * counters) and masked. Per-command/per-error lines (cmdstat_, errorstat_, latency_percentiles_usec_)
   * depend on what the server ran before and are dropped, as is respgate's documented extra field
   * total_upstream_calls.
   */
  info: unlessError((r) => {
    if (r.t !== '$' || r.b === null) return r;
    const lines = infoLines(r.b.toString('latin1'));
    return { t: '$', b: Buffer.from(lines.join('\n'), 'latin1') };
  }),
};

export type CompareMode =
  | 'exact'
  | 'unordered'
  | 'deepUnordered'
  | 'unorderedPairs'
  | 'functionList'
  | 'unorderedScan'
  | 'maskIntegers'
  | 'shape'
  | 'clientInfo'
  | 'clientList'
  | 'info';

/** The string two replies are compared by under a mode (raw latin1 for `exact`). */
export function comparable(reply: Buffer, mode: CompareMode): string {
  if (mode === 'exact') return reply.toString('latin1');
  return render(normalizers[mode](parseReply(reply)));
}

/** CLIENT INFO/LIST text with the fields that depend on the connection or on timing masked. */
export function clientInfoText(text: string): string {
  const volatile = new Set([
    'id',
    'addr',
    'laddr',
    'fd',
    'age',
    'idle',
    'qbuf',
    'qbuf-free',
    'argv-mem',
    'multi-mem',
    'rbs',
    'rbp',
    'obl',
    'oll',
    'omem',
    'tot-mem',
  ]);
  return text
    .split('\n')
    .map((line) =>
      line
        .split(' ')
        .map((field) => {
          const eq = field.indexOf('=');
          const name = eq < 0 ? field : field.slice(0, eq);
          return volatile.has(name) ? `${name}=*` : field;
        })
        .join(' '),
    )
    .join('\n');
}

/** Compares two replies after normalising them with `comparable`; a failure text, or undefined when equal. */
export function mismatch(
  where: string,
  oracle: Buffer,
  proxy: Buffer,
  compare: string,
  comparableOf: (reply: Buffer) => string,
): string | undefined {
  let o: string;
  let p: string;
  try {
    o = comparableOf(oracle);
    p = comparableOf(proxy);
  } catch (err) {
    return `${where}: could not compare (${compare}): ${(err as Error).message}\n  oracle: ${printable(oracle)}\n  proxy:  ${printable(proxy)}`;
  }
  if (o === p) return undefined;
  const how = compare === 'exact' ? '' : ` (compared as ${compare}: oracle ${printable(o, 600)} vs proxy ${printable(p, 600)})`;
  return `${where}: replies differ${how}\n  oracle: ${printable(oracle)}\n  proxy:  ${printable(proxy)}`;
}

/** Fails with the first difference in full, then one line for each later one (later state may follow from the first). */
export function reportDifferences(failures: string[]): void {
  if (failures.length === 0) return;
  const rest = failures.slice(1).map((f) => `  - ${f.split('\n')[0].slice(0, 300)}`);
  expect.fail(`${failures[0]}${rest.length ? `\n${rest.length} more difference(s) after it:\n${rest.join('\n')}` : ''}`);
}

/** INFO text with the values that depend on the process or on timing masked (field names and handshake values kept). */
export function infoLines(text: string): string[] {
  const keep = new Set([
    'redis_version',
    'redis_mode',
    'loading',
    'async_loading',
    'maxmemory',
    'maxmemory_human',
    'maxmemory_policy',
    'role',
    'arch_bits',
    'cluster_enabled',
    'connected_slaves',
    'aof_enabled',
    'redis_git_sha1',
    'hz',
    'configured_hz',
    'master_failover_state',
    'repl_backlog_active',
  ]);
  const dropped = /^(cmdstat_|errorstat_|latency_percentiles_usec_|total_upstream_calls:)/;
  return text
    .split('\r\n')
    .filter((line) => !dropped.test(line))
    .map((line) => {
      const colon = line.indexOf(':');
      if (line.startsWith('#') || colon < 0 || line.startsWith('db')) return line;
      const name = line.slice(0, colon);
      return keep.has(name) ? line : `${name}:*`;
    });
}
