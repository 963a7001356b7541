// The browser for the console's tests: Debian's Chromium driven by playwright-core. Where it is not
// installed the console's test files skip, saying how to install it (.ci/run installs it).
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { RunningPlatform } from '../../src/platform/platform.js';

export const CHROMIUM = process.env.RESPGATE_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

if (!hasChromium)
  console.warn(
    `console browser tests skipped: no Chromium at ${CHROMIUM}; install it with \`apt-get install -y chromium\` (or set RESPGATE_CHROMIUM)`,
  );

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** A page logged in to the console of `p` with `token`; page errors are collected in `errors`. */
export async function openConsole(browser: Browser, p: RunningPlatform, token: string, errors: string[] = []): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${p.url}/console/`);
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('#nav:not([hidden])');
  return page;
}
