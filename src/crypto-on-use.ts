// node:crypto for the few that need it (token and signing-key generators, AUTH's constant-time compare
// and cache hashes, script SHA1s), loaded at their first call rather than with the proxy: importing it
// costs ~7 ms of a start, most of it Node's web crypto under its ES-module facade (docs/decisions.md, 2026-11-28).
export function cryptoOnUse(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}
