// The CLIENT LIST / CLIENT INFO line of one connection, in Redis 7.0's field order
// (networking.c catClientInfoString).
import type { Connection } from '../context.js';

export function clientLine(c: Connection): string {
  // lastInteractionAt comes from the monotonic clock (performance.timeOrigin + now()), which may run a
  // few ms ahead of Date.now(): a client that just sent its command is idle 0, never -1.
  const now = Date.now();
  return (
    `id=${c.id} addr=${c.address} laddr=${c.localAddress} fd=${c.fd} ` +
    `name=${c.name} age=${Math.floor((now - c.createdAt) / 1000)} idle=${Math.max(0, Math.floor((now - c.lastInteractionAt) / 1000))} flags=${clientFlags(c)} db=${c.db} ` +
    `sub=${c.pushes.channelCount} psub=${c.pushes.patternCount} ssub=${c.pushes.shardCount} multi=${c.queuedCommands} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 ` +
    `events=r cmd=${c.lastCommand} user=default redir=-1 resp=${c.protocol}\n`
  );
}

/** Flags in Redis 7.0's order: O monitor, P pubsub, x multi, b blocked (BLPOP…); N for none. */
function clientFlags(c: Connection): string {
  let flags = '';
  if (c.pushes.monitoring) flags += 'O';
  if (c.pushes.subscriptionCount > 0) flags += 'P';
  if (c.queuedCommands >= 0) flags += 'x';
  if (c.isBlocked) flags += 'b';
  return flags || 'N';
}
