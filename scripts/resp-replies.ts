/**
 * Raw RESP replies for the command-table tests and the recorder (scripts/gen-command-data.ts): a typed RESP3
 * reader that keeps status vs bulk, set vs array and the exact bytes, a small client, and the canonical
 * forms of COMMAND replies (Redis lists commands and subcommands in hash order). No process is started here.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { encodeCommands } from '../src/resp/request-writer.js';
import type { Canon } from '../test/fixtures/commands-redis8/cases.js';

// ---------------------------------------------------------------------------------------------------------------
// A raw RESP client: sends multibulk requests, returns typed replies together with their exact bytes.

export type Reply =
  | { type: 'status'; text: string; raw: Buffer }
  | { type: 'error'; text: string; raw: Buffer }
  | { type: 'int'; value: number; raw: Buffer }
  | { type: 'bulk'; value: Buffer | null; text: string; raw: Buffer }
  | { type: 'double' | 'bignum' | 'bool' | 'null'; text: string; raw: Buffer }
  | { type: 'array' | 'set' | 'push'; items: Reply[] | null; raw: Buffer }
  | { type: 'map'; entries: [Reply, Reply][]; raw: Buffer };

/** Parses one reply at `pos`; returns undefined when the buffer holds only part of it. */
export function parseReply(buf: Buffer, pos = 0): { reply: Reply; end: number } | undefined {
  const eol = buf.indexOf('\r\n', pos);
  if (eol < 0) return undefined;
  const kind = String.fromCharCode(buf[pos]);
  const line = buf.toString('latin1', pos + 1, eol);
  const next = eol + 2;
  const raw = (end: number) => buf.subarray(pos, end);
  switch (kind) {
    case '+':
      return { reply: { type: 'status', text: buf.toString('utf8', pos + 1, eol), raw: raw(next) }, end: next };
    case '-':
      return { reply: { type: 'error', text: buf.toString('utf8', pos + 1, eol), raw: raw(next) }, end: next };
    case ':':
      return { reply: { type: 'int', value: Number(line), raw: raw(next) }, end: next };
    case ',':
    case '(':
    case '#':
    case '_': {
      const type = kind === ',' ? 'double' : kind === '(' ? 'bignum' : kind === '#' ? 'bool' : 'null';
      return { reply: { type, text: line, raw: raw(next) }, end: next };
    }
    case '$':
    case '=':
    case '!': {
      const len = Number(line);
      if (len < 0) return { reply: { type: 'bulk', value: null, text: '', raw: raw(next) }, end: next };
      if (buf.length < next + len + 2) return undefined;
      const value = buf.subarray(next, next + len);
      const end = next + len + 2;
      if (kind === '!') return { reply: { type: 'error', text: value.toString('utf8'), raw: raw(end) }, end };
      return { reply: { type: 'bulk', value, text: value.toString('utf8'), raw: raw(end) }, end };
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      const n = Number(line);
      if (n < 0) return { reply: { type: 'array', items: null, raw: raw(next) }, end: next };
      const count = kind === '%' || kind === '|' ? 2 * n : n;
      const items: Reply[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const r = parseReply(buf, at);
        if (!r) return undefined;
        items.push(r.reply);
        at = r.end;
      }
      if (kind === '%' || kind === '|') {
        const entries: [Reply, Reply][] = [];
        for (let i = 0; i < items.length; i += 2) entries.push([items[i], items[i + 1]]);
        return { reply: { type: 'map', entries, raw: raw(at) }, end: at };
      }
      const type = kind === '*' ? 'array' : kind === '~' ? 'set' : 'push';
      return { reply: { type, items, raw: raw(at) }, end: at };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(kind)} at ${pos}`);
  }
}

export class RawRedis {
  private buf: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
  private closed: Error | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      for (;;) {
        if (!this.waiting.length || !this.buf.length) break;
        const r = parseReply(this.buf);
        if (!r) break;
        this.buf = this.buf.subarray(r.end);
        this.waiting.shift()!.resolve(r.reply);
      }
    });
    const fail = (e: Error) => {
      this.closed ??= e;
      for (const w of this.waiting.splice(0)) w.reject(e);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawRedis> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, host);
      s.once('connect', () => {
        s.off('error', reject);
        resolve(new RawRedis(s));
      });
      s.once('error', reject);
    });
  }

  /** Sends one command; resolves with its typed reply (raw bytes included). */
  call(...args: (string | Buffer)[]): Promise<Reply> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.socket.write(encodeCommands([args]));
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Canonical forms of Redis' replies: Redis lists commands and subcommands in hash order (different in every
// process), so they are put in name order; nothing else is changed.

function children(r: Reply): Reply[] {
  if (r.type === 'map') return r.entries.flat();
  if ((r.type === 'array' || r.type === 'set' || r.type === 'push') && r.items) return r.items;
  return [];
}

/** The bytes of an aggregate's header (`*10\r\n`, `%7\r\n`, ...). */
function header(r: Reply): Buffer {
  const body = children(r).reduce((n, c) => n + c.raw.length, 0);
  return r.raw.subarray(0, r.raw.length - body);
}

const nameOf = (r: Reply) => (r.type === 'bulk' ? r.text : '');
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A COMMAND INFO entry with its subcommands in name order. */
function canonInfo(entry: Reply): Buffer {
  if (entry.type !== 'array' || !entry.items) return entry.raw;
  const f = entry.items;
  const subs = [...(f[9].type === 'array' && f[9].items ? f[9].items : [])].sort((a, b) =>
    cmp(nameOf((a as { items: Reply[] }).items[0]), nameOf((b as { items: Reply[] }).items[0])),
  );
  return Buffer.concat([header(entry), ...f.slice(0, 9).map((x) => x.raw), header(f[9]), ...subs.map(canonInfo)]);
}

/** The pairs of a map (RESP3) or of a flat key-value array (how RESP2 sends a map). */
function pairs(r: Reply): [Reply, Reply][] {
  if (r.type === 'map') return r.entries;
  const items = r.type === 'array' && r.items ? r.items : [];
  const out: [Reply, Reply][] = [];
  for (let i = 0; i + 1 < items.length; i += 2) out.push([items[i], items[i + 1]]);
  return out;
}

/** A map of name → COMMAND DOCS map, in name order (`sorted`), with nested subcommand maps in name order. */
export function canonDocsMap(map: Reply, sorted = true): Buffer {
  const entries = sorted ? [...pairs(map)].sort((a, b) => cmp(nameOf(a[0]), nameOf(b[0]))) : pairs(map);
  return Buffer.concat([header(map), ...entries.flatMap(([k, v]) => [k.raw, canonDocs(v)])]);
}

function canonDocs(docs: Reply): Buffer {
  return Buffer.concat([
    header(docs),
    ...pairs(docs).flatMap(([k, v]) => [k.raw, k.type === 'bulk' && k.text === 'subcommands' ? canonDocsMap(v) : v.raw]),
  ]);
}

/** A list of COMMAND INFO entries; `sorted` for COMMAND (all), request order for COMMAND INFO names. */
export function canonInfoList(r: Reply, sorted = true): Buffer {
  if (r.type !== 'array' || !r.items) return r.raw;
  if (!sorted) return Buffer.concat([header(r), ...r.items.map(canonInfo)]);
  const items = [...r.items].sort((a, b) => {
    const na = a.type === 'array' && a.items ? nameOf(a.items[0]) : '';
    const nb = b.type === 'array' && b.items ? nameOf(b.items[0]) : '';
    return cmp(na, nb);
  });
  return Buffer.concat([header(r), ...items.map(canonInfo)]);
}

/** A flat list of bulk strings (COMMAND LIST) in name order. */
export function canonNameList(r: Reply): Buffer {
  if (r.type !== 'array' || !r.items) return r.raw;
  const items = [...r.items].sort((a, b) => cmp(nameOf(a), nameOf(b)));
  return Buffer.concat([header(r), ...items.map((x) => x.raw)]);
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

// ---------------------------------------------------------------------------------------------------------------
// The reply fixture.

export interface RecordedReplies {
  redisVersion: string;
  recordedBy: string;
  /** Every command and subcommand (`COMMAND LIST`), sorted. */
  names: string[];
  /** Module commands (flag `module`) with their module (`COMMAND DOCS` module field). */
  modules: Record<string, string>;
  /** Per full name: SHA-256 of the canonical bytes of `COMMAND INFO NAME` / `COMMAND DOCS NAME` (upper case). */
  entries: Record<string, { info2: string; info3: string; docs2: string; docs3: string }>;
  /** Redis' exact replies (latin1) to the cases, canonical where the case says so. */
  cases: { args: string[]; canon?: Canon; resp2: string; resp3: string }[];
}

/** A reply in the canonical form a case asks for (`info`, `docs`: request order, subcommands in name order). */
export function canonical(r: Reply, canon: Canon | undefined): Buffer {
  if (canon === 'names') return canonNameList(r);
  if (canon === 'info') return canonInfoList(r, false);
  if (canon === 'docs') return canonDocsMap(r, false);
  return r.raw;
}
