// Hash-field expiration (Redis 7.4/8: HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME,
// HPEXPIRETIME, HPERSIST, HGETEX and HSETEX with a TTL) on a data store too old to have it (7.0.15).
// The expiry times live beside the data: in this process (a map, the source of truth while it runs) and
// in the internal store (to survive a restart). A field whose time came is deleted from the data store
// before the next request runs (lazy) and by a timer every 100 ms (active), so it is never visible
// through the platform. What this cannot do: docs/platform-kv.md "Hash-field expiration on 7.0.15".
import type { Arg } from '../../resp/request-writer.js';
import { errorReply } from '../../resp/protocol.js';
import { arrayElements } from '../../resp/reply-scanner.js';
import { errorText, type RedisConnection } from '../redis/connection.js';
import type { InternalStore } from '../internal-store.js';
import { parseExpire, parseFieldList, parseFieldOptions, type Condition, type ExpireArgs } from './field-expiry-args.js';

/** The commands emulated here (lowercase), with Redis 8's arity. */
export const FIELD_EXPIRY_ARITY: Readonly<Record<string, number>> = {
  hexpire: -6,
  hpexpire: -6,
  hexpireat: -6,
  hpexpireat: -6,
  httl: -5,
  hpttl: -5,
  hexpiretime: -5,
  hpexpiretime: -5,
  hpersist: -5,
  hgetex: -5,
  hsetex: -6,
};

const SETS_EXPIRY = new Set(['hexpire', 'hpexpire', 'hexpireat', 'hpexpireat']);

/** The emulated commands that change nothing (they run as EVAL_RO, so the Read Only token may use them). */
export const READS_EXPIRY: ReadonlySet<string> = new Set(['httl', 'hpttl', 'hexpiretime', 'hpexpiretime']);

const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

// The key's type and the given fields' values: {0} no key, {1, v1|nil, …} a hash; WRONGTYPE otherwise.
const STATE_SCRIPT = `local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return {0} end
if t ~= 'hash' then return redis.error_reply('${WRONGTYPE}') end
local out = {1}
if #ARGV > 0 then
  local v = redis.call('HMGET', KEYS[1], unpack(ARGV))
  for i = 1, #ARGV do out[i + 1] = v[i] end
end
return out`;

// Deletes fields of a hash (nothing when the key is not a hash any more).
const DELETE_SCRIPT = `if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then return 0 end
return redis.call('HDEL', KEYS[1], unpack(ARGV))`;

// HSETEX's write: FNX/FXX checked and the fields set in one step; 1 when set, 0 when the condition stopped it.
const SET_SCRIPT = `local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'none' and t ~= 'hash' then return redis.error_reply('${WRONGTYPE}') end
local cond, n = ARGV[1], 0
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then n = n + 1 end
end
if cond == 'FNX' and n > 0 then return 0 end
if cond == 'FXX' and n < (#ARGV - 1) / 2 then return 0 end
local args = {}
for i = 2, #ARGV do args[#args + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(args))
return 1`;

const INTERNAL_KEY = 'respgate:hash-field-expiry';

const bin = (a: Arg): string => (typeof a === 'string' ? Buffer.from(a) : a).toString('latin1');
const raw = (s: string): Buffer => Buffer.from(s, 'latin1');
const member = (key: string, field: string): string => `${raw(key).toString('base64')}:${raw(field).toString('base64')}`;

function intArray(values: number[]): Buffer {
  return Buffer.from(`*${values.length}\r\n${values.map((v) => `:${v}\r\n`).join('')}`);
}

function arrayOf(items: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from(`*${items.length}\r\n`), ...items]);
}

/** Runs a command on the user's connection, as the user (so ACL rules apply), and answers its reply. */
export type Send = (conn: RedisConnection, commands: Arg[][]) => Promise<Buffer[]>;

export class FieldExpiry {
  /** key → field → absolute expiry (ms); keys and fields as latin1 strings of their bytes. */
  private readonly byKey = new Map<string, Map<string, number>>();
  private timer: NodeJS.Timeout | undefined;
  private purging: Promise<void> | undefined;

  constructor(
    private readonly internal: InternalStore,
    /** The data store as the platform's own user (for expiry, which no user asked for). */
    private readonly admin: (commands: Arg[][]) => Promise<Buffer[]>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Loads the expiry times kept in the internal store, and starts the active expiry. */
  async init(): Promise<void> {
    const conn = await this.internal.pool.shared();
    const [reply] = await conn.send([['HGETALL', INTERNAL_KEY]]);
    const items = arrayElements(reply) ?? [];
    for (let i = 0; i + 1 < items.length; i += 2) {
      const [k, f] = bulk(items[i]).split(':');
      this.remember(Buffer.from(k, 'base64').toString('latin1'), Buffer.from(f, 'base64').toString('latin1'), Number(bulk(items[i + 1])));
    }
    this.timer = setInterval(() => void this.expireDue().catch(() => undefined), 100);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Whether any field has an expiry time (then writes take the general path, for the hooks). */
  get active(): boolean {
    return this.byKey.size > 0;
  }

  /** Deletes every field whose time came (before a request runs, and every 100 ms). */
  async expireDue(): Promise<void> {
    if (this.byKey.size === 0) return;
    if (this.purging) return this.purging;
    const now = this.now();
    const due = new Map<string, string[]>();
    for (const [key, fields] of this.byKey) for (const [field, at] of fields) if (at <= now) due.set(key, [...(due.get(key) ?? []), field]);
    if (due.size === 0) return;
    this.purging = (async () => {
      const keys = [...due.keys()];
      await this.admin(keys.map((k) => ['EVAL', DELETE_SCRIPT, '1', raw(k), ...due.get(k)!.map(raw)]));
      await this.forget(keys.flatMap((k) => due.get(k)!.map((f) => [k, f] as [string, string])));
    })().finally(() => (this.purging = undefined));
    return this.purging;
  }

  /** Runs one emulated command (name lowercase, arity checked) on the user's connection. */
  async run(conn: RedisConnection, send: Send, command: Arg[], name: string, readonly: boolean): Promise<Buffer> {
    await this.expireDue();
    const now = this.now();
    const key = command[1];
    if (name === 'hsetex') return this.hsetex(conn, send, command, now);
    const parsed =
      name === 'hgetex'
        ? parseFieldOptions(command, name, now)
        : SETS_EXPIRY.has(name)
          ? parseExpire(command, name, now)
          : parseFieldList(command);
    // Redis checks the key's type before the arguments.
    const fields = 'error' in parsed ? [] : parsed.fields;
    const [state] = await send(conn, [[readonly ? 'EVAL_RO' : 'EVAL', STATE_SCRIPT, '1', key, ...fields]]);
    if (errorText(state)) return state;
    if ('error' in parsed) return this.lenient(command, name, now, state) ?? errorReply(parsed.error);
    const items = arrayElements(state)!;
    const exists = items[0].toString('latin1', 1, 2) === '1';
    const values = items.slice(1);
    const k = bin(key);
    const has = (i: number) => exists && values[i][1] !== 0x2d; // not a nil bulk ($-1)
    if (name === 'hgetex') {
      if (!exists) return arrayOf(fields.map(() => Buffer.from('$-1\r\n')));
      const opts = parsed as { expiry?: number | 'persist' | 'keep' };
      if (opts.expiry !== undefined) {
        const live = fields.map((f, i) => (has(i) ? bin(f) : undefined)).filter((f): f is string => f !== undefined);
        if (opts.expiry === 'persist') await this.forget(live.map((f) => [k, f]));
        else if (typeof opts.expiry === 'number') await this.setAll(conn, send, k, live, opts.expiry, now);
      }
      return arrayOf(values);
    }
    if (name === 'hpersist') {
      const out = fields.map((f, i) => (!has(i) ? -2 : this.get(k, bin(f)) === undefined ? -1 : 1));
      await this.forget(fields.filter((_, i) => out[i] === 1).map((f) => [k, bin(f)]));
      return intArray(out);
    }
    if (SETS_EXPIRY.has(name)) {
      const { at, cond } = parsed as ExpireArgs;
      return this.expire(conn, send, k, fields, has, at, cond, now);
    }
    // HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME
    return intArray(
      fields.map((f, i) => {
        if (!has(i)) return -2;
        const at = this.get(k, bin(f));
        if (at === undefined) return -1;
        if (name === 'httl') return Math.floor((at + 999 - now) / 1000);
        if (name === 'hpttl') return at - now;
        return name === 'hexpiretime' ? Math.floor(at / 1000) : at;
      }),
    );
  }

  /**
   * The real service answers -2 per field for a key that does not exist even when the time is beyond Redis'
   * largest (the SDK's pipeline test sends HEXPIREAT with milliseconds as seconds); Redis 8 refuses it.
   */
  private lenient(command: Arg[], name: string, now: number, state: Buffer): Buffer | undefined {
    if (!SETS_EXPIRY.has(name) || !state.toString('latin1').startsWith('*1\r\n:0')) return undefined;
    const time = Number(String(command[2]));
    if (!Number.isSafeInteger(time) || time < 0) return undefined;
    const again = parseExpire([command[0], command[1], '0', ...command.slice(3)], name, now);
    return 'error' in again ? undefined : intArray(again.fields.map(() => -2));
  }

  /** HEXPIRE family: per field -2 no field, 0 condition not met, 1 set, 2 deleted (the time has come). */
  private async expire(
    conn: RedisConnection,
    send: Send,
    k: string,
    fields: Arg[],
    has: (i: number) => boolean,
    at: number,
    cond: Condition,
    now: number,
  ): Promise<Buffer> {
    const out = fields.map((f, i) => {
      if (!has(i)) return -2;
      const prev = this.get(k, bin(f));
      if (prev === undefined) {
        if (cond === 'XX' || cond === 'GT') return 0; // no expiry counts as infinite
      } else if ((cond === 'GT' && prev >= at) || (cond === 'LT' && prev <= at) || cond === 'NX') return 0;
      return at <= now ? 2 : 1;
    });
    const gone = fields.filter((_, i) => out[i] === 2).map(bin);
    if (gone.length > 0) await send(conn, [['EVAL', DELETE_SCRIPT, '1', raw(k), ...gone.map(raw)]]);
    await this.forget(gone.map((f) => [k, f]));
    await this.remember(k, fields.filter((_, i) => out[i] === 1).map(bin), at);
    return intArray(out);
  }

  /** Sets one expiry on existing fields (HGETEX, HSETEX): a time already past deletes them. */
  private async setAll(conn: RedisConnection, send: Send, k: string, fields: string[], at: number, now: number): Promise<void> {
    if (fields.length === 0) return;
    if (at <= now) {
      await send(conn, [['EVAL', DELETE_SCRIPT, '1', raw(k), ...fields.map(raw)]]);
      await this.forget(fields.map((f) => [k, f]));
    } else await this.remember(k, fields, at);
  }

  private async hsetex(conn: RedisConnection, send: Send, command: Arg[], now: number): Promise<Buffer> {
    const parsed = parseFieldOptions(command, 'hsetex', now);
    if ('error' in parsed) return errorReply(parsed.error);
    const [reply] = await send(conn, [['EVAL', SET_SCRIPT, '1', command[1], parsed.cond ?? '', ...parsed.fields]]);
    if (errorText(reply) || reply.toString('latin1') !== ':1\r\n') return reply;
    const k = bin(command[1]);
    const fields = parsed.fields.filter((_, i) => i % 2 === 0).map(bin);
    if (typeof parsed.expiry === 'number') await this.setAll(conn, send, k, fields, parsed.expiry, now);
    else if (parsed.expiry !== 'keep') await this.forget(fields.map((f) => [k, f]));
    return reply;
  }

  /**
   * After a command that is not emulated ran (with its reply): what it did to fields or keys with an
   * expiry. HSET/HMSET/HDEL/HGETDEL/HSETNX clear the expiry of the fields they set or delete (Redis: a
   * field set again has no TTL); RENAME/COPY carry them to the new key; FLUSHALL/FLUSHDB forget all; any
   * other write that names a key with expiring fields forgets them unless the key is still a hash.
   */
  async afterWrite(command: Arg[], reply: Buffer): Promise<void> {
    if (this.byKey.size === 0 || command.length === 0 || errorText(reply) !== undefined) return;
    const name = bin(command[0]).toLowerCase();
    if (name === 'flushall' || name === 'flushdb')
      return this.forget([...this.byKey].flatMap(([k, fs]) => [...fs.keys()].map((f) => [k, f] as [string, string])));
    const k = command.length > 1 ? bin(command[1]) : '';
    switch (name) {
      case 'hset':
      case 'hmset':
        return this.forget(
          command
            .slice(2)
            .filter((_, i) => i % 2 === 0)
            .map((f) => [k, bin(f)]),
        );
      case 'hdel':
        return this.forget(command.slice(2).map((f) => [k, bin(f)]));
      case 'hgetdel':
        return this.forget(command.slice(4).map((f) => [k, bin(f)]));
      case 'hsetnx':
      case 'hincrby':
      case 'hincrbyfloat':
        return; // HSETNX sets only a field that did not exist; increments keep the TTL (as Redis 8)
      case 'rename':
      case 'renamenx':
      case 'copy':
        return this.carry(name, command, reply);
    }
    const named = command
      .slice(1)
      .map(bin)
      .filter((a) => this.byKey.has(a));
    if (named.length === 0) return;
    const types = await this.admin(named.map((a) => ['TYPE', raw(a)]));
    const lost = named.filter((_, i) => types[i].toString('latin1') !== '+hash\r\n');
    await this.forget(lost.flatMap((a) => [...(this.byKey.get(a)?.keys() ?? [])].map((f) => [a, f] as [string, string])));
  }

  private async carry(name: string, command: Arg[], reply: Buffer): Promise<void> {
    const done = name === 'rename' ? reply.toString('latin1') === '+OK\r\n' : reply.toString('latin1') === ':1\r\n';
    if (!done || command.length < 3) return;
    const [src, dst] = [bin(command[1]), bin(command[2])];
    const moved = [...(this.byKey.get(src) ?? [])];
    await this.forget([...(this.byKey.get(dst)?.keys() ?? [])].map((f) => [dst, f]));
    if (name !== 'copy') await this.forget(moved.map(([f]) => [src, f]));
    for (const [f, at] of moved) await this.remember(dst, [f], at);
  }

  private get(k: string, f: string): number | undefined {
    return this.byKey.get(k)?.get(f);
  }

  private async remember(k: string, fields: string[] | string, at: number): Promise<void> {
    const list = typeof fields === 'string' ? [fields] : fields;
    if (list.length === 0) return;
    let m = this.byKey.get(k);
    if (!m) this.byKey.set(k, (m = new Map()));
    for (const f of list) m.set(f, at);
    if (typeof fields === 'string') return; // loading: already stored
    const conn = await this.internal.pool.shared();
    await conn.send([['HSET', INTERNAL_KEY, ...list.flatMap((f) => [member(k, f), String(at)])]]);
  }

  private async forget(pairs: Array<[string, string]>): Promise<void> {
    const known = pairs.filter(([k, f]) => this.byKey.get(k)?.has(f));
    if (known.length === 0) return;
    for (const [k, f] of known) {
      const m = this.byKey.get(k)!;
      m.delete(f);
      if (m.size === 0) this.byKey.delete(k);
    }
    const conn = await this.internal.pool.shared();
    await conn.send([['HDEL', INTERNAL_KEY, ...known.map(([k, f]) => member(k, f))]]);
  }
}

function bulk(reply: Buffer): string {
  const headerEnd = reply.indexOf(13);
  return reply.toString('latin1', headerEnd + 2, reply.length - 2);
}
