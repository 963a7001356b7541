// Texts that came from outside (upstream bodies, system errors) never carry the token.

/** `text` with every occurrence of `secret` replaced by `[redacted]` (secrets under 4 characters are not searched). */
export function redact(text: string, secret: string): string {
  return secret.length >= 4 && text.includes(secret) ? text.split(secret).join('[redacted]') : text;
}
