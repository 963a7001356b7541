// Tokens and permissions: Read Only token, ACL RESTTOKEN, users the platform relies on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { command, kv, startTestPlatform } from '../helpers/platform.js';

let p: RunningPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
  await kv(p, '/set/acl:k/v');
});
afterAll(async () => {
  await p?.stop();
});

describe('Read Only token', () => {
  it('runs read commands', async () => {
    expect((await kv(p, '/get/acl:k', { token: p.readonlyToken })).json).toEqual({ result: 'v' });
    expect((await kv(p, '/exists/acl:k', { token: p.readonlyToken })).json).toEqual({ result: 1 });
  });

  it('refuses writes, KEYS, SCAN and scripts with a NOPERM error', async () => {
    for (const cmd of [['SET', 'acl:k', 'x'], ['DEL', 'acl:k'], ['KEYS', '*'], ['SCAN', '0'], ['EVAL', 'return 1', '0'], ['FLUSHALL']]) {
      const r = await command(p, cmd, { token: p.readonlyToken });
      expect(r.status, cmd[0]).toBe(400);
      expect(r.json.error, cmd[0]).toMatch(new RegExp(`^NOPERM .*'${cmd[0].toLowerCase()}'`));
    }
    expect((await kv(p, '/get/acl:k')).json).toEqual({ result: 'v' });
  });

  it('refuses writes inside pipelines and transactions', async () => {
    const pipe = await kv(p, '/pipeline', {
      token: p.readonlyToken,
      body: JSON.stringify([
        ['GET', 'acl:k'],
        ['SET', 'acl:k', 'y'],
      ]),
    });
    expect(pipe.json).toEqual([{ result: 'v' }, { error: expect.stringMatching(/^NOPERM /) }]);
    const tx = await kv(p, '/multi-exec', {
      token: p.readonlyToken,
      body: JSON.stringify([
        ['GET', 'acl:k'],
        ['SET', 'acl:k', 'y'],
      ]),
    });
    expect(tx.status).toBe(400);
    expect(tx.json.error).toMatch(/^NOPERM /);
    expect((await kv(p, '/get/acl:k')).json).toEqual({ result: 'v' });
  });
});

describe('ACL RESTTOKEN', () => {
  it('returns a token that carries the permissions of that ACL user', async () => {
    expect((await command(p, ['ACL', 'SETUSER', 'reader', 'on', '>secret1', '~acl:*', '+get', '+set'])).json).toEqual({ result: 'OK' });
    const t = await command(p, ['ACL', 'RESTTOKEN', 'reader', 'secret1']);
    expect(t.status).toBe(200);
    const token = t.json.result as string;
    expect(token).toMatch(/^A[\w-]{20,}$/);
    expect((await kv(p, '/set/acl:own/1', { token })).json).toEqual({ result: 'OK' });
    const other = await kv(p, '/get/other:key', { token });
    expect(other.status).toBe(400);
    expect(other.json.error).toMatch(/^NOPERM .*key/);
    const cmd = await kv(p, '/del/acl:own', { token });
    expect(cmd.json.error).toMatch(/^NOPERM .*'del'/);
    // The same pair gives the same token.
    expect((await command(p, ['ACL', 'RESTTOKEN', 'reader', 'secret1'])).json.result).toBe(token);
  });

  it('answers an ERR text for an unknown user or a wrong password', async () => {
    for (const [user, pass] of [
      ['nobody', 'x'],
      ['reader', 'wrong'],
    ]) {
      const r = await command(p, ['ACL', 'RESTTOKEN', user, pass]);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: `ERR Wrong password or user "${user}" does not exist` });
    }
    const arity = await command(p, ['ACL', 'RESTTOKEN', 'reader']);
    expect(arity.json.error).toMatch(/wrong number of arguments/);
  });

  it('revokes the token when the user password changes', async () => {
    await command(p, ['ACL', 'SETUSER', 'temp', 'on', '>pw1', '~*', '+@all']);
    const token = (await command(p, ['ACL', 'RESTTOKEN', 'temp', 'pw1'])).json.result;
    expect((await kv(p, '/ping', { token })).json).toEqual({ result: 'PONG' });
    await command(p, ['ACL', 'SETUSER', 'temp', 'resetpass', '>pw2']);
    // Connections already open keep working in Redis too; a new principal lookup must fail.
    const fresh = await startTokenCheck(token);
    expect(fresh).toBe(401);
  });

  it('protects the users behind the Standard and Read Only tokens', async () => {
    for (const user of ['default', 'default_ro']) {
      const r = await command(p, ['ACL', 'SETUSER', user, 'off']);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatch(new RegExp(`^ERR the user '${user}'`));
      const d = await command(p, ['ACL', 'DELUSER', 'someone', user]);
      expect(d.status).toBe(400);
    }
    expect((await kv(p, '/ping', { token: p.readonlyToken })).json).toEqual({ result: 'PONG' });
  });
});

/** A token used by a restarted platform (same stores): resolution opens fresh connections. */
async function startTokenCheck(token: string): Promise<number> {
  // Disconnect the token's pooled connections by killing clients of that user, as a restart would.
  await command(p, ['PING']);
  const { RedisConnection } = await import('../../src/platform/redis/connection.js');
  const admin = await RedisConnection.open(p.dataStore);
  await admin.send([['CLIENT', 'KILL', 'USER', 'temp']]);
  admin.close();
  await new Promise((r) => setTimeout(r, 50));
  return (await kv(p, '/ping', { token })).status;
}
