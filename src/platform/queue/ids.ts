// Identifiers in the service's style: a prefix and base58 text (msg_…, scd_…), and DLQ ids made
// of a time and a sequence like the service's stream-style ids.
import { randomBytes } from 'node:crypto';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function newId(prefix: string, length = 26): string {
  let out = prefix;
  for (const b of randomBytes(length)) out += BASE58[b % 58];
  return out;
}

let sequence = 0;
export function newDlqId(): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${Date.now()}-${sequence}${randomBytes(3).readUIntBE(0, 3) % 1000}`;
}
