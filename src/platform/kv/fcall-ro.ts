// FCALL_RO as the real service runs it: any function may be called read-only, and a write inside it fails
// (the SDK's functions.integration.test.ts: "FCALL_RO allows a function that only reads even if it is not
// declared no-writes"). Redis refuses FCALL_RO of a function without the `no-writes` flag before it runs.
// The platform then loads a copy of the function's library whose functions are all flagged `no-writes`
// (so Redis itself enforces read-only: "Write commands are not allowed from read-only scripts"), calls
// the copy with FCALL_RO as the user, and deletes the copy again.
import type { Arg } from '../../resp/request-writer.js';
import { arrayElements } from '../../resp/reply-scanner.js';
import { errorText } from '../redis/connection.js';

/** Prefix of the temporary read-only copies (never shown by FUNCTION LIST, see visibility.ts). */
export const READONLY_COPY_PREFIX = 'respgate_ro__';

export const WRITE_FLAG_REFUSAL = 'ERR Can not execute a script with write flag using *_ro command.';

/** Whether this reply is Redis' refusal of FCALL_RO for a function without `no-writes`. */
export function isWriteFlagRefusal(command: Arg[], reply: Buffer): boolean {
  return command.length >= 3 && String(command[0]).toLowerCase() === 'fcall_ro' && errorText(reply) === WRITE_FLAG_REFUSAL;
}

function text(b: Buffer): string {
  const headerEnd = b.indexOf(13);
  return b.toString('utf8', headerEnd + 2, b.length - 2);
}

/** The library (name and code) that holds `fn`, from a FUNCTION LIST WITHCODE reply. */
export function libraryOf(listReply: Buffer, fn: string): { name: string; code: string } | undefined {
  for (const lib of arrayElements(listReply) ?? []) {
    const fields = arrayElements(lib) ?? [];
    let name = '';
    let code = '';
    let has = false;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const key = text(fields[i]);
      if (key === 'library_name') name = text(fields[i + 1]);
      else if (key === 'library_code') code = text(fields[i + 1]);
      else if (key === 'functions') {
        for (const f of arrayElements(fields[i + 1]) ?? []) {
          const props = arrayElements(f) ?? [];
          for (let j = 0; j + 1 < props.length; j += 2) if (text(props[j]) === 'name' && text(props[j + 1]) === fn) has = true;
        }
      }
    }
    if (has) return { name, code };
  }
  return undefined;
}

/**
 * The library's code as a copy named `respgate_ro__<name>` whose functions are registered as
 * `respgate_ro__<function>` with the `no-writes` flag: its `redis.register_function` calls go to a local
 * function that renames and flags them (a load has no setmetatable, so the text is rewritten).
 */
export function readonlyCopy(name: string, code: string): string {
  const body = code.replace(/^#![^\n]*\n?/, '').replace(/\bredis\s*\.\s*register_function\b/g, '__respgate_register');
  const shim = [
    // A load may use neither type() nor pairs(): the two forms are told apart by the second argument.
    'local function __respgate_register(a, b)',
    '  local spec = a',
    '  if b ~= nil then spec = { function_name = a, callback = b } end',
    '  return redis.register_function({',
    `    function_name = '${READONLY_COPY_PREFIX}' .. spec.function_name,`,
    '    callback = spec.callback,',
    '    description = spec.description,',
    "    flags = { 'no-writes' },",
    '  })',
    'end',
  ].join(' ');
  return `#!lua name=${READONLY_COPY_PREFIX}${name}\n${shim}\n${body}`;
}
