// The one comparison of secrets (passwords, tokens, API keys) in respgate: constant time for equal
// lengths, so the time an answer takes does not tell how much of a guess was right. The length is not
// hidden (as in Redis' time-independent compare of the same name, which also leaks only it).
import { cryptoOnUse } from './crypto-on-use.js';

export function safeEqual(given: string | Buffer, expected: string | Buffer): boolean {
  const a = typeof given === 'string' ? Buffer.from(given) : given;
  const b = typeof expected === 'string' ? Buffer.from(expected) : expected;
  return a.length === b.length && cryptoOnUse().timingSafeEqual(a, b);
}
