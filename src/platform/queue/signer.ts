// Upstash-Signature: a JWT (HS256, keyed with the signing key's text) over the destination URL and
// the SHA-256 of the body, exactly as the service signs, so the SDK's Receiver verifies it.
import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';

/** Lifetime of a signature, as the service's: five minutes. */
const LIFETIME_S = 300;

export class Signer {
  private key: Uint8Array;

  constructor(currentKey: string) {
    this.key = new TextEncoder().encode(currentKey);
  }

  setKey(currentKey: string): void {
    this.key = new TextEncoder().encode(currentKey);
  }

  sign(url: string, body: Buffer): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ body: createHash('sha256').update(body).digest('base64url') + bodyPadding })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer('Upstash')
      .setSubject(url)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + LIFETIME_S)
      .setJti('jwt_' + randomBytes(16).toString('base64url'))
      .sign(this.key);
  }
}

/** The service writes the base64url SHA-256 with its '=' padding (one, for 32 bytes). */
const bodyPadding = '=';
