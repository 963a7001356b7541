// The upstream's own request-size error says nothing about respgate: a client that sent a value under
// --proto-max-bulk-len learns here which limit it met and how to raise it.
const PREFIX = Buffer.from('-ERR max request size exceeded');
const HINT =
  ' (respgate sends each command in one upstream request, where JSON escaping can grow control bytes up to 6x:' +
  ' a respgate platform raises the limit with --max-request-size, Upstash with its plan)';

/** Rewrites, in place, the upstream's "max request size exceeded" errors of one call. */
export function explainRequestSizeErrors(replies: Buffer[]): void {
  for (let i = 0; i < replies.length; i++) {
    const r = replies[i];
    if (r.length > PREFIX.length && r[0] === 0x2d && r.compare(PREFIX, 0, PREFIX.length, 0, PREFIX.length) === 0) {
      const text = r.toString('utf8', 0, r.length - 2);
      replies[i] = Buffer.from(text + HINT + '\r\n');
    }
  }
}
