// Area A, account management of the queue instance (at /account/v2 on the platform's HTTP port,
// like the real Developer API's https://api.upstash.com/v2). HTTP Basic email:key. The spec's
// /queue/... paths and the real API's /qstash/... paths are the same operations.
import type http from 'node:http';
import { Redis } from 'ioredis';
import { generateToken } from '../../config.js';
import { safeEqual } from '../../safe-equal.js';
import { BodyTooLargeError, readBody } from '../http-body.js';
import type { AreaContext, AreaServer } from '../area.js';
import { Billing } from './billing.js';

const DEFAULT_EMAIL = 'dev@respgate.local';
const ACCOUNT_KEY = 'ra:account-key';

class AccountError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startAccountArea(ctx: AreaContext): Promise<AreaServer> {
  const { config, internalEndpoint: ep, log } = ctx;
  const redis = new Redis({ host: ep.host, port: ep.port, username: ep.username, password: ep.password, db: ep.db ?? 0 });
  redis.on('error', (err) => log.warn({ err: String(err) }, 'account area: internal redis error'));
  const billing = new Billing(redis, config.queueMessagePrice);
  const email = config.accountEmail || DEFAULT_EMAIL;
  // Given by flag, else made once and kept (a restart on the same internal store keeps it).
  if (config.accountKey) await redis.set(ACCOUNT_KEY, config.accountKey);
  else await redis.set(ACCOUNT_KEY, generateToken(), 'NX');
  const key = (await redis.get(ACCOUNT_KEY))!;
  const instanceId = await billing.instanceId();

  const authorized = (req: http.IncomingMessage): boolean => {
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Basic ')) return false;
    return safeEqual(Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8'), `${email}:${key}`);
  };

  async function route(req: http.IncomingMessage, path: string): Promise<unknown> {
    if (!authorized(req))
      throw new AccountError(
        401,
        'Unauthorized: send HTTP Basic credentials <account email>:<account key> (--account-email, --account-key)',
      );
    const m = /^\/v2\/(?:queue|qstash)\/([a-z-]+)(?:\/([^/]+))?$/.exec(path);
    if (!m) throw new AccountError(404, `no such endpoint: ${req.method} /account${path}`);
    const [, operation, rawId] = m;
    const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
    const method = req.method ?? 'GET';
    if (operation === 'users' && method === 'GET' && id === undefined) return [instanceView(await billing.instance(instanceId))];
    if (id === undefined) throw new AccountError(404, `no such endpoint: ${method} /account${path}`);
    const expected: Record<string, string> = {
      'disable-prodpack': 'POST',
      'enable-prodpack': 'POST',
      'update-budget': 'PATCH',
      user: 'GET',
    };
    if (!(operation in expected)) throw new AccountError(404, `no such endpoint: ${method} /account${path}`);
    if (method !== expected[operation]) throw new AccountError(405, `${operation} takes ${expected[operation]}, not ${method}`);
    const instance = await billing.instance(id);
    if (!instance) throw new AccountError(404, `queue instance ${id} not found (this platform's instance is ${instanceId})`);
    switch (operation) {
      case 'user':
        return instanceView(instance);
      case 'disable-prodpack':
      case 'enable-prodpack':
        await billing.setProdPack(id, operation === 'enable-prodpack');
        return 'OK';
      default: {
        const budget = parseBudget((await readBody(req, 64 * 1024)).toString('utf8'));
        await billing.setBudget(id, budget);
        return 'OK';
      }
    }
  }

  return {
    async handle(req, res, path) {
      let status = 200;
      let body: unknown;
      try {
        body = await route(req, path);
      } catch (err) {
        if (err instanceof AccountError) [status, body] = [err.status, err.message];
        else if (err instanceof BodyTooLargeError) [status, body] = [413, 'request body too large'];
        else throw err;
      }
      // Answers, errors included, are JSON strings like the Developer API's "OK".
      const text = JSON.stringify(body);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    },
    banner: () => [
      `  Account API                   ${ctx.baseUrl()}/account/v2   (HTTP Basic)`,
      `    email ${email}`,
      `    key   ${key}`,
      `    queue instance id ${instanceId}; read its state: curl -u '${email}:<key>' ${ctx.baseUrl()}/account/v2/qstash/user/${instanceId}`,
      '',
    ],
    async stop() {
      redis.disconnect();
    },
  };
}

/** {"budget": 0 | 20..10000} — whole dollars per month, 0 for no limit. */
function parseBudget(text: string): number {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AccountError(400, 'the body must be JSON: {"budget": <dollars>} (0 for no limit, or 20 to 10000)');
  }
  const budget = (body as { budget?: unknown } | null)?.budget;
  if (typeof budget !== 'number' || !Number.isInteger(budget) || !(budget === 0 || (budget >= 20 && budget <= 10000))) {
    throw new AccountError(
      400,
      `invalid budget ${JSON.stringify(budget ?? null)}: it must be a whole number of dollars, 0 (no limit) or from 20 to 10000`,
    );
  }
  return budget;
}

function instanceView(i: Awaited<ReturnType<Billing['instance']>>) {
  return {
    id: i!.id,
    state: 'active',
    type: 'paid',
    budget: i!.budget,
    prod_pack_enabled: i!.prodPackEnabled,
    creation_time: Math.floor(i!.createdAt / 1000),
    monthly_messages: i!.monthlyMessages,
    monthly_spend: i!.monthlySpend,
  };
}
