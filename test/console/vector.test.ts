// The console's vector page in a real browser: upsert from the page, a text query with a metadata
// filter showing results with scores, fetch by prefix, delete after a confirmation (checked through
// the vector REST API), and the Read Only token offered no write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestPlatform } from '../helpers/platform.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { hasChromium, launch, openConsole } from './browser.js';

const DOCS = [
  { id: 'doc-1', data: 'ships sailing on the open sea', metadata: { genre: 'sea', year: 1990 } },
  { id: 'doc-2', data: 'ships in a harbour by the sea', metadata: { genre: 'port', year: 2001 } },
  { id: 'doc-3', data: 'a mountain village in winter', metadata: { genre: 'sea', year: 2010 } },
];

describe.skipIf(!hasChromium)('console: vector', () => {
  let p: RunningPlatform;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const api = async (op: string, body?: unknown) =>
    (
      (await (
        await fetch(`${p.url}/vector/dense-data/${op}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${p.token}` },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json()) as any
    ).result;

  beforeAll(async () => {
    [p, browser] = await Promise.all([startTestPlatform(), launch()]);
    page = await openConsole(browser, p, p.token, errors);
    await page.click('#nav a[data-page=vector]');
    await page.selectOption('#vector-index', 'dense-data');
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('upserts from the page and shows the index info', async () => {
    await page.click('#tab-upsert');
    await page.fill('#upsert-form textarea', JSON.stringify(DOCS));
    await page.click('#upsert-form button[type=submit]');
    await page.waitForSelector('#upsert-result .note.ok');
    expect((await api('fetch', { ids: ['doc-1', 'doc-2', 'doc-3'] })).map((r: any) => r?.id)).toEqual(['doc-1', 'doc-2', 'doc-3']);
    await page.waitForFunction(() => document.querySelector('#vector-info tbody')?.textContent?.includes('COSINE'));
    expect(await page.$$eval('#vector-info tbody td', (tds) => tds.map((t) => t.textContent))).toEqual(
      expect.arrayContaining(['DENSE', '384', 'COSINE', '3']),
    );
  });

  it('queries by text with a metadata filter and shows scores', async () => {
    await page.click('#tab-query');
    await page.fill('#query-form textarea[name=query]', 'ships on the sea');
    await page.fill('#query-form input[name=filter]', "genre = 'sea'");
    await page.click('#query-form button[type=submit]');
    await page.waitForSelector('#query-results table.records');
    const rows = await page.$$eval('#query-results tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows.map((r) => r[0])).toEqual(['doc-1', 'doc-3']);
    expect(Number(rows[0][1])).toBeGreaterThan(Number(rows[1][1]));
  });

  it('fetches by prefix', async () => {
    await page.click('#tab-fetch');
    await page.fill('#fetch-form input[name=ids]', 'doc-*');
    await page.click('#fetch-form button[type=submit]');
    await page.waitForSelector('#fetch-results table');
    expect(await page.$$eval('#fetch-results tbody tr td:first-child', (tds) => tds.map((t) => t.textContent))).toEqual([
      'doc-1',
      'doc-2',
      'doc-3',
    ]);
  });

  it('deletes after a confirmation', async () => {
    await page.click('#tab-delete');
    await page.fill('input[name=delete-ids]', 'doc-2');
    await page.click('#delete-vectors');
    await page.waitForSelector('#delete-result .note.ok');
    expect(await api('fetch', { ids: ['doc-2'] })).toEqual([null]);
  });

  it('in a namespace: fetches by ids, ranges, queries by a vector with a filter, and resets it after a confirmation', async () => {
    const nsApi = async (op: string, body: unknown) =>
      (
        (await (
          await fetch(`${p.url}/vector/dense-data/${op}/films`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${p.token}` },
            body: JSON.stringify(body),
          })
        ).json()) as any
      ).result;
    await nsApi('upsert-data', [
      { id: 'f-1', data: 'a storm at sea', metadata: { kind: 'a' } },
      { id: 'f-2', data: 'a storm over the sea', metadata: { kind: 'b' } },
      { id: 'f-3', data: 'a quiet library', metadata: { kind: 'a' } },
    ]);
    const [{ vector }] = await nsApi('fetch', { ids: ['f-1'], includeVectors: true });
    // Choosing the index again reads its info, with the new namespace.
    await page.selectOption('#vector-index', 'dense');
    await page.selectOption('#vector-index', 'dense-data');
    await page.waitForSelector('#vector-namespace option[value=films]', { state: 'attached' });
    await page.selectOption('#vector-namespace', 'films');
    await page.waitForFunction(() => document.querySelector('#vector-info tbody tr')?.children[5]?.textContent === '3');

    await page.click('#tab-fetch');
    await page.fill('#fetch-form input[name=ids]', 'f-3, f-1');
    await page.click('#fetch-form button[type=submit]');
    await page.waitForSelector('#fetch-results table');
    expect(await page.$$eval('#fetch-results tbody tr td:first-child', (tds) => tds.map((t) => t.textContent))).toEqual(['f-3', 'f-1']);

    await page.click('#tab-range');
    await page.click('#range-form button[type=submit]');
    await page.waitForSelector('#range-results table');
    expect(await page.$$eval('#range-results tbody tr td:first-child', (tds) => tds.map((t) => t.textContent))).toEqual([
      'f-1',
      'f-2',
      'f-3',
    ]);

    await page.click('#tab-query');
    await page.selectOption('#query-form select[name=query-mode]', 'vector');
    await page.fill('#query-form textarea[name=query]', JSON.stringify(vector));
    await page.fill('#query-form input[name=filter]', "kind = 'a'");
    await page.click('#query-form button[type=submit]');
    await page.waitForSelector('#query-results table.records');
    const rows = await page.$$eval('#query-results tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows.map((r) => r[0])).toEqual(['f-1', 'f-3']);
    expect(Number(rows[0][1])).toBeCloseTo(1, 3);

    await page.click('#tab-delete');
    await page.click('#reset-namespace');
    await page.waitForSelector('#delete-result .note.ok');
    expect(await nsApi('fetch', { ids: ['f-1', 'f-2', 'f-3'] })).toEqual([null, null, null]);
    expect(await api('fetch', { ids: ['doc-1'] })).toEqual([expect.objectContaining({ id: 'doc-1' })]); // the default namespace kept
  });

  it('offers the Read Only token queries but no writes', async () => {
    const ro = await openConsole(browser, p, p.readonlyToken, errors);
    await ro.click('#nav a[data-page=vector]');
    await ro.selectOption('#vector-index', 'dense-data');
    expect(await ro.locator('#tab-upsert, #tab-delete').count()).toBe(0);
    await ro.fill('#query-form textarea[name=query]', 'mountain');
    await ro.click('#query-form button[type=submit]');
    await ro.waitForSelector('#query-results table.records');
    expect(await ro.textContent('#query-results')).toContain('doc-3');
    await ro.close();
  });

  it('threw no error in the page', () => {
    expect(errors).toEqual([]);
  });
});
