// The console's queue page in a real browser: a message published from the page to a failing
// endpoint lands in the DLQ, and a retry from the page delivers it (another is deleted from the DLQ);
// the messages in flight and scheduled with the queue depth chart, one message's headers, attempts and
// callbacks; the logs filtered; schedules, queues and URL groups made, changed and deleted from the page,
// each checked through the queue REST API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestPlatform } from '../helpers/platform.js';
import { startDestination, type Destination } from '../helpers/destination.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { hasChromium, launch, openConsole } from './browser.js';

describe.skipIf(!hasChromium)('console: queue', () => {
  let p: RunningPlatform;
  let browser: Browser;
  let page: Page;
  let dest: Destination;
  const errors: string[] = [];
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${p.url}/queue/v2${path}`, {
      method,
      headers: { Authorization: `Bearer ${p.token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  };

  beforeAll(async () => {
    [p, browser, dest] = await Promise.all([startTestPlatform(), launch(), startDestination()]);
    page = await openConsole(browser, p, p.token, errors);
  });
  afterAll(async () => {
    await browser?.close();
    await dest?.close();
  });

  it('publishes to a failing endpoint, shows the DLQ entry, and retries it from the page', async () => {
    dest.respond = (_r, i) => (i === 0 ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' });
    await page.click('#nav a[data-page=queue]');
    await page.click('#tab-publish');
    await page.fill('#publish-form input[name=destination]', `${dest.url}/hook`);
    await page.fill('#publish-form input[name=retries]', '0');
    await page.fill('#publish-form textarea[name=body]', 'hello');
    await page.click('#publish-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#publish-result')?.textContent?.includes('msg_'));
    await dest.waitFor(1);

    await page.click('#tab-dlq');
    await expect.poll(async () => (await api('GET', '/dlq')).messages.length, { timeout: 10_000 }).toBe(1);
    await page.click('#dlq-refresh');
    await page.waitForSelector('#dlq button.retry');
    expect(await page.textContent('#dlq')).toContain('500');
    await page.click('#dlq button.retry');
    await page.waitForFunction(() => document.querySelector('#dlq')?.textContent?.includes('empty'));
    const [, second] = await dest.waitFor(2);
    expect(second.body.toString()).toBe('hello');
    expect((await api('GET', '/dlq')).messages).toEqual([]);
  });

  it('lists the messages in flight and scheduled, charts the depth, and shows a message with its headers, attempts and callbacks', async () => {
    // /flaky fails once (503) then answers 200; the callback endpoint answers 200.
    let flaky = 0;
    dest.respond = (r) => (r.path === '/flaky' && flaky++ === 0 ? { status: 503, body: 'down for a moment' } : { status: 200, body: 'ok' });
    const publish = async (path: string, headers: Record<string, string>) => {
      const res = await fetch(`${p.url}/queue/v2/publish/${dest.url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${p.token}`, 'Content-Type': 'text/plain', ...headers },
        body: `body of ${path}`,
      });
      return ((await res.json()) as { messageId: string }).messageId;
    };
    const later = await publish('/later', { 'Upstash-Delay': '1h', 'Upstash-Forward-X-Trace': '<b>trace-1</b>' });
    const before = dest.received.length;
    const flakyId = await publish('/flaky', {
      'Upstash-Retries': '2',
      'Upstash-Retry-Delay': '300',
      'Upstash-Callback': `${dest.url}/callback`,
    });
    await page.click('#nav a[data-page=queue]');
    await page.click('#tab-messages');
    await page.waitForFunction((id) => document.querySelector('#pending')?.textContent?.includes(id), later);
    const row = await page.$$eval('#pending tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(row.find((r) => r[1] === later)?.slice(0, 5)).toEqual(['scheduled', later, `${dest.url}/later`, '', '0 of 4']);
    // The depth chart counts the scheduled message among the delayed ones.
    await page.waitForSelector('#queue-depth svg polyline[data-series=delayed]');
    expect(await page.textContent('#queue-depth .legend [data-series=delayed]')).toMatch(/: [1-9]/);

    await page.click(`#pending button.message-id:text("${later}")`);
    await page.waitForSelector('#message-headers');
    expect(await page.textContent('#message-headers')).toContain('<b>trace-1</b>');
    expect(await page.locator('#message-headers b').count()).toBe(0);
    expect(await page.textContent('#message-body')).toBe('body of /later');
    expect(await page.textContent('#message-attempts')).toBe('no attempt yet');

    // The flaky message: two attempts (503, then 200), and a callback after each response.
    await dest.waitFor(before + 4);
    await page.fill('#message-form input[name=message-id]', flakyId);
    // The page is reread until every attempt and callback has its final state: a callback's row is
    // written when it is created and marked DELIVERED only after its endpoint answers.
    const rows = (selector: string) => page.$$eval(selector, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    const shown = async () => {
      await page.click('#message-form button[type=submit]');
      await page.waitForSelector('#message-fields');
      const attempts = await rows('#message-attempts tbody tr');
      const callbacks = await rows('#message-callbacks tbody tr');
      return {
        attempts: attempts.map((a) => [a[2], a[3], a[5]]),
        callbacks: callbacks.map((c) => [c[0], c[2], c[3], c[4]]),
      };
    };
    await expect.poll(shown, { timeout: 10_000 }).toEqual({
      attempts: [
        ['ERROR', '503', 'down for a moment'],
        ['DELIVERED', '200', ''],
      ],
      callbacks: [
        ['callback', `${dest.url}/callback`, 'DELIVERED', '200'],
        ['callback', `${dest.url}/callback`, 'DELIVERED', '200'],
      ],
    });
    expect(await page.locator('#cancel-message').count()).toBe(0); // delivered: nothing to cancel

    // Cancel the scheduled one from the page.
    await page.fill('#message-form input[name=message-id]', later);
    await page.click('#message-form button[type=submit]');
    await page.waitForSelector('#cancel-message');
    await page.click('#cancel-message');
    await page.waitForFunction(() => !document.querySelector('#message-fields')?.textContent?.includes('(pending)'));
    expect((await fetch(`${p.url}/queue/v2/messages/${later}`, { headers: { Authorization: `Bearer ${p.token}` } })).status).toBe(404);
    await page.waitForFunction((id) => !document.querySelector('#pending')?.textContent?.includes(id), later);
  });

  it('deletes a message from the DLQ after a confirmation', async () => {
    dest.respond = () => ({ status: 500, body: 'still down' });
    const before = dest.received.length;
    await fetch(`${p.url}/queue/v2/publish/${dest.url}/gone`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.token}`, 'Upstash-Retries': '0' },
      body: 'x',
    });
    await dest.waitFor(before + 1);
    await expect.poll(async () => (await api('GET', '/dlq')).messages.length, { timeout: 10_000 }).toBe(1);
    await page.click('#tab-dlq');
    await page.click('#dlq-refresh');
    await page.waitForSelector('#dlq button.danger');
    expect(await page.textContent('#dlq')).toContain(`${dest.url}/gone`);
    await page.click('#dlq button.danger');
    await page.waitForFunction(() => document.querySelector('#dlq')?.textContent?.includes('empty'));
    expect((await api('GET', '/dlq')).messages).toEqual([]);
  });

  it('shows the logs, filtered by state, and by URL and state', async () => {
    await page.click('#tab-logs');
    await page.selectOption('#logs-form select[name=state]', 'DELIVERED');
    await page.click('#logs-form button[type=submit]');
    // The unfiltered table shown on the tab holds DELIVERED rows too: wait for the filtered one (fails by timeout otherwise).
    await page.waitForFunction(() => {
      const tds = [...document.querySelectorAll('#logs tbody tr td:nth-child(2)')];
      return tds.length > 0 && tds.every((td) => td.textContent === 'DELIVERED');
    });
    const states = await page.$$eval('#logs tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
    expect(new Set(states)).toEqual(new Set(['DELIVERED']));
    // By URL and state together: the message sent to /gone failed once.
    await page.selectOption('#logs-form select[name=state]', 'FAILED');
    await page.fill('#logs-form input[name=url]', `${dest.url}/gone`);
    await page.click('#logs-form button[type=submit]');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#logs tbody tr td:nth-child(2)')].every((td) => td.textContent === 'FAILED'),
    );
    const rows = await page.$$eval('#logs tbody tr', (trs) => trs.map((tr) => [tr.children[1].textContent, tr.children[3].textContent]));
    expect(rows).toEqual([['FAILED', `${dest.url}/gone`]]);
  });

  it('creates, pauses, resumes and deletes a schedule and a queue (its parallelism changed), and a URL group (an endpoint removed)', async () => {
    await page.click('#tab-schedules');
    await page.fill('#schedule-form input[name=destination]', `${dest.url}/cron`);
    await page.fill('#schedule-form input[name=cron]', '0 0 1 1 *');
    await page.click('#schedule-form button[type=submit]');
    await page.waitForSelector('#schedules tbody tr');
    await page.click('#schedules button:text("Pause")');
    await page.waitForSelector('#schedules button:text("Resume")');
    expect((await api('GET', '/schedules'))[0].isPaused).toBe(true);
    await page.click('#schedules button:text("Resume")');
    await page.waitForSelector('#schedules button:text("Pause")');
    expect((await api('GET', '/schedules'))[0].isPaused).toBe(false);
    await page.click('#schedules button.danger');
    await page.waitForFunction(() => document.querySelector('#schedules')?.textContent?.includes('no schedules'));
    expect(await api('GET', '/schedules')).toEqual([]);

    await page.click('#tab-queues');
    await page.fill('#queue-form input[name=queue-name]', 'emails');
    await page.fill('#queue-form input[name=parallelism]', '3');
    await page.click('#queue-form button[type=submit]');
    await page.waitForSelector('#queues tbody tr');
    await page.click('#queues button:text("Pause")');
    await page.waitForSelector('#queues button:text("Resume")');
    expect(await api('GET', '/queues/emails')).toMatchObject({ name: 'emails', parallelism: 3, paused: true });
    await page.click('#queues button:text("Resume")');
    await page.waitForSelector('#queues button:text("Pause")');
    expect(await api('GET', '/queues/emails')).toMatchObject({ paused: false });
    await page.fill('#queue-form input[name=parallelism]', '5');
    await page.click('#queue-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#queues tbody td:nth-child(2)')?.textContent === '5');
    expect(await api('GET', '/queues/emails')).toMatchObject({ parallelism: 5 });
    await page.click('#queues button.danger');
    await page.waitForFunction(() => document.querySelector('#queues')?.textContent?.includes('no queues'));
    expect(await api('GET', '/queues')).toEqual([]);

    await page.click('#tab-url\\ groups');
    await page.fill('#group-form input[name=group]', 'team');
    await page.fill('#group-form input[name=endpoint-url]', `${dest.url}/a`);
    await page.click('#group-form button[type=submit]');
    await page.waitForSelector('#groups tbody tr');
    expect((await api('GET', '/topics/team')).endpoints).toEqual([{ url: `${dest.url}/a` }]);
    await page.fill('#group-form input[name=endpoint-url]', `${dest.url}/b`);
    await page.click('#group-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#groups li').length === 2);
    await page.click('#groups li:has-text("/a") button');
    await page.waitForFunction(() => document.querySelectorAll('#groups li').length === 1);
    expect((await api('GET', '/topics/team')).endpoints).toEqual([{ url: `${dest.url}/b` }]);
    await page.click('#groups tbody tr > td:last-child button.danger');
    await page.waitForFunction(() => document.querySelector('#groups')?.textContent?.includes('no URL groups'));
    expect(await api('GET', '/topics')).toEqual([]);
  });

  it('shows and rotates the signing keys', async () => {
    const before = await api('GET', '/keys');
    await page.click('#tab-keys');
    await page.waitForFunction((k) => document.querySelector('#signing-keys')?.textContent?.includes(k), before.current);
    await page.click('#rotate');
    await page.waitForFunction((k) => !document.querySelector('#signing-keys')?.textContent?.includes(k), before.current);
    expect((await api('GET', '/keys')).current).toBe(before.next);
  });

  it('lets the Read Only token read the queue, and shows the 403 of what it may not see', async () => {
    const ro = await openConsole(browser, p, p.readonlyToken, errors);
    await ro.click('#nav a[data-page=queue]');
    await ro.click('#tab-messages');
    await ro.waitForSelector('#queue-depth svg');
    const pendingId = (
      (await (
        await fetch(`${p.url}/queue/v2/publish/${dest.url}/much-later`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${p.token}`, 'Upstash-Delay': '2h' },
          body: 'x',
        })
      ).json()) as { messageId: string }
    ).messageId;
    await ro.waitForFunction((id) => document.querySelector('#pending')?.textContent?.includes(id), pendingId);
    await ro.click(`#pending button.message-id:text("${pendingId}")`);
    await ro.waitForFunction(() => document.querySelector('#message-fields')?.textContent?.includes('(pending)'));
    expect(await ro.locator('#cancel-message').count()).toBe(0); // sees it, may not cancel it
    await ro.click('#tab-dlq');
    await ro.waitForFunction(() => document.querySelector('#dlq')?.textContent?.includes('the dead letter queue is empty'));
    expect(await ro.locator('#dlq .note.error').count()).toBe(0);
    await ro.click('#tab-keys');
    await ro.waitForSelector('#signing-keys .note.error');
    expect(await ro.textContent('#signing-keys')).toContain('the read-only token can only read (GET) and not the signing keys');
    expect(await ro.locator('#signing-keys code').count()).toBe(0);
    await ro.close();
  });

  it('threw no error in the page', () => {
    expect(errors).toEqual([]);
  });
});
