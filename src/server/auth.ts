// Client authentication of a RESP port, three modes (docs/security.md); side ports have only the first:
//   password     --requirepass guards the configured upstream token (AUTH <password>);
//   pass-through no upstream token: AUTH <token> is the client's own REST token, checked once with the
//                upstream (a 401 is WRONGPASS) and then carried by every command of the connection;
//   ACL users    --acl-users: AUTH <user> <pass> becomes a token through the upstream's
//                `ACL RESTTOKEN user pass` (cached; fetched again when the upstream revokes it).
// Verdicts are cached under a hash of the secret, never the secret itself, and nothing here logs.
import { cryptoOnUse } from '../crypto-on-use.js';
import { safeEqual } from '../safe-equal.js';
import { CLIENT_TOKEN_REFUSED } from '../upstream/kv-errors.js';
import type { Credential, KvClient } from '../upstream/kv-client.js';

/** What the pass-through and ACL-user modes ask the upstream (a PING, ACL RESTTOKEN). */
export type AuthUpstream = Pick<KvClient, 'pipeline'>;

export const WRONGPASS_TEXT = 'WRONGPASS invalid username-password pair or user is disabled.';

export type AuthOutcome =
  /** Authenticated; `credential` undefined = the configured upstream token. */
  | { ok: true; credential: Credential | undefined }
  /** Refused: the error text to send (WRONGPASS, or the upstream's unavailability). */
  | { ok: false; error: string };

export interface ClientAuthOptions {
  requirepass: string | undefined;
  /** True when no upstream token is configured. */
  passThrough: boolean;
  aclUsers: boolean;
  cacheMs: number;
}

export class ClientAuth {
  /** Token hash → verdict of the upstream and its expiry. */
  private readonly tokenVerdicts = new Map<string, { ok: boolean; until: number }>();
  /** Hash of user and password → the ACL RESTTOKEN token. */
  private readonly aclTokens = new Map<string, string>();

  constructor(
    /** Needed by the pass-through and ACL-user modes only. */
    private readonly client: AuthUpstream | undefined,
    private readonly options: ClientAuthOptions,
  ) {
    if (!client && (options.passThrough || options.aclUsers))
      throw new Error('client authentication by token or ACL user needs an upstream');
  }

  /** Clients must authenticate before running commands. */
  get required(): boolean {
    return this.options.requirepass !== undefined || this.options.passThrough || this.options.aclUsers;
  }

  /** AUTH [user] password (and HELLO AUTH): the outcome, after asking the upstream when the mode needs it. */
  async authenticate(user: string, password: Buffer): Promise<AuthOutcome> {
    const { requirepass, passThrough, aclUsers } = this.options;
    if (user === 'default') {
      if (requirepass !== undefined) {
        return safeEqual(password, requirepass) ? { ok: true, credential: undefined } : { ok: false, error: WRONGPASS_TEXT };
      }
      if (passThrough) return this.checkToken(password.toString('utf8'));
      return aclUsers ? { ok: false, error: WRONGPASS_TEXT } : { ok: true, credential: undefined };
    }
    if (aclUsers) return this.aclLogin(user, password.toString('utf8'));
    return { ok: false, error: WRONGPASS_TEXT };
  }

  /** Pass-through: the upstream says whether the token is valid (a PING; 401 = wrong). */
  private async checkToken(token: string): Promise<AuthOutcome> {
    if (token === '' || /\s/.test(token) || [...token].some((c) => c.charCodeAt(0) < 0x20)) return { ok: false, error: WRONGPASS_TEXT };
    const key = hash(token);
    const now = Date.now();
    const cached = this.tokenVerdicts.get(key);
    if (cached && cached.until > now)
      return cached.ok ? { ok: true, credential: this.tokenCredential(token, key) } : { ok: false, error: WRONGPASS_TEXT };
    const [reply] = await this.client!.pipeline([[Buffer.from('PING')]], { token });
    const text = reply[0] === 0x2d ? reply.toString('utf8', 1).trimEnd() : undefined;
    if (text === CLIENT_TOKEN_REFUSED) {
      this.remember(key, false, now);
      return { ok: false, error: WRONGPASS_TEXT };
    }
    // Any other error (NOPERM for a restricted token) still proves the token was accepted; an
    // unreachable upstream is not a verdict.
    if (text !== undefined && /^ERR upstream (unavailable|timed out|connection failed|failed)/.test(text)) {
      return { ok: false, error: `ERR cannot check the token: ${text.slice(4)}` };
    }
    this.remember(key, true, now);
    return { ok: true, credential: this.tokenCredential(token, key) };
  }

  /**
   * A pass-through token as a credential. It cannot be refreshed; when the upstream refuses it (401:
   * revoked), its cached verdict is dropped, so the next AUTH with it asks the upstream again.
   */
  private tokenCredential(token: string, key: string): Credential {
    return {
      token,
      refresh: () => {
        this.tokenVerdicts.delete(key);
        return Promise.resolve(undefined);
      },
    };
  }

  private remember(key: string, ok: boolean, now: number): void {
    if (this.tokenVerdicts.size > 10_000) this.tokenVerdicts.clear(); // bounded: a flood of wrong tokens
    this.tokenVerdicts.set(key, { ok, until: now + this.options.cacheMs });
  }

  /** ACL users: a token from the upstream's ACL RESTTOKEN, cached; `refresh` asks again after a 401. */
  private async aclLogin(user: string, password: string): Promise<AuthOutcome> {
    const key = hash(`${user}\0${password}`);
    const cached = this.aclTokens.get(key);
    const token = cached ?? (await this.restToken(user, password, key));
    if (typeof token !== 'string') return token;
    const credential = {
      token,
      refresh: async () => {
        this.aclTokens.delete(key);
        const fresh = await this.restToken(user, password, key);
        if (typeof fresh !== 'string') return undefined;
        credential.token = fresh;
        return fresh;
      },
    };
    return { ok: true, credential };
  }

  private async restToken(user: string, password: string, key: string): Promise<string | { ok: false; error: string }> {
    const [reply] = await this.client!.pipeline([['ACL', 'RESTTOKEN', user, password].map((s) => Buffer.from(s))]);
    if (reply[0] === 0x24 /* $ */) {
      const start = reply.indexOf('\r\n') + 2;
      const token = reply.toString('utf8', start, reply.length - 2);
      if (this.aclTokens.size > 10_000) this.aclTokens.clear();
      this.aclTokens.set(key, token);
      return token;
    }
    const text = reply.toString('utf8', 1).trimEnd();
    // The upstream's "wrong password or user does not exist" is Redis' WRONGPASS to the client.
    if (/wrong password|does not exist|WRONGPASS/i.test(text)) return { ok: false, error: WRONGPASS_TEXT };
    return { ok: false, error: `ERR cannot check the user: ${text.replace(/^ERR /, '')}` };
  }
}

function hash(secret: string): string {
  return cryptoOnUse().createHash('sha256').update(secret).digest('base64url');
}
