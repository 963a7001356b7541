// The account's queue instance (Area A) and what publishing costs it. One instance per platform,
// its id made once and kept in the internal store. Messages are counted per UTC month; a message
// costs `price` dollars (default: the real pay-as-you-go $1 per 100,000 messages); while a budget
// is set (> 0) a publish that would take the month's spend past it is refused.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

const K = {
  instanceId: 'ra:qstash:instance-id',
  instance: (id: string) => `ra:qstash:instance:${id}`,
  usage: (id: string) => `ra:qstash:usage:${id}`,
};

export const DEFAULT_MESSAGE_PRICE = 0.00001;

export interface QueueInstance {
  id: string;
  budget: number;
  prodPackEnabled: boolean;
  createdAt: number;
}

// Atomic check-and-count, so concurrent publishers cannot overshoot the budget together.
const CHARGE = `
local budget = tonumber(redis.call('HGET', KEYS[1], 'budget') or '0')
local used = tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0')
local n = tonumber(ARGV[1])
if budget > 0 and (used + n) * tonumber(ARGV[2]) > budget + 1e-9 then return {0, used, budget} end
redis.call('HINCRBY', KEYS[2], ARGV[3], n)
return {1, used + n, budget}`;

export class Billing {
  private id: string | undefined;

  constructor(
    private readonly redis: Redis,
    readonly pricePerMessage = DEFAULT_MESSAGE_PRICE,
  ) {
    redis.defineCommand('rgCharge', { numberOfKeys: 2, lua: CHARGE });
  }

  /** The instance id, made on first use and kept. */
  async instanceId(): Promise<string> {
    if (this.id) return this.id;
    await this.redis.set(K.instanceId, randomUUID(), 'NX');
    const id = (await this.redis.get(K.instanceId))!;
    await this.redis.hsetnx(K.instance(id), 'createdAt', String(Date.now()));
    this.id = id;
    return id;
  }

  async instance(id: string): Promise<(QueueInstance & { monthlyMessages: number; monthlySpend: number }) | undefined> {
    if (id !== (await this.instanceId())) return undefined;
    const [fields, used] = await Promise.all([this.redis.hgetall(K.instance(id)), this.redis.hget(K.usage(id), month())]);
    const monthlyMessages = Number(used ?? 0);
    return {
      id,
      budget: Number(fields.budget ?? 0),
      prodPackEnabled: fields.prodPack === '1',
      createdAt: Number(fields.createdAt ?? 0),
      monthlyMessages,
      monthlySpend: Math.round(monthlyMessages * this.pricePerMessage * 100) / 100,
    };
  }

  async setBudget(id: string, budget: number): Promise<void> {
    await this.redis.hset(K.instance(id), 'budget', String(budget));
  }

  async setProdPack(id: string, enabled: boolean): Promise<void> {
    await this.redis.hset(K.instance(id), 'prodPack', enabled ? '1' : '0');
  }

  /** Counts `messages` against this month's budget; returns why not when the budget refuses them. */
  async charge(messages: number): Promise<string | undefined> {
    if (messages === 0) return undefined;
    const id = await this.instanceId();
    const [ok, used, budget] = await (this.redis as unknown as { rgCharge(...a: string[]): Promise<number[]> }).rgCharge(
      K.instance(id),
      K.usage(id),
      String(messages),
      String(this.pricePerMessage),
      month(),
    );
    if (ok === 1) return undefined;
    const spent = (used * this.pricePerMessage).toFixed(2);
    return (
      `monthly budget of $${budget} reached ($${spent} spent on ${used} messages this month at $${this.pricePerMessage} per message): ` +
      `raise it with PATCH /account/v2/queue/update-budget/${id} {"budget": <dollars>} or set it to 0 for no limit`
    );
  }
}

function month(now = new Date()): string {
  return now.toISOString().slice(0, 7);
}
