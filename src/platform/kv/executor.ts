// Runs Area B commands for a principal on redis-server and returns one raw RESP2 reply per
// command. Commands the REST service does not offer are answered with an error reply in place
// (from the command table's platform policy); ACL RESTTOKEN is answered by the platform.
import type { Logger } from '../../logger.js';
import { lookupCommand, platformRefusal, resolveCommand, type CommandSpec } from '../../commands/table.js';
import type { Arg } from '../../resp/request-writer.js';
import { errorReply } from '../../resp/protocol.js';
import { arrayElements } from '../../resp/reply-scanner.js';
import { ConnectionLostError, errorText, type RedisConnection } from '../redis/connection.js';
import { READONLY_USER, type Principal, type Principals } from './principals.js';
import { isSearchCommand, type SearchEngine } from './search/engine.js';
import { isFunctionMissing, type JsonLibrary } from './json/library.js';
import { rewriteJsonCommand, rewritesJsonName, translateJsonError } from './json/rewrite.js';
import { compatMayChange, compatPlan, parseServerVersion, runsNatively, type ServerVersion } from './compat.js';
import { FIELD_EXPIRY_ARITY, READS_EXPIRY, type FieldExpiry } from './field-expiry.js';
import { clientSetinfoError } from './field-expiry-args.js';
import { isWriteFlagRefusal, libraryOf, READONLY_COPY_PREFIX, readonlyCopy } from './fcall-ro.js';
import { configPlan, type KeyspaceSetting } from './config.js';
import {
  filtersRepliesOf,
  replyFilterFor,
  scanKeys,
  TYPES_SCRIPT,
  WHICH_SCRIPT,
  withoutJsonLibrary,
  type ReplyFilter,
} from './json/visibility.js';
import type { PlainKind } from './plain-pipeline.js';

export type TransactionResult = RunResult | { error: string };

const EMPTY_REPLIES = Buffer.alloc(0);

function bulkReply(text: string): Buffer {
  return Buffer.from(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
}

/** Failure to reach redis-server; the outcome of a write that was sent is unknown. */
export class StoreUnavailableError extends Error {}

type Planned =
  /**
   * `json`: the user's command name when the command was rewritten (JSON library, TYPE script, compat.ts),
   * for error texts; `library`: it needs the JSON library; `fallback`: what to send instead when the
   * user may not run the rewritten form (TYPE without EVAL_RO); `filter`: a reply post-processing step.
   */
  | {
      kind: 'redis';
      command: Arg[];
      write: boolean;
      exclusive: boolean;
      json?: string;
      library?: boolean;
      fallback?: Arg[];
      filter?: ReplyFilter;
    }
  | { kind: 'reply'; reply: Buffer }
  | { kind: 'resttoken'; user: Arg; password: Arg }
  /** A hash-field expiration command emulated by field-expiry.ts (a data store older than Redis 7.4/8). */
  | { kind: 'field-expiry'; command: Arg[]; name: string; write: boolean }
  /** A SEARCH.* command: the platform's search engine answers it (search/engine.ts). */
  | { kind: 'search'; command: Arg[] };

/** Replies, and whether any command that ran may have changed data (for the sync token). */
export interface RunResult {
  replies: Buffer[];
  wrote: boolean;
}

export class Executor {
  constructor(
    private readonly principals: Principals,
    /** ACL users the platform relies on; database users may not change them. */
    private readonly reservedUsers: readonly string[],
    private readonly jsonLibrary?: JsonLibrary,
    /** Hash-field expiration for a data store without it (undefined: such commands answer an error). */
    private readonly fieldExpiry?: FieldExpiry,
    /** Where a notify-keyspace-events set through the platform is kept for the next start. */
    private readonly keyspace?: KeyspaceSetting,
    private readonly search?: SearchEngine,
    /** A kept embedded data store: ACL SAVE after ACL SETUSER/DELUSER (its ACL file survives restarts). */
    private readonly acl: { saveAclChanges: boolean; log?: Logger } = { saveAclChanges: false },
  ) {}

  /** The data store's version: commands it has natively are not emulated (compat.ts). */
  private serverVersion: ServerVersion = [7, 0, 15];

  /** Reads the data store's version (once, at start). */
  async init(): Promise<void> {
    const [info, jsonSet] = await this.principals.admin((conn) =>
      conn.send([
        ['INFO', 'server'],
        ['COMMAND', 'INFO', 'JSON.SET'],
      ]),
    );
    this.serverVersion = parseServerVersion(info.toString('latin1'));
    // A data store with the RedisJSON module (--redis-url) runs JSON.* itself: no library, no rewrites.
    this.nativeJson = /^\*1\r\n\*[1-9]/.test(jsonSet.toString('latin1')); // an entry, not a nil
  }

  /** Whether the data store has hash-field expiration itself (Redis 7.4+); else field-expiry.ts emulates it. */
  get hasNativeFieldExpiry(): boolean {
    return runsNatively('hexpire', this.serverVersion);
  }

  /** Whether the data store has its own JSON.* (RedisJSON). */
  private nativeJson = false;

  /**
   * Whether the JSON library is known to be loaded: false at first and after a FUNCTION FLUSH, DELETE or
   * RESTORE passed through the platform. Anything else that removes it (another client of a --redis-url
   * store) is caught by "Function not found" replies (fixJsonReplies).
   */
  private jsonLibraryPresent = false;

  private get emulateJson(): boolean {
    return this.jsonLibrary !== undefined && !this.nativeJson;
  }

  /** One command or a non-atomic pipeline. */
  async run(principal: Principal, commands: Arg[][]): Promise<RunResult> {
    if (this.fieldExpiry?.active) await this.expireDueFields();
    const plan = commands.map((c) => this.plan(c, false));
    const exclusive = plan.some((p) => p.kind === 'redis' && p.exclusive);
    const wrote = plan.some((p) => (p.kind === 'redis' || p.kind === 'field-expiry') && p.write);
    const conn = exclusive ? await this.acquire(principal) : await this.shared(principal);
    let clean = true;
    try {
      // A pipeline cannot be replayed in order after a FUNCTION FLUSH, so the library is checked first.
      if (!this.jsonLibraryPresent && plan.some((p) => p.kind === 'redis' && p.library)) await this.ensureJsonLibrary(conn);
      const replies: Buffer[] = [];
      const jsonAt: Array<string | undefined> = [];
      // Redis commands between two platform-answered items go out in one write.
      let batch: Arg[][] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        const sent = batch;
        batch = [];
        const from = replies.length;
        for (const r of await this.send(conn, sent)) replies.push(r);
        // Before the next emulated command: it must see what these did to fields with a TTL.
        await this.afterWrites(commands, plan, replies, from);
      };
      for (const item of plan) {
        if (item.kind === 'redis') {
          jsonAt[replies.length + batch.length] = item.json;
          batch.push(item.command);
          continue;
        }
        await flush();
        if (item.kind === 'field-expiry') replies.push(await this.runFieldExpiry(conn, item.command, item.name));
        else if (item.kind === 'search') replies.push(await this.search!.run(item.command, principal.user === READONLY_USER));
        else replies.push(item.kind === 'reply' ? item.reply : await this.restToken(item.user, item.password));
      }
      await flush();
      await this.fixJsonReplies(conn, plan, replies, jsonAt);
      await this.fcallRoAnyFunction(conn, commands, replies);
      await this.keyspace?.rememberIfSet(commands, replies);
      this.revokeChangedUsers(plan.map((p) => (p.kind === 'redis' ? p.command : [])));
      if (commands.some((c) => removesFunctions(resolveCommand(c)))) this.jsonLibraryPresent = false;
      await this.applyReplyFilters(conn, plan, replies);
      if (exclusive) {
        // Leave no transaction open on a connection that goes back to the pool.
        await this.send(conn, [['DISCARD']]);
      }
      return { replies, wrote };
    } catch (err) {
      clean = false;
      throw err;
    } finally {
      if (exclusive) principal.pool.release(conn, clean);
    }
  }

  /**
   * Whether commands named `name` (as spelled) are plain: `plan` sends every one of them as it is, on the
   * shared connection, with nothing to do before or after (no rewrite, refusal, filter or ACL bookkeeping),
   * whatever their arguments; then `read` or `write`. Otherwise undefined. Decided once per spelling.
   */
  readonly plainKind = (name: string): PlainKind => {
    let kind = this.plainKinds.get(name);
    if (kind === undefined) {
      kind = plainKindOf(lookupCommand(name)) ?? null;
      if (this.plainKinds.size < 4096) this.plainKinds.set(name, kind);
    }
    // While hash fields have expiry times, writes take the general path, whose hooks keep those times right.
    if (kind === 'write' && this.fieldExpiry?.active) return undefined;
    return kind ?? undefined;
  };

  private readonly plainKinds = new Map<string, 'read' | 'write' | null>();

  /**
   * A pipeline of plain commands (plainKind), already RESP: the replies' bytes back to back; or, with
   * `onPiece`, handed there as they arrive (then the result is empty).
   */
  runPlain(principal: Principal, resp: Buffer | readonly Buffer[], count: number, onPiece?: (piece: Buffer) => void): Promise<Buffer> {
    // The usual case, on the open shared connection: no async function and no await of the connection
    // per request (the platform's cost per /pipeline call at -P 1, bench/README.md).
    const conn = this.fieldExpiry?.active ? undefined : principal.pool.sharedNow();
    if (conn) return sendPlain(conn, resp, count, onPiece).catch(rethrowStoreError);
    return this.runPlainWaiting(principal, resp, count, onPiece);
  }

  private async runPlainWaiting(
    principal: Principal,
    resp: Buffer | readonly Buffer[],
    count: number,
    onPiece?: (piece: Buffer) => void,
  ): Promise<Buffer> {
    // Only while hash fields have expiry times.
    if (this.fieldExpiry?.active) await this.expireDueFields();
    const conn = await this.shared(principal);
    try {
      return await sendPlain(conn, resp, count, onPiece);
    } catch (err) {
      throw storeError(err);
    }
  }

  /** MULTI … EXEC on a connection of its own; discarded whole when any command is refused or fails to queue. */
  async transaction(principal: Principal, commands: Arg[][]): Promise<TransactionResult> {
    await this.expireDueFields();
    let wrote = false;
    for (const command of commands) {
      const planned = this.plan(command, true);
      if (planned.kind === 'reply') return { error: errorText(planned.reply)! };
      // As Redis refuses a badly formed command when queued: the transaction is not run.
      const refused = planned.kind === 'search' ? this.search!.refusedInTransaction(command) : undefined;
      if (refused) return { error: refused };
      if (planned.kind === 'redis' && planned.write) wrote = true;
    }
    if (commands.length === 0) return { replies: [], wrote };
    const all = commands.map((c) => this.plan(c, true));
    // SEARCH.* commands are answered by the platform after EXEC, in their place (docs/platform-kv.md).
    const searchAt = all.flatMap((p, i) => (p.kind === 'search' ? [i] : []));
    const planned = all.filter((p) => p.kind !== 'search');
    const kept = commands.filter((_, i) => all[i].kind !== 'search');
    const sent = planned.map((p, i) => (p.kind === 'redis' ? p.command : kept[i]));
    const jsonNames = planned.map((p) => (p.kind === 'redis' ? p.json : undefined));
    const conn = await this.acquire(principal);
    let clean = false;
    try {
      // A transaction cannot be retried after a FUNCTION FLUSH, so the library is checked first.
      if (!this.jsonLibraryPresent && planned.some((p) => p.kind === 'redis' && p.library)) await this.ensureJsonLibrary(conn);
      // TYPE runs as an EVAL_RO script; a user whose ACL lacks it gets Redis' own TYPE (no ReJSON-RL).
      if (planned.some((p) => p.kind === 'redis' && p.fallback)) {
        const [probe] = await this.send(conn, [['EVAL_RO', 'return 1', '0']]);
        if (isNoPermFor(probe, 'eval_ro')) planned.forEach((p, i) => p.kind === 'redis' && p.fallback && (sent[i] = p.fallback));
      }
      const replies = await this.send(conn, [['MULTI'], ...sent, ['EXEC']]);
      clean = true;
      const queued = replies.slice(1, -1);
      const exec = replies[replies.length - 1];
      const queueError = queued
        .map((r, i) => errorText(jsonNames[i] ? translateJsonError(r, jsonNames[i]!) : r))
        .find((e) => e !== undefined);
      if (queueError) return { error: queueError };
      const execError = errorText(exec);
      if (execError) return { error: execError };
      this.revokeChangedUsers(commands);
      if (commands.some((c) => removesFunctions(resolveCommand(c)))) this.jsonLibraryPresent = false;
      const items = (arrayElements(exec) ?? []).map((r, i) => (jsonNames[i] ? translateJsonError(r, jsonNames[i]!) : r));
      for (const i of searchAt) items.splice(i, 0, await this.search!.run(commands[i], principal.user === READONLY_USER));
      await this.afterWrites(commands, planned, items);
      await this.keyspace?.rememberIfSet(commands, items);
      return { replies: items, wrote };
    } finally {
      principal.pool.release(conn, clean);
    }
  }

  private plan(command: Arg[], inTransaction: boolean): Planned {
    // ACL RESTTOKEN is the platform's own subcommand; Redis does not know it.
    if (
      command.length >= 2 &&
      command[0].length === 3 &&
      String(command[0]).toLowerCase() === 'acl' &&
      String(command[1]).toLowerCase() === 'resttoken'
    ) {
      if (command.length !== 4) return { kind: 'reply', reply: errorReply("ERR wrong number of arguments for 'acl|resttoken' command") };
      if (inTransaction) return { kind: 'reply', reply: errorReply('ERR ACL RESTTOKEN is not allowed inside a transaction') };
      return { kind: 'resttoken', user: command[2], password: command[3] };
    }
    if (this.search && command.length > 0 && isSearchCommand(command[0])) return { kind: 'search', command };
    const json = rewriteJsonCommand(command);
    if (json && this.emulateJson) {
      return {
        kind: 'redis',
        command: json.command,
        write: json.write,
        exclusive: false,
        json: json.name,
        library: json.library,
        ...(json.library ? {} : { fallback: command }),
      };
    }
    const emulated = this.fieldExpiryPlan(command, inTransaction);
    if (emulated) return emulated;
    const compat = compatPlan(command, this.serverVersion);
    if (compat && 'error' in compat) return { kind: 'reply', reply: errorReply(compat.error) };
    if (compat) {
      const sent = compat.command;
      const sentSpec = resolveCommand(sent);
      return {
        kind: 'redis',
        command: sent,
        write: sentSpec !== undefined && !sentSpec.flags.has('readonly'),
        exclusive: false,
        json: String(command[0]).toLowerCase(),
      };
    }
    // CONFIG SET notify-keyspace-events (the one parameter the service lets users change) and CONFIG GET.
    const config = configPlan(command);
    if (config && 'error' in config) return { kind: 'reply', reply: errorReply(config.error) };
    if (config) return { kind: 'redis', command: config.command, write: false, exclusive: false };
    const spec = resolveCommand(command);
    const refusal = platformRefusal(command, spec ?? null);
    if (refusal) return { kind: 'reply', reply: errorReply(refusal) };
    if (removesFunctions(spec)) this.jsonLibraryPresent = false;
    if (spec?.name === 'acl|setuser' || spec?.name === 'acl|deluser') {
      const targets = spec.name === 'acl|setuser' ? command.slice(2, 3) : command.slice(2);
      const reserved = targets.map(String).find((u) => this.reservedUsers.includes(u));
      if (reserved) {
        return {
          kind: 'reply',
          reply: errorReply(
            `ERR the user '${reserved}' belongs to the REST tokens and cannot be changed; create another user with ACL SETUSER`,
          ),
        };
      }
    }
    const filtered = this.emulateJson && !inTransaction ? replyFilterFor(command) : undefined;
    return {
      kind: 'redis',
      command: filtered?.command ?? command,
      ...(filtered ? { filter: filtered.filter } : {}),
      // Unknown commands are not writes: Redis refuses them.
      write: spec !== undefined && !spec.flags.has('readonly'),
      exclusive: spec !== undefined && EXCLUSIVE.has(spec.name),
    };
  }

  /**
   * Hash-field expiration commands the data store lacks (field-expiry.ts), and CLIENT SETINFO (checked as
   * Redis checks it, then OK: a REST request has no connection to name). Undefined for other commands.
   */
  private fieldExpiryPlan(command: Arg[], inTransaction: boolean): Planned | undefined {
    if (command.length === 0 || command[0].length > 12) return undefined;
    const name = String(command[0]).toLowerCase();
    if (name === 'client' && !inTransaction && command.length >= 2 && String(command[1]).toLowerCase() === 'setinfo') {
      const error = clientSetinfoError(command);
      return { kind: 'reply', reply: error ? errorReply(error) : Buffer.from('+OK\r\n') };
    }
    const arity = Object.hasOwn(FIELD_EXPIRY_ARITY, name) ? FIELD_EXPIRY_ARITY[name] : undefined; // not 'constructor'
    if (arity === undefined || !this.fieldExpiry || runsNatively(name, this.serverVersion)) return undefined;
    if (command.length < -arity) return { kind: 'reply', reply: errorReply(`ERR wrong number of arguments for '${name}' command`) };
    // A transaction cannot wait for the emulation's steps: HGETEX/HSETEX without a TTL still run there (compat.ts).
    if (inTransaction) return undefined;
    return { kind: 'field-expiry', command, name, write: !READS_EXPIRY.has(name) };
  }

  private async runFieldExpiry(conn: RedisConnection, command: Arg[], name: string): Promise<Buffer> {
    const reply = await this.fieldExpiry!.run(conn, (c, cmds) => this.send(c, cmds), command, name, READS_EXPIRY.has(name));
    // The emulation runs scripts as the user: a refusal names the user's command, not EVAL.
    const text = errorText(reply);
    if (text?.startsWith('NOPERM') && /'eval(_ro)?'/.test(text)) return errorReply(text.replace(/'eval(_ro)?'/, `'${name}'`));
    return reply;
  }

  /**
   * FCALL_RO of a function without `no-writes`: the real service runs it read-only, Redis refuses it. Such
   * calls are run again on a temporary copy of the library flagged `no-writes` (fcall-ro.ts), after the
   * rest of the request (like the JSON library's reload).
   */
  private async fcallRoAnyFunction(conn: RedisConnection, commands: Arg[][], replies: Buffer[]): Promise<void> {
    for (let i = 0; i < commands.length && i < replies.length; i++) {
      if (!isWriteFlagRefusal(commands[i], replies[i])) continue;
      // One copy at a time: two copies of a library cannot be loaded together (function names are global).
      const turn = this.readonlyCopies.then(() => this.fcallRoOnCopy(conn, commands[i], replies, i));
      this.readonlyCopies = turn.catch(() => undefined);
      await turn;
    }
  }

  private readonlyCopies: Promise<void> = Promise.resolve();

  /** Runs one FCALL_RO again on a `no-writes` copy of its function's library, deleted afterwards. */
  private async fcallRoOnCopy(conn: RedisConnection, command: Arg[], replies: Buffer[], i: number): Promise<void> {
    const fn = String(command[1]);
    const [list] = await this.principals.admin((c) => c.send([['FUNCTION', 'LIST', 'WITHCODE']]));
    const lib = libraryOf(list, fn);
    if (!lib) return;
    const copy = READONLY_COPY_PREFIX + lib.name;
    const [loaded] = await this.principals.admin((c) => c.send([['FUNCTION', 'LOAD', 'REPLACE', readonlyCopy(lib.name, lib.code)]]));
    if (errorText(loaded)) return; // a library the copy cannot be made of: Redis' refusal stands
    try {
      [replies[i]] = await this.send(conn, [['FCALL_RO', READONLY_COPY_PREFIX + fn, ...command.slice(2)]]);
    } finally {
      await this.principals.admin((c) => c.send([['FUNCTION', 'DELETE', copy]]));
    }
  }

  /** Deletes hash fields whose expiry time came, before a request runs (field-expiry.ts). */
  private async expireDueFields(): Promise<void> {
    if (!this.fieldExpiry?.active) return;
    try {
      await this.fieldExpiry.expireDue();
    } catch (err) {
      throw storeError(err);
    }
  }

  /** Lets the field-expiry bookkeeping see what writes did (HSET clears a field's TTL, RENAME carries it …). */
  private async afterWrites(commands: Arg[][], plan: Planned[], replies: Buffer[], from = 0): Promise<void> {
    if (!this.fieldExpiry?.active) return;
    for (let i = from; i < plan.length && i < replies.length; i++) {
      const item = plan[i];
      if (item.kind === 'redis' && item.write) await this.fieldExpiry.afterWrite(commands[i], replies[i]);
    }
  }

  /**
   * Replies of JSON commands. NOPERM texts name the user's command. A FUNCTION FLUSH that raced with the
   * check before sending (another request, or earlier in the same pipeline) left "Function not found":
   * the library is loaded again and those commands are sent again (their FCALL did nothing; they then run
   * after the rest of the pipeline, see docs/json.md). A user whose ACL lacks EVAL_RO gets a plain TYPE.
   */
  private async fixJsonReplies(
    conn: RedisConnection,
    plan: Planned[],
    replies: Buffer[],
    jsonAt: Array<string | undefined>,
  ): Promise<void> {
    if (!this.jsonLibrary || !jsonAt.some((n) => n !== undefined)) return;
    const redo: number[] = [];
    let reload = false;
    for (let i = 0; i < replies.length; i++) {
      const item = plan[i];
      if (item.kind !== 'redis' || item.json === undefined) continue;
      if (item.library && isFunctionMissing(replies[i])) {
        reload = true;
        redo.push(i);
      } else if (item.fallback && isNoPermFor(replies[i], 'eval_ro')) {
        item.command = item.fallback;
        redo.push(i);
      }
    }
    if (reload) await this.loadJsonLibrary();
    if (redo.length > 0) {
      const again = await this.send(
        conn,
        redo.map((i) => (plan[i] as { command: Arg[] }).command),
      );
      redo.forEach((i, n) => (replies[i] = again[n]));
    }
    for (let i = 0; i < replies.length; i++) if (jsonAt[i] !== undefined) replies[i] = translateJsonError(replies[i], jsonAt[i]!);
  }

  private async ensureJsonLibrary(conn: RedisConnection): Promise<void> {
    const [reply] = await this.send(conn, [['FCALL_RO', 'respgate_json_ro', '0', 'version']]);
    if (isFunctionMissing(reply)) await this.loadJsonLibrary();
    else this.jsonLibraryPresent = true;
  }

  private async loadJsonLibrary(): Promise<void> {
    try {
      await this.jsonLibrary!.load();
      this.jsonLibraryPresent = true;
    } catch (err) {
      throw storeError(err);
    }
  }

  /** SCAN … TYPE ReJSON-RL|string and FUNCTION LIST as RedisJSON users expect (json/visibility.ts). */
  private async applyReplyFilters(conn: RedisConnection, plan: Planned[], replies: Buffer[]): Promise<void> {
    for (let i = 0; i < plan.length; i++) {
      const item = plan[i];
      if (item.kind !== 'redis' || !item.filter || replies[i][0] === 0x2d) continue;
      if (item.filter.kind === 'function-list') {
        replies[i] = withoutJsonLibrary(replies[i]);
        continue;
      }
      const page = scanKeys(replies[i]);
      if (!page || page.keys.length === 0) continue;
      if (item.filter.kind === 'scan-withtype') {
        const [types] = await this.send(conn, [['EVAL_RO', TYPES_SCRIPT, String(page.keys.length), ...page.keys]]);
        const items = types[0] === 0x2a ? arrayElements(types) : undefined;
        // Without EVAL_RO for this user (or on failure): every key typed by its own TYPE.
        const each =
          items ??
          (
            await this.send(
              conn,
              page.keys.map((k) => ['TYPE', k]),
            )
          ).map((t) => bulkOf(t.toString('latin1', 1, t.length - 2)));
        replies[i] = page.withTypes(each);
        continue;
      }
      const [which] = await this.send(conn, [['EVAL_RO', WHICH_SCRIPT, String(page.keys.length), ...page.keys]]);
      if (which[0] === 0x2d) continue; // no EVAL_RO for this user: Redis' own answer
      const flags = (which.toString('latin1').match(/:(\d)/g) ?? []).map((f) => f === ':1');
      const wantJson = item.filter.want === 'json';
      replies[i] = page.rebuild(flags.map((isJson) => isJson === wantJson));
    }
  }

  /** ACL SETUSER/DELUSER may change or remove a user's password: its tokens must be checked again. */
  private revokeChangedUsers(commands: Arg[][]): void {
    let changed = false;
    for (const command of commands) {
      if (command.length < 3 || String(command[0]).toLowerCase() !== 'acl') continue;
      const sub = String(command[1]).toLowerCase();
      if (sub === 'setuser') this.principals.revokeUser(String(command[2]));
      else if (sub === 'deluser') for (const user of command.slice(2)) this.principals.revokeUser(String(user));
      else continue;
      changed = true;
    }
    if (changed && this.acl.saveAclChanges) void this.saveAcl();
  }

  /** ACL SAVE on the platform's own connection: the users a client changed are in the ACL file before the next stop. */
  private async saveAcl(): Promise<void> {
    try {
      const [reply] = await this.principals.admin((conn) => conn.send([['ACL', 'SAVE']]));
      if (reply[0] === 0x2d)
        this.acl.log?.error({ error: reply.toString('latin1').trim() }, 'ACL SAVE failed: ACL users changed now may be lost at restart');
    } catch (err) {
      this.acl.log?.error({ error: String(err) }, 'ACL SAVE failed: ACL users changed now may be lost at restart');
    }
  }

  /** Whether the data store answers PING (on the platform's own connection, for the health route). */
  async ping(): Promise<boolean> {
    const [reply] = await this.principals.admin((conn) => conn.send([['PING']]));
    return reply.toString('latin1') === '+PONG\r\n';
  }

  private async restToken(user: Arg, password: Arg): Promise<Buffer> {
    const result = await this.principals.restToken(String(user), String(password));
    return 'token' in result ? bulkReply(result.token) : errorReply(result.error);
  }

  private async shared(principal: Principal): Promise<RedisConnection> {
    try {
      return await principal.pool.shared();
    } catch (err) {
      throw storeError(err);
    }
  }

  private async acquire(principal: Principal): Promise<RedisConnection> {
    try {
      return await principal.pool.acquire();
    } catch (err) {
      throw storeError(err);
    }
  }

  private async send(conn: RedisConnection, commands: Arg[][]): Promise<Buffer[]> {
    try {
      return await conn.send(commands);
    } catch (err) {
      throw storeError(err);
    }
  }
}

function storeError(err: unknown): Error {
  const text = String((err as Error)?.message ?? err);
  if (/^(WRONGPASS|NOPERM)/.test(text)) return new CredentialsRevokedError(text);
  if (err instanceof ConnectionLostError) {
    return new StoreUnavailableError('ERR the connection to the data store was lost; the outcome of the commands sent is unknown');
  }
  return new StoreUnavailableError(`ERR the data store is unavailable (${text}); retry when it is back`);
}

/**
 * What `plan` does with every command of this spec, when that is "send it as it is": known to the table,
 * no subcommands (those resolve by their second argument), no platform refusal rule, not exclusive, and
 * none of the rewrites (JSON, compat), reply filters or ACL bookkeeping look at it.
 */
export function plainKindOf(spec: CommandSpec | undefined): 'read' | 'write' | undefined {
  if (!spec || spec.subcommands || spec.platform) return undefined;
  const name = spec.name;
  // SEARCH.* are answered by the platform's search engine.
  if (name.startsWith('search.')) return undefined;
  if (name === 'acl' || EXCLUSIVE.has(name) || compatMayChange(name) || rewritesJsonName(name) || filtersRepliesOf(name)) return undefined;
  return spec.flags.has('readonly') ? 'read' : 'write';
}

/** FUNCTION FLUSH/DELETE/RESTORE may remove the JSON library: it is checked before the next JSON command. */
function removesFunctions(spec: CommandSpec | undefined): boolean {
  return spec?.name === 'function|flush' || spec?.name === 'function|delete' || spec?.name === 'function|restore';
}

function bulkOf(text: string): Buffer {
  return Buffer.from(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
}

function isNoPermFor(reply: Buffer, command: string): boolean {
  const text = errorText(reply);
  return text !== undefined && text.startsWith('NOPERM') && text.includes(`'${command}'`);
}

/** A plain pipeline's RESP on `conn`: its replies joined, or (with `onPiece`) handed there as they arrive. */
function sendPlain(
  conn: RedisConnection,
  resp: Buffer | readonly Buffer[],
  count: number,
  onPiece?: (piece: Buffer) => void,
): Promise<Buffer> {
  if (onPiece) return conn.sendEncodedStreamed(resp, count, onPiece).then(() => EMPTY_REPLIES);
  return conn.sendEncodedJoined(resp, count);
}

function rethrowStoreError(err: unknown): never {
  throw storeError(err);
}

/** The Redis user behind a token no longer accepts its password (it was changed or deleted). */
export class CredentialsRevokedError extends Error {}

/** Commands that hold connection state or block it, so they may not share a pipelined connection. */
const EXCLUSIVE = new Set(['multi', 'exec', 'wait']);
