// The console's account page in a real browser: the account email and key are asked for (a wrong key
// is refused), then the budget and prod pack changed from the page are checked through the account API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestPlatform } from '../helpers/platform.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { hasChromium, launch, openConsole } from './browser.js';

const EMAIL = 'ops@example.test';
const KEY = 'account-key-for-the-console-test';

describe.skipIf(!hasChromium)('console: account', () => {
  let p: RunningPlatform;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const user = async () =>
    (
      (await (
        await fetch(`${p.url}/account/v2/qstash/users`, {
          headers: { Authorization: `Basic ${Buffer.from(`${EMAIL}:${KEY}`).toString('base64')}` },
        })
      ).json()) as any
    )[0];

  beforeAll(async () => {
    [p, browser] = await Promise.all([startTestPlatform({ accountEmail: EMAIL, accountKey: KEY }), launch()]);
    page = await openConsole(browser, p, p.token, errors);
    await page.click('#nav a[data-page=account]');
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('refuses a wrong account key', async () => {
    await page.fill('#account-login input[name=account-email]', EMAIL);
    await page.fill('#account-login input[name=account-key]', 'wrong');
    await page.click('#account-login button[type=submit]');
    await page.waitForSelector('#account-login .note.error');
    expect(await page.textContent('#account-login .note.error')).toContain('Unauthorized');
  });

  it('shows the instance and changes its budget and prod pack', async () => {
    await page.fill('#account-login input[name=account-email]', EMAIL);
    await page.fill('#account-login input[name=account-key]', KEY);
    await page.click('#account-login button[type=submit]');
    await page.waitForSelector('#instance-state');
    expect(await page.textContent('#instance-state')).toContain('no limit');
    await page.fill('#budget-form input[name=budget]', '50');
    await page.click('#budget-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#instance-state')?.textContent?.includes('$50'));
    expect((await user()).budget).toBe(50);
    await page.fill('#budget-form input[name=budget]', '5');
    await page.click('#budget-form button[type=submit]');
    await page.waitForSelector('#budget-form .note.error');
    expect((await user()).budget).toBe(50);
    const before = (await user()).prod_pack_enabled;
    await page.click('#prodpack');
    await expect.poll(async () => (await user()).prod_pack_enabled).toBe(!before);
  });

  it('threw no error in the page', () => {
    expect(errors).toEqual([]);
  });
});
