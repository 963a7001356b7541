/**
 * The command table: every core command of Redis 8.8.0 (data.ts, recorded from a real redis-server 8.8.0),
 * RedisJSON's JSON.* (json-commands.ts) and the service's SEARCH.* (search-commands.ts), each joined with
 * its proxy route and REST-platform policy (routes.ts). Used by the proxy (validation, routing, COMMAND),
 * the platform (read-only tokens, refusals) and docs/compatibility.md.
 *
 * Redis 8.8's module commands (the vector sets, `vectorset`) are not in it: the vector side port serves
 * them. A command the table lacks is unknown, as in a Redis without it (docs/decisions.md "Redis 8.8").
 */
import { commandData, type CommandData, type PlainMap } from './data.js';
import { jsonCommandData } from './json-commands.js';
import { NameCache } from '../resp/name-cache.js';
import { searchCommandData } from './search-commands.js';
import {
  platformRefusalText,
  platformRules,
  proxyRefusalText,
  proxyRoutes,
  type PlatformRule,
  type Route,
  type RouteNote,
} from './routes.js';

export type { Route } from './routes.js';
export type { PlatformRule, PlatformRefusalKind } from './routes.js';

export interface CommandSpec {
  /** Lowercase; `client|setname` for subcommands. */
  name: string;
  /** Redis arity: N means exactly N arguments (command name included), -N at least N. */
  arity: number;
  /** COMMAND INFO flags: `write`, `readonly`, `denyoom`, `movablekeys`, ... */
  flags: ReadonlySet<string>;
  firstKey: number;
  lastKey: number;
  keyStep: number;
  /** COMMAND INFO key specs, Redis' maps verbatim (getkeys.ts reads them). */
  keySpecs: readonly PlainMap[];
  /** COMMAND INFO ACL categories, with the `@` as Redis prints them: `@write`, `@string`, `@slow`. */
  aclCategories: ReadonlySet<string>;
  /** COMMAND DOCS group: `string`, `connection`, `server`, `sorted-set`, `module`, ... */
  group: string;
  /** COMMAND DOCS since, e.g. `1.0.0`. */
  since: string;
  /** For module commands: the module (`ReJSON`, `upstash-search`), as COMMAND LIST FILTERBY MODULE names it. */
  module?: string;
  route: Route;
  reason?: string;
  /** For containers (CLIENT, CONFIG, ...): subcommands keyed by their lowercase bare name (`setname`). */
  subcommands?: ReadonlyMap<string, CommandSpec>;
  /** For subcommands: the container's name (`client`). */
  container?: string;
  /** For route `refused`: the exact error text the proxy answers (without the leading `-`). */
  refusal?: string;
  /** The REST platform's refusal rule, when it has one (see platformRefusal). */
  platform?: PlatformRule;
}

export type CheckResult =
  | { ok: true; spec: CommandSpec }
  /** `error`: Redis' text without the leading `-`; `errorBytes`: the same, byte-exact even when it echoes binary arguments. */
  | { ok: false; error: string; errorBytes: Buffer; /** The command, when it exists (wrong arity). */ spec?: CommandSpec };

// ---------------------------------------------------------------------------------------------------------------
// Building the table.

function noteFor(name: string, container: string | undefined): RouteNote {
  return proxyRoutes[name] ?? (container !== undefined ? proxyRoutes[container] : undefined) ?? { route: 'forward' };
}

function build(d: CommandData, container?: string): CommandSpec {
  const note = noteFor(d.name, container);
  const spec: CommandSpec = {
    name: d.name,
    arity: d.arity,
    flags: new Set(d.flags),
    firstKey: d.firstKey,
    lastKey: d.lastKey,
    keyStep: d.step,
    keySpecs: d.keySpecs,
    aclCategories: new Set(d.aclCategories),
    group: d.docs.group,
    since: d.docs.since ?? '',
    // Every optional field present, in one order: all specs then share one hidden class, so the hot
    // path's reads of a spec stay monomorphic whatever mix of commands it sees (bench/README.md, hop).
    module: undefined,
    route: note.route,
    reason: undefined,
    subcommands: undefined,
    container: undefined,
    refusal: undefined,
    platform: undefined,
  };
  if (d.docs.module !== undefined) spec.module = d.docs.module;
  if (note.reason !== undefined) spec.reason = note.reason;
  if (container !== undefined) spec.container = container;
  if (note.route === 'refused') spec.refusal = note.error ?? proxyRefusalText(d.name, note.reason ?? 'not available');
  const platform = platformRules[d.name] ?? (container !== undefined ? platformRules[container] : undefined);
  if (platform) spec.platform = platform;
  if (d.subcommands) {
    const subs = new Map<string, CommandSpec>();
    for (const s of d.subcommands) subs.set(s.name.slice(d.name.length + 1), build(s, d.name));
    spec.subcommands = subs;
  }
  return Object.freeze(spec);
}

const byNameOrder = (a: CommandData, b: CommandData) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The command data the proxy carries, sorted by name: Redis 8.8's core commands (its module commands, the
 * vector sets, belong to the vector side port), JSON.* and SEARCH.*. COMMAND and COMMAND DOCS list these.
 */
export const tableData: readonly CommandData[] = Object.freeze(
  [...commandData.commands.filter((c) => !c.flags.includes('module')), ...jsonCommandData, ...searchCommandData].sort(byNameOrder),
);

// A command's spec is built the first time it is looked up: building all ~650 at load took ~5 ms of every
// proxy's start (bench/README.md, "The proxy's start, third pass"), and a proxy serves a few dozen commands.
const dataByName = new Map<string, CommandData>(tableData.map((d) => [d.name, d]));
const byName = new Map<string, CommandSpec>();

/** The top-level command spec of a lowercase name, built once. */
function specNamed(key: string): CommandSpec | undefined {
  let spec = byName.get(key);
  if (spec === undefined) {
    const d = dataByName.get(key);
    if (d === undefined) return undefined;
    spec = build(d);
    byName.set(key, spec);
  }
  return spec;
}

let everySpec: { topLevel: readonly CommandSpec[]; flat: readonly CommandSpec[] } | undefined;

/** Every spec, built (COMMAND, scripts' write-command list): top-level ones, and each container followed by its subcommands. */
function allSpecs(): { topLevel: readonly CommandSpec[]; flat: readonly CommandSpec[] } {
  if (everySpec === undefined) {
    const topLevel = Object.freeze(tableData.map((d) => specNamed(d.name)!));
    everySpec = { topLevel, flat: Object.freeze(topLevel.flatMap((s) => [s, ...(s.subcommands?.values() ?? [])])) };
  }
  return everySpec;
}

// Command names are at most this long (full subcommand names included); longer input cannot match.
const MAX_NAME = Math.max(...tableData.flatMap((d) => [d.name, ...(d.subcommands ?? []).map((sub) => sub.name)]).map((n) => n.length));

/**
 * Redis compares command names case-insensitively byte by byte (ASCII only): `GeT` matches `get`, but a
 * non-ASCII character whose JS lowercase is ASCII (the Kelvin sign) must not.
 */
function lowerAscii(name: string | Buffer): string | undefined {
  if (name.length > MAX_NAME) return undefined;
  const s = typeof name === 'string' ? name : name.toString('latin1');
  // Clients spell a command the same way every time: remember the spellings seen (bounded).
  const known = spellings.get(s);
  if (known !== undefined) return known;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return undefined;
  const key = s.toLowerCase();
  if (spellings.size < 4096) spellings.set(s, key);
  return key;
}
const spellings = new Map<string, string>();

// ---------------------------------------------------------------------------------------------------------------
// Lookups.

/** The top-level command named `name` (case-insensitive), or undefined. */
export function lookupCommand(name: string | Buffer): CommandSpec | undefined {
  if (typeof name !== 'string') return name.length > MAX_NAME ? undefined : commandsByBytes.get(name);
  return commandByText(name);
}

function commandByText(name: string): CommandSpec | undefined {
  const key = lowerAscii(name);
  return key === undefined ? undefined : specNamed(key);
}
/** Top-level commands by the bytes of the name as clients spell it (no string per command). */
const commandsByBytes = new NameCache(commandByText);

/** A command or subcommand by its full name (`get`, `client|setname`), case-insensitive. */
export function lookupFullName(fullname: string): CommandSpec | undefined {
  const key = lowerAscii(fullname);
  if (key === undefined) return undefined;
  const bar = key.indexOf('|');
  return bar < 0 ? specNamed(key) : specNamed(key.slice(0, bar))?.subcommands?.get(key.slice(bar + 1));
}

function lookupSub(container: CommandSpec, sub: string | Buffer): CommandSpec | undefined {
  const key = lowerAscii(sub);
  return key === undefined ? undefined : container.subcommands!.get(key);
}

/**
 * The command Redis would run for these arguments: the subcommand for container commands called with one
 * (`CLIENT SETNAME x` → `client|setname`), the container itself when called alone (`CLIENT` → `client`,
 * which then fails its arity check), undefined for an unknown command or subcommand.
 */
export function resolveCommand(args: readonly (string | Buffer)[]): CommandSpec | undefined {
  if (args.length === 0) return undefined;
  const base = lookupCommand(args[0]);
  if (!base || !base.subcommands || args.length === 1) return base;
  return lookupSub(base, args[1]);
}

/** Whether the argument count fits Redis' arity (`argc` includes the command name, and the subcommand). */
export function arityOk(spec: CommandSpec, argc: number): boolean {
  return spec.arity > 0 ? argc === spec.arity : argc >= -spec.arity;
}

/**
 * Redis' own checks before running a command (server.c processCommand: commandCheckExistence and
 * commandCheckArity), with its exact error texts:
 * - `ERR unknown command 'foo', with args beginning with: 'a' 'b' `
 * - `ERR unknown subcommand 'x'. Try CLIENT HELP.`
 * - `ERR wrong number of arguments for 'client|setname' command`
 * - `EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command` (EXEC only)
 * Echoed names and arguments are C strings in Redis (cut at the first NUL byte) of at most 128 bytes, and
 * `\r`/`\n` in the whole text become spaces. An empty argument list is treated like an empty command name.
 */
export function checkCommand(args: readonly (string | Buffer)[]): CheckResult {
  const base = args.length ? lookupCommand(args[0]) : undefined;
  if (!base) return fail(unknownCommandText(args));
  let spec = base;
  if (base.subcommands && args.length > 1) {
    const sub = lookupSub(base, args[1]);
    if (!sub) return fail(unknownSubcommandText(base, args[1]));
    spec = sub;
  }
  if (!arityOk(spec, args.length)) {
    const text = `wrong number of arguments for '${spec.name}' command`;
    // server.c rejectCommand: a rejected EXEC also discards the transaction (multi.c execCommandAbort).
    return fail(Buffer.from(spec.name === 'exec' ? `EXECABORT Transaction discarded because of: ${text}` : `ERR ${text}`), spec);
  }
  return { ok: true, spec };
}

function fail(bytes: Buffer, spec?: CommandSpec): CheckResult {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 13 || bytes[i] === 10) bytes[i] = 32;
  return { ok: false, error: bytes.toString('utf8'), errorBytes: bytes, spec };
}

/** A C-string view of an argument (`%.Ns`): up to the first NUL byte, at most `max` bytes. */
function cstr(arg: string | Buffer, max: number): Buffer {
  const b = typeof arg === 'string' ? Buffer.from(arg) : arg;
  const nul = b.indexOf(0);
  const end = Math.min(nul < 0 ? b.length : nul, max);
  return b.subarray(0, end);
}

function unknownCommandText(args: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [
    Buffer.from("ERR unknown command '"),
    cstr(args.length ? args[0] : '', 128),
    Buffer.from("', with args beginning with: "),
  ];
  let len = 0;
  for (let i = 1; i < args.length && len < 128; i++) {
    const a = cstr(args[i], 128 - len);
    parts.push(Buffer.from("'"), a, Buffer.from("' "));
    len += a.length + 3;
  }
  return Buffer.concat(parts);
}

function unknownSubcommandText(container: CommandSpec, sub: string | Buffer): Buffer {
  return Buffer.concat([
    Buffer.from("ERR unknown subcommand '"),
    cstr(sub, 128),
    Buffer.from(`'. Try ${container.name.toUpperCase()} HELP.`),
  ]);
}

/** Redis marks commands that change data with the `write` flag (resolve subcommands first). */
export function isWriteCommand(spec: CommandSpec): boolean {
  return spec.flags.has('write');
}

// ---------------------------------------------------------------------------------------------------------------
// Arguments that change the handling of a command.

function eqAscii(arg: string | Buffer, upper: string): boolean {
  if (arg.length !== upper.length) return false;
  const s = typeof arg === 'string' ? arg : arg.toString('latin1');
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) c -= 32;
    if (c !== upper.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Whether XREAD/XREADGROUP has a BLOCK option, parsed like Redis 8.8 (t_stream.c xreadCommand): options
 * come before STREAMS, and COUNT/BLOCK/GROUP/CLAIM take values, so a key or group named "block" is not the
 * option. CLAIM (8.4) is XREADGROUP's: XREAD with it is an error before any later BLOCK.
 */
export function hasBlockOption(args: readonly (string | Buffer)[]): boolean {
  for (let i = 1; i < args.length; i++) {
    const more = args.length - i - 1;
    const a = args[i];
    if (eqAscii(a, 'BLOCK') && more > 0) return true;
    if (eqAscii(a, 'CLAIM') && more > 0) {
      if (!eqAscii(args[0], 'XREADGROUP')) return false;
      i++;
    } else if (eqAscii(a, 'COUNT') && more > 0) i++;
    else if (eqAscii(a, 'STREAMS') && more > 0) return false;
    else if (eqAscii(a, 'GROUP') && more >= 2) i += 2;
    else if (!eqAscii(a, 'NOACK')) return false; // a syntax error in Redis
  }
  return false;
}

/** Whether COPY names a destination database other than 0 (`COPY src dst DB n`). */
export function hasOtherDbOption(args: readonly (string | Buffer)[]): boolean {
  for (let i = 3; i < args.length; i++) {
    if (eqAscii(args[i], 'DB') && i + 1 < args.length) {
      // Only a valid other index: a value that is no integer gets Redis' own parse error from the
      // upstream's redis-server (`ERR value is not an integer or out of range`).
      const db = args[i + 1].toString();
      if (/^-?[1-9]\d{0,17}$/.test(db)) return true;
      i++;
    }
  }
  return false;
}

/** CONFIG SET of `notify-keyspace-events` only (keyspace notifications, which the service lets users turn on). */
export function setsOnlyNotify(args: readonly (string | Buffer)[]): boolean {
  if (args.length < 4 || args.length % 2 !== 0) return false;
  for (let i = 2; i < args.length; i += 2) if (args[i].toString().toLowerCase() !== 'notify-keyspace-events') return false;
  return true;
}

/**
 * The proxy route for these arguments: `spec.route`, except XREAD/XREADGROUP with BLOCK, which are
 * `blocking`. `spec` must be `resolveCommand(args)`.
 */
export function routeOf(spec: CommandSpec, args: readonly (string | Buffer)[]): Route {
  if ((spec.name === 'xread' || spec.name === 'xreadgroup') && hasBlockOption(args)) return 'blocking';
  return spec.route;
}

/**
 * The REST platform's refusal text for this command (HTTP 400), or undefined when the platform runs it.
 * Unknown commands and wrong arities are not refusals: redis-server answers them with its own errors.
 */
export function platformRefusal(args: readonly (string | Buffer)[], resolved?: CommandSpec | null): string | undefined {
  const spec = resolved === undefined ? resolveCommand(args) : (resolved ?? undefined);
  if (!spec || !spec.platform) return undefined;
  const { kind, when } = spec.platform;
  if (when === 'block-option' && !hasBlockOption(args)) return undefined;
  if (when === 'db-option' && !hasOtherDbOption(args)) return undefined;
  if (when === 'not-notify' && setsOnlyNotify(args)) return undefined;
  return platformRefusalText(kind, spec.name);
}

/** Top-level commands (Redis 8.8's 282 core commands, 24 JSON.*, 12 SEARCH.*), sorted by name; subcommands hang off `subcommands`. */
export function allCommands(): readonly CommandSpec[] {
  return allSpecs().topLevel;
}

/** Every command and subcommand (COMMAND LIST): each container followed by its subcommands, sorted. */
export function allCommandsAndSubcommands(): readonly CommandSpec[] {
  return allSpecs().flat;
}
