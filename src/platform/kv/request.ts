// Reads an Area B HTTP request into what it asks for: one command, a pipeline, a transaction, or
// an event stream. Path segments and query parameters are percent-decoded to raw bytes, so any
// binary argument can travel in the path form; JSON bodies carry text arguments.
import { percentDecode } from './percent-decode.js';
import { LARGE_ARG_BYTES, type Arg } from '../../resp/request-writer.js';
import type { BodyPieces } from '../http-body.js';
import { readPlainPipeline, type PlainKind, type PlainPipeline } from './plain-pipeline.js';

export type KvRequest =
  | { kind: 'command'; command: Arg[] }
  | { kind: 'pipeline'; commands: Arg[][] }
  /** A pipeline of plain commands, already RESP (plain-pipeline.ts): the same answer as `pipeline`, cheaper. */
  | ({ kind: 'plain-pipeline' } & PlainPipeline)
  /** One plain command of the path form with a large body, as RESP pieces (the body's own among them). */
  | { kind: 'plain-command'; resp: Buffer[]; wrote: boolean }
  | { kind: 'multi-exec'; commands: Arg[][] }
  | { kind: 'subscribe' | 'psubscribe' | 'ssubscribe'; channel: Buffer }
  | { kind: 'monitor' }
  | { kind: 'invalid'; error: string };

/** `plainKind`: which commands may take the /pipeline fast path (Executor.plainKind); none without it. */
export function parseKvRequest(rawPath: string, rawQuery: string, body: Buffer, plainKind?: (name: string) => PlainKind): KvRequest {
  const segments = rawPath.split('/').slice(1);
  if (segments.length === 1 && segments[0] === '') {
    // Command in the body: ["SET","k","v"]
    if (body.length === 0) {
      return invalid('ERR empty request: send a command in the path (/set/key/value) or a JSON array body ["SET","key","value"]');
    }
    const parsed = parseJson(body);
    if (!parsed.ok) return invalid(parsed.error);
    const command = toCommand(parsed.value);
    return typeof command === 'string' ? invalid(command) : { kind: 'command', command };
  }
  const first = segments[0].toLowerCase();
  if ((first === 'pipeline' || first === 'multi-exec') && segments.length === 1) {
    const plain = first === 'pipeline' && plainKind ? readPlainPipeline(body, plainKind) : undefined;
    if (plain) return { kind: 'plain-pipeline', ...plain };
    const parsed = parseJson(body);
    if (!parsed.ok) return invalid(parsed.error);
    if (!Array.isArray(parsed.value)) {
      return invalid(`ERR the ${first} body must be a JSON array of commands, for example [["SET","k","v"],["GET","k"]]`);
    }
    const commands: Arg[][] = [];
    for (const item of parsed.value) {
      const command = toCommand(item);
      if (typeof command === 'string') return invalid(command);
      commands.push(command);
    }
    return { kind: first, commands };
  }
  // /ssubscribe is a respgate extension (the real service has no sharded stream): SPUBLISH reaches it.
  if ((first === 'subscribe' || first === 'psubscribe' || first === 'ssubscribe') && segments.length === 2) {
    return { kind: first, channel: percentDecode(segments[1]) };
  }
  if (first === 'monitor' && segments.length === 1) return { kind: 'monitor' };

  // Path form: /set/foo/bar, the body (if any) as the last argument, then query parameters.
  const command: Arg[] = segments.map((s) => percentDecode(s));
  if (body.length > 0) command.push(body);
  for (const arg of queryArguments(rawQuery)) command.push(arg);
  if (command[0].length === 0) return invalid('ERR empty command name in the path');
  return { kind: 'command', command };
}

/** Whether the path names a route of its own rather than a command of the path form (parseKvRequest's order). */
function isRoute(segments: readonly string[]): boolean {
  if (segments.length === 1 && segments[0] === '') return true;
  const first = segments[0].toLowerCase();
  if (segments.length === 1) return first === 'pipeline' || first === 'multi-exec' || first === 'monitor';
  return segments.length === 2 && (first === 'subscribe' || first === 'psubscribe' || first === 'ssubscribe');
}

/**
 * A path-form command whose body is large (SET k <1 MiB>) and whose name is plain (Executor.plainKind):
 * its RESP request as pieces, the body's pieces among them as they were read, so the value reaches
 * redis-server with no join, no copy and no plan (the general path answers the same: a plain command is
 * sent as it is). Undefined for anything else, which parseKvRequest reads.
 */
export function readLargePathCommand(
  rawPath: string,
  rawQuery: string,
  body: BodyPieces,
  plainKind: (name: string) => PlainKind,
): KvRequest | undefined {
  if (body.size < LARGE_ARG_BYTES) return undefined;
  const segments = rawPath.split('/').slice(1);
  if (isRoute(segments)) return undefined;
  const head = segments.map((s) => percentDecode(s));
  if (head[0].length === 0) return undefined;
  const kind = plainKind(head[0].toString('latin1'));
  if (kind === undefined) return undefined;
  const tail = queryArguments(rawQuery);
  const before = encodeArgs(`*${head.length + 1 + tail.length}\r\n`, head, `$${body.size}\r\n`);
  const after = encodeArgs('\r\n', tail, '');
  return { kind: 'plain-command', resp: [before, ...body.pieces, after], wrote: kind === 'write' };
}

/** `prefix`, each argument as a RESP bulk string, then `suffix`, in one Buffer. */
function encodeArgs(prefix: string, args: readonly Buffer[], suffix: string): Buffer {
  const parts: Buffer[] = [Buffer.from(prefix, 'latin1')];
  for (const arg of args) parts.push(Buffer.from(`$${arg.length}\r\n`, 'latin1'), arg, CRLF);
  parts.push(Buffer.from(suffix, 'latin1'));
  return Buffer.concat(parts);
}

const CRLF = Buffer.from('\r\n');

/** Query parameters other than _token, in URL order: `EX=100` → EX 100, `NX` → NX. */
function queryArguments(rawQuery: string): Buffer[] {
  const out: Buffer[] = [];
  if (!rawQuery) return out;
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = percentDecode(eq < 0 ? part : part.slice(0, eq), true);
    if (name.toString() === '_token') continue;
    out.push(name);
    if (eq >= 0) out.push(percentDecode(part.slice(eq + 1), true));
  }
  return out;
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false, error: 'ERR the request body is not valid JSON' };
  }
}

/** A JSON command array → arguments; strings, numbers and booleans are accepted, as the SDK sends them. */
function toCommand(value: unknown): Arg[] | string {
  if (!Array.isArray(value) || value.length === 0) {
    return 'ERR a command must be a non-empty JSON array: its name followed by its arguments, for example ["GET","key"]';
  }
  const args: Arg[] = [];
  for (const item of value) {
    if (typeof item === 'string') args.push(item);
    else if (typeof item === 'number' && Number.isFinite(item)) args.push(String(item));
    else if (typeof item === 'boolean') args.push(item ? 'true' : 'false');
    else {
      return `ERR command arguments must be strings, numbers or booleans, got ${item === null ? 'null' : Array.isArray(item) ? 'an array' : typeof item}`;
    }
  }
  if (args[0].length === 0) return 'ERR empty command name';
  return args;
}

function invalid(error: string): KvRequest {
  return { kind: 'invalid', error };
}
