// Records Redis 8's replies to test/platform/hash-field-expiry-cases.ts into
// test/platform/fixtures/hash-field-expiry.redis8.json (raw RESP2 of each reply), for the differential
// test of the platform's hash-field expiration emulation. Usage (a Redis 8 binary you built yourself):
//   npx tsx scripts/record-hash-field-expiry.ts /path/to/redis-server
import { writeFileSync } from 'node:fs';
import { startEmbeddedRedis } from '../src/platform/redis/embedded-server.js';
import { RedisConnection } from '../src/platform/redis/connection.js';
import { HASH_FIELD_EXPIRY_CASES } from '../test/platform/hash-field-expiry-cases.js';

const binary = process.argv[2];
if (!binary) throw new Error('usage: record-hash-field-expiry.ts <redis-server 8.x binary>');
const server = await startEmbeddedRedis({ binary, databases: 1, password: null });
try {
  const conn = await RedisConnection.open(server.endpoint);
  const [info] = await conn.send([['INFO', 'server']]);
  const version = /redis_version:([\d.]+)/.exec(info.toString('latin1'))![1];
  const replies: string[] = [];
  for (const command of HASH_FIELD_EXPIRY_CASES) replies.push((await conn.send([command]))[0].toString('latin1'));
  conn.close();
  const out = { redis_version: version, cases: HASH_FIELD_EXPIRY_CASES.map((command, i) => ({ command, reply: replies[i] })) };
  writeFileSync(new URL('../test/platform/fixtures/hash-field-expiry.redis8.json', import.meta.url), JSON.stringify(out, null, 1) + '\n');
  console.log(`recorded ${replies.length} replies of redis ${version}`);
} finally {
  await server.stop();
}
