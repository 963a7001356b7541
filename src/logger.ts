// One pino logger for every role. Secrets are redacted by key name wherever they appear, and the
// code never interpolates a token or password into a message.
import { pino, type Logger } from 'pino';

export type { Logger };

const SECRET_KEYS = ['token', 'readonlyToken', 'password', 'authorization', 'upstreamToken', 'pass', 'secret'];

export function createLogger(level: string, name = 'respgate'): Logger {
  return pino(
    {
      name,
      level,
      redact: { paths: [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`)], censor: '[redacted]' },
      base: undefined,
    },
    pino.destination(2),
  );
}
