// Identifiers in the service's style: a prefix and base58 text (msg_…, scd_…), and DLQ ids made
// of a time and a sequence like the service's stream-style ids. Random bytes come from a pool
// refilled 16 KB at a time: one id per message, so one getrandom call per id was measurable.
import { randomBytes } from 'node:crypto';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const POOL_SIZE = 16 * 1024;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/** `n` fresh random bytes (a view into the pool: use them before the next call). */
export function randomChunk(n: number): Buffer {
  if (offset + n > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  offset += n;
  return pool.subarray(offset - n, offset);
}

export function newId(prefix: string, length = 26): string {
  let out = prefix;
  for (const b of randomChunk(length)) out += BASE58[b % 58];
  return out;
}

let sequence = 0;
export function newDlqId(): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${Date.now()}-${sequence * 1000 + (randomChunk(2).readUInt16BE(0) % 1000)}`;
}
