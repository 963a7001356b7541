// The protocol of a connection and the one way to frame an error reply: shared by the proxy, the
// upstream client, the command data and the platform.

/** RESP2, or RESP3 after HELLO 3. */
export type Protocol = 2 | 3;

/** A text on one line: CR and LF (runs of them) become one space, so it cannot break RESP framing. */
export function oneLine(text: string): string {
  return text.includes('\r') || text.includes('\n') ? text.replace(/[\r\n]+/g, ' ') : text;
}

/** `-<text>\r\n` (the same bytes in RESP2 and RESP3). */
export function errorReply(text: string): Buffer {
  return Buffer.from(`-${oneLine(text)}\r\n`);
}
