// Screenshots of the console's pages for docs/console/ (README and docs/console.md show them): a real
// platform with a little data of each kind, Debian's Chromium driven by playwright-core.
//
//   npx tsx scripts/console-screenshots.ts          # writes docs/console/*.png
import { mkdirSync } from 'node:fs';
import { command, startTestPlatform } from '../test/helpers/platform.js';
import { startDestination } from '../test/helpers/destination.js';
import { startTestProxy } from '../test/helpers/stack.js';
import { Redis } from 'ioredis';
import { launch, openConsole } from '../test/console/browser.js';

const OUT = 'docs/console';
mkdirSync(OUT, { recursive: true });
const p = await startTestPlatform({ accountEmail: 'dev@respgate.local', accountKey: 'screenshot-key' });
const proxy = await startTestProxy(p, { slowlogLogSlowerThanUs: 5000 });
p.attachProxy({ host: proxy.host, port: proxy.port });
const workers = [
  new Redis({ port: proxy.port, connectionName: 'api-server' }),
  new Redis({ port: proxy.port, connectionName: 'worker-1' }),
];
const dest = await startDestination();
// /orders is down (its message lands in the DLQ), /slow answers after 5 s (in flight meanwhile),
// /flaky fails once then answers, everything else answers at once.
let flaky = 0;
dest.respond = (r) => {
  if (r.path === '/orders') return { status: 500, body: 'the endpoint is down' };
  if (r.path === '/slow') return new Promise((resolve) => setTimeout(() => resolve({ status: 200, body: 'done' }), 5000));
  if (r.path === '/flaky' && flaky++ === 0) return { status: 503, body: 'busy, try again' };
  return { status: 200, body: 'ok' };
};
for (const args of [
  ['HSET', 'user:1', 'name', 'Ada Lovelace', 'email', 'ada@example.com', 'lang', 'en'],
  ['HSET', 'user:2', 'name', 'Alan Turing', 'email', 'alan@example.com'],
  ['SET', 'session:9f2c', '{"user":1,"cart":[3,7]}', 'EX', '3600'],
  ['RPUSH', 'jobs:pending', 'resize:42', 'email:17'],
  ['ZADD', 'leaderboard', '120', 'ada', '95', 'alan', '80', 'grace'],
  ['SADD', 'tags', 'redis', 'http', 'queue'],
  ['XADD', 'events', '*', 'kind', 'login', 'user', '1'],
  ['JSON.SET', 'doc:1', '$', '{"title":"Notes","tags":["a","b"],"meta":{"pages":3}}'],
])
  await command(p, args);
const q = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${p.url}/queue/v2${path}`, { method: 'POST', body, headers: { Authorization: `Bearer ${p.token}`, ...headers } });
await q(`/publish/${dest.url}/orders`, '{"order":42}', { 'Upstash-Retries': '0' });
await q(`/schedules/${dest.url}/nightly`, '', { 'Upstash-Cron': '0 3 * * *' });
const flakyId = (
  (await (
    await q(`/publish/${dest.url}/flaky`, '{"invoice":7}', {
      'Content-Type': 'application/json',
      'Upstash-Retries': '2',
      'Upstash-Retry-Delay': '500',
      'Upstash-Callback': `${dest.url}/callback`,
      'Upstash-Forward-X-Request-Id': 'req-5f1c',
    })
  ).json()) as { messageId: string }
).messageId;
await fetch(`${p.url}/vector/dense-data/upsert-data`, {
  method: 'POST',
  headers: { Authorization: `Bearer ${p.token}` },
  body: JSON.stringify([
    { id: 'film-1', data: 'a sailor crosses the stormy sea', metadata: { genre: 'drama', year: 1998 } },
    { id: 'film-2', data: 'a quiet village by the sea', metadata: { genre: 'drama', year: 2011 } },
    { id: 'film-3', data: 'robots on a space station', metadata: { genre: 'scifi', year: 2020 } },
  ]),
});
await dest.waitFor(1);
await new Promise((r) => setTimeout(r, 500));

const browser = await launch();
const page = await openConsole(browser, p, p.token);
await page.setViewportSize({ width: 1280, height: 760 });
await page.waitForSelector('#keys .key');
await page.click('#keys .key:has-text("user:1")');
await page.waitForSelector('#members');
await page.fill('input[name=command]', 'ZRANGE leaderboard 0 -1 WITHSCORES');
await page.click('#run');
await page.waitForSelector('#command-reply ol');
await page.screenshot({ path: `${OUT}/data.png`, fullPage: true });

await page.click('#nav a[data-page=queue]');
await page.click('#tab-messages');
// A few seconds of traffic, so the depth chart has a shape: messages scheduled for later, some in flight.
for (let round = 0; round < 8; round++) {
  await q(`/publish/${dest.url}/reports`, `{"report":${round}}`, { 'Upstash-Delay': `${2 + round}m` });
  for (let n = 0; n < round % 3; n++) await q(`/publish/${dest.url}/slow`, `{"job":${round}}`);
  await new Promise((r) => setTimeout(r, 1500));
}
await page.fill('#message-form input[name=message-id]', flakyId);
await page.click('#message-form button[type=submit]');
await page.waitForSelector('#message-callbacks table');
await page.screenshot({ path: `${OUT}/queue.png`, fullPage: true });

await page.click('#tab-dlq');
await page.waitForSelector('#dlq table');
await page.screenshot({ path: `${OUT}/queue-dlq.png`, fullPage: true });

await page.click('#nav a[data-page=vector]');
await page.selectOption('#vector-index', 'dense-data');
await page.fill('#query-form textarea[name=query]', 'the sea');
await page.fill('#query-form input[name=filter]', "genre = 'drama'");
await page.click('#query-form button[type=submit]');
await page.waitForSelector('#query-results table');
await page.screenshot({ path: `${OUT}/vector.png`, fullPage: true });

await page.click('#nav a[data-page=account]');
await page.fill('input[name=account-key]', 'screenshot-key');
await page.click('#account-login button[type=submit]');
await page.waitForSelector('#instance-state');
await page.screenshot({ path: `${OUT}/account.png`, fullPage: true });

await page.click('#nav a[data-page=proxy]');
// Two clients at work for a few seconds, so the rates and the latency have a shape.
for (let round = 0; round < 14; round++) {
  await Promise.all(
    workers.map((w, i) => Promise.all(Array.from({ length: 20 * (round % 4) + 10 }, (_, n) => (i ? w.get(`k${n}`) : w.set(`k${n}`, n))))),
  );
  await new Promise((r) => setTimeout(r, 700));
}
await page.waitForSelector('#proxy-clients table');
await page.waitForSelector('#proxy-cost-clients table');
await page.selectOption('#latency-command', 'get');
await page.screenshot({ path: `${OUT}/proxy.png`, fullPage: true });

await browser.close();
for (const w of workers) w.disconnect();
await proxy.stop();
await dest.close();
await p.stop();
console.log(`screenshots in ${OUT}/`);
