// JSON.* commands become FCALL (writes) or FCALL_RO (reads) of the JSON function library, so redis-server
// runs each one atomically. TYPE becomes a library call too, so JSON documents answer `ReJSON-RL`.
import type { Arg } from '../../../resp/request-writer.js';

/** The marker in front of every stored document (MAGIC in library.lua). */
export const JSON_MAGIC_LUA = '\0respgate:json:1\0';

/** Where a JSON command's keys are, among its arguments (the command name is args[0]). */
type KeysOf = (args: Arg[]) => Arg[];

interface JsonCommand {
  /** The library's name for it (JSON.FORGET is JSON.DEL). */
  sub: string;
  write: boolean;
  keys: KeysOf;
}

const first: KeysOf = (a) => a.slice(1, 2);
const JSON_COMMANDS: Record<string, JsonCommand> = {
  'json.set': { sub: 'set', write: true, keys: first },
  'json.get': { sub: 'get', write: false, keys: first },
  'json.mget': { sub: 'mget', write: false, keys: (a) => a.slice(1, -1) },
  'json.mset': { sub: 'mset', write: true, keys: (a) => a.slice(1).filter((_, i) => i % 3 === 0) },
  'json.merge': { sub: 'merge', write: true, keys: first },
  'json.del': { sub: 'del', write: true, keys: first },
  'json.forget': { sub: 'del', write: true, keys: first },
  'json.type': { sub: 'type', write: false, keys: first },
  'json.clear': { sub: 'clear', write: true, keys: first },
  'json.toggle': { sub: 'toggle', write: true, keys: first },
  'json.numincrby': { sub: 'numincrby', write: true, keys: first },
  'json.nummultby': { sub: 'nummultby', write: true, keys: first },
  'json.strappend': { sub: 'strappend', write: true, keys: first },
  'json.strlen': { sub: 'strlen', write: false, keys: first },
  'json.arrappend': { sub: 'arrappend', write: true, keys: first },
  'json.arrindex': { sub: 'arrindex', write: false, keys: first },
  'json.arrinsert': { sub: 'arrinsert', write: true, keys: first },
  'json.arrlen': { sub: 'arrlen', write: false, keys: first },
  'json.arrpop': { sub: 'arrpop', write: true, keys: first },
  'json.arrtrim': { sub: 'arrtrim', write: true, keys: first },
  'json.objkeys': { sub: 'objkeys', write: false, keys: first },
  'json.objlen': { sub: 'objlen', write: false, keys: first },
  'json.resp': { sub: 'resp', write: false, keys: first },
  'json.debug': { sub: 'debug', write: false, keys: (a) => (a.length > 2 && String(a[1]).toLowerCase() === 'memory' ? a.slice(2, 3) : []) },
};

export interface JsonRewrite {
  /** What is sent to redis-server. */
  command: Arg[];
  write: boolean;
  /** The user's command name in lowercase (`json.set`, `type`), for error texts. */
  name: string;
  /** Whether it needs the JSON function library (TYPE is a script of its own, sent whole every time). */
  library: boolean;
}

/**
 * TYPE, answering `ReJSON-RL` for JSON documents (strings that start with the library's marker, see
 * library.lua). A script sent whole (EVAL_RO), so it works even right after a user's FUNCTION FLUSH.
 */
export const TYPE_SCRIPT = [
  "local t = redis.call('TYPE', KEYS[1])['ok']",
  `if t == 'string' and redis.call('GETRANGE', KEYS[1], 0, ${JSON_MAGIC_LUA.length - 1}) == '${JSON_MAGIC_LUA.replace(/\0/g, '\\0')}' then t = 'ReJSON-RL' end`,
  'return {ok = t}',
].join('\n');

function lowerName(arg: Arg): string | undefined {
  if (arg.length > 16) return undefined;
  return (typeof arg === 'string' ? arg : arg.toString('latin1')).toLowerCase();
}

/** The FCALL form of a JSON command or of `TYPE key`; undefined for every other command. */
/** Whether rewriteJsonCommand may rewrite a command of this lowercase name (TYPE and JSON.*). */
export function rewritesJsonName(name: string): boolean {
  return name === 'type' || Object.hasOwn(JSON_COMMANDS, name);
}

export function rewriteJsonCommand(command: Arg[]): JsonRewrite | undefined {
  if (command.length === 0) return undefined;
  const name = lowerName(command[0]);
  if (name === undefined) return undefined;
  if (name === 'type') {
    if (command.length !== 2) return undefined; // Redis answers the arity error itself
    return { command: ['EVAL_RO', TYPE_SCRIPT, '1', command[1]], write: false, name, library: false };
  }
  // Own keys only: a command named `constructor` or `toString` is not a JSON command.
  const spec = Object.hasOwn(JSON_COMMANDS, name) ? JSON_COMMANDS[name] : undefined;
  if (!spec) return undefined;
  const keys = spec.keys(command);
  return {
    library: true,
    command: [
      spec.write ? 'FCALL' : 'FCALL_RO',
      spec.write ? 'respgate_json' : 'respgate_json_ro',
      String(keys.length),
      ...keys,
      spec.sub,
      ...command.slice(1),
    ],
    write: spec.write,
    name,
  };
}

/** A NOPERM for the FCALL names the user's command instead (`… run the 'json.set' command`). */
export function translateJsonError(reply: Buffer, name: string): Buffer {
  if (reply[0] !== 0x2d) return reply;
  const text = reply.toString('utf8');
  if (text.startsWith('-NOPERM') && /'(fcall|eval)(_ro)?'/.test(text))
    return Buffer.from(text.replace(/'(fcall|eval)(_ro)?'/, `'${name}'`));
  return reply;
}
