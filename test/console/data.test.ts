// The console's data browser in a real browser (Chromium): login, the scan list, a view per type,
// edits checked through the REST API, binary values in hex, user data shown as text, and the Read
// Only token that sees but cannot change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { command, kv, startTestPlatform } from '../helpers/platform.js';
import type { RunningPlatform } from '../../src/platform/platform.js';
import { hasChromium, launch, openConsole } from './browser.js';

const EVIL = '<img src=x onerror=window.__xss=1>';

describe.skipIf(!hasChromium)('console: data browser', () => {
  let p: RunningPlatform;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    [p, browser] = await Promise.all([startTestPlatform(), launch()]);
    await command(p, ['SET', EVIL, EVIL]);
    await command(p, ['HSET', 'user:1', 'name', 'Ada', 'lang', 'en']);
    await command(p, ['RPUSH', 'queue:jobs', 'a', 'b']);
    await command(p, ['SADD', 'tags', 'red']);
    await command(p, ['ZADD', 'board', '10', 'ada', '7.5', 'bob']);
    await command(p, ['XADD', 'events', '1-1', 'kind', 'login']);
    await command(p, ['JSON.SET', 'doc', '$', '{"a":{"b":[1,2]}}']);
    await kv(p, '/set/bin/%00%FF%10A');
    page = await openConsole(browser, p, p.token, errors);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('refuses a missing or wrong token, at the page and at its API', async () => {
    const other = await browser.newPage();
    await other.goto(`${p.url}/console/`);
    await other.fill('#token', 'not-a-token');
    await other.click('#login button[type=submit]');
    await other.waitForSelector('#login .note.error');
    expect(await other.isHidden('#nav')).toBe(true);
    expect(await other.locator('#keys').count()).toBe(0);
    await other.close();
    const res = await fetch(`${p.url}/console/api/session`);
    expect(res.status).toBe(401);
  });

  async function openKey(name: string): Promise<void> {
    await page.fill('input[name=open]', name);
    await page.click('#open');
    await page.waitForFunction((n) => document.querySelector('#key-title')?.textContent === n, name);
  }

  it('lists keys by pattern and type, and shows every type', async () => {
    expect(await page.isHidden('#nav a[data-page=proxy]')).toBe(true); // no proxy in this process
    await page.fill('input[name=pattern]', 'user:*');
    await page.click('#scan');
    await page.waitForFunction(() => document.querySelectorAll('#keys .key').length === 1);
    expect(await page.textContent('#keys')).toContain('user:1');
    await page.fill('input[name=pattern]', '*');
    await page.selectOption('select[name=type]', 'zset');
    await page.click('#scan');
    await page.waitForFunction(() => document.querySelector('#keys')?.textContent?.includes('board'));
    expect(await page.locator('#keys .key').count()).toBe(1);

    await openKey('user:1');
    expect(await page.textContent('#members')).toContain('Ada');
    await openKey('queue:jobs');
    expect(await page.textContent('#key-type')).toBe('list');
    await openKey('board');
    expect(await page.textContent('#members')).toContain('7.5');
    await openKey('events');
    expect(await page.textContent('#members')).toContain('login');
    await openKey('doc');
    expect(await page.textContent('#key-type')).toBe('ReJSON-RL');
    expect(await page.textContent('#json-value')).toContain('b');
  });

  it('pages through a scan: each page about 50 keys, Next page goes on from the cursor, every key seen once', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `page:${String(i).padStart(3, '0')}`);
    await command(p, ['MSET', ...names.flatMap((n) => [n, 'v'])]);
    await page.selectOption('select[name=type]', '');
    await page.fill('input[name=pattern]', 'page:*');
    await page.click('#scan');
    const seen: string[] = [];
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(20);
      // The first page has keys; a later one may have none (below).
      await page.waitForFunction(
        (first) =>
          document.querySelector('#keys .key .key-name')?.textContent?.startsWith('page:') ||
          (!first && document.querySelector('#keys .empty')),
        pages === 0,
      );
      const shown = await page.$$eval('#keys .key .key-name', (els) => els.map((e) => e.textContent ?? ''));
      if (pages === 0) expect(shown.length).toBeLessThan(150);
      // A full page may end where the matching keys end (Redis' own order, seeded per process): the page after
      // it then finds none, and is the last.
      if (shown.length === 0) {
        expect(await page.locator('#next-page').count()).toBe(0);
        break;
      }
      expect(shown.filter((k) => seen.includes(k))).toEqual([]);
      seen.push(...shown);
      if ((await page.locator('#next-page').count()) === 0) break;
      const first = shown[0];
      await page.click('#next-page');
      await page.waitForFunction((f) => document.querySelector('#keys .key .key-name')?.textContent !== f, first);
    }
    expect(seen.sort()).toEqual(names);
    await command(p, ['DEL', ...names]);
  });

  it('shows a key named with HTML as text, and runs none of it', async () => {
    await page.selectOption('select[name=type]', '');
    await page.fill('input[name=pattern]', '<img*');
    await page.click('#scan');
    await page.waitForFunction(() => document.querySelector('#keys')?.textContent?.includes('<img'));
    expect(await page.locator('#keys .key').count()).toBe(1);
    expect(await page.textContent('#keys .key-name')).toBe(EVIL);
    await page.click('#keys .key');
    await page.waitForSelector('#string-value');
    expect(await page.textContent('#string-value')).toBe(EVIL);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();
  });

  it('shows a binary value as hex', async () => {
    await openKey('bin');
    expect(await page.textContent('#string-value')).toBe('00 ff 10 41');
  });

  it('shows a string as text, as a JSON tree or as hex, and its TTL', async () => {
    await command(p, ['SET', 'session:1', '{"user":1,"cart":[3,7]}', 'EX', '3600']);
    await openKey('session:1');
    expect(await page.textContent('#string-value')).toBe('{"user":1,"cart":[3,7]}');
    expect(await page.textContent('#key-ttl')).toMatch(/^TTL 3[56]\d\d s/);
    await page.selectOption('select[name=mode]', 'json');
    await page.waitForSelector('#string-value details.json');
    expect(await page.$$eval('#string-value .json-key', (els) => els.map((e) => e.textContent))).toEqual(['user', 'cart', '0', '1']);
    await page.selectOption('select[name=mode]', 'hex');
    expect(await page.textContent('#string-value')).toMatch(/^7b 22 75 73 65 72 22/);
  });

  it('creates, edits, expires, renames and deletes keys, checked through the REST API', async () => {
    await page.click('#add-key');
    await page.selectOption('select[name=new-type]', 'hash');
    await page.fill('input[name=new-key]', 'made:1');
    await page.fill('input[name=new-field]', 'f');
    await page.fill('input[name=new-value]', 'v1');
    await page.click('#new-key-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#key-title')?.textContent === 'made:1');
    expect((await command(p, ['HGET', 'made:1', 'f'])).json.result).toBe('v1');

    await page.fill('#add-member input[name=field]', 'g');
    await page.fill('#add-member input[name=value]', 'v2');
    await page.click('#add-member button');
    await page.waitForSelector('.detail .note.ok');
    expect((await command(p, ['HGET', 'made:1', 'g'])).json.result).toBe('v2');

    await page.fill('input[name=expire]', '500');
    await page.click('#expire');
    await page.waitForFunction(() => document.querySelector('#key-ttl')?.textContent?.startsWith('TTL'));
    expect((await command(p, ['TTL', 'made:1'])).json.result).toBeGreaterThan(490);

    await page.fill('input[name=rename]', 'made:2');
    await page.click('#rename');
    await page.waitForFunction(() => document.querySelector('#key-title')?.textContent === 'made:2');
    expect((await command(p, ['EXISTS', 'made:1', 'made:2'])).json.result).toBe(1);

    await openKey('doc');
    await page.fill('#edit-json textarea', '{"a":3}');
    await page.click('#edit-json button');
    await page.waitForSelector('.detail .note.ok');
    expect((await command(p, ['JSON.GET', 'doc'])).json.result).toBe('{"a":3}');

    await openKey('made:2');
    await page.click('#delete');
    await page.waitForSelector('.detail .note.ok');
    expect((await command(p, ['EXISTS', 'made:2'])).json.result).toBe(0);
  });

  it('creates a key of each type with its first value, then adds to it, checked through the REST API', async () => {
    const cases: Array<{
      type: string;
      first: Record<string, string>;
      more: Record<string, string>;
      check: (string | number)[];
      want: unknown;
    }> = [
      { type: 'string', first: { value: 'v1' }, more: {}, check: ['GET', 'new:string'], want: 'v1' },
      { type: 'list', first: { element: 'a' }, more: { element: 'b' }, check: ['LRANGE', 'new:list', 0, -1], want: ['a', 'b'] },
      {
        type: 'set',
        first: { member: 'a' },
        more: { member: 'b' },
        check: ['SMEMBERS', 'new:set'],
        want: expect.arrayContaining(['a', 'b']),
      },
      {
        type: 'zset',
        first: { score: '2', member: 'a' },
        more: { score: '1', member: 'b' },
        check: ['ZRANGE', 'new:zset', 0, -1],
        want: ['b', 'a'],
      },
      { type: 'stream', first: { field: 'f', value: '1' }, more: { field: 'g', value: '2' }, check: ['XLEN', 'new:stream'], want: 2 },
      { type: 'ReJSON-RL', first: { document: '{"n":1}' }, more: {}, check: ['JSON.GET', 'new:ReJSON-RL'], want: '{"n":1}' },
    ];
    for (const c of cases) {
      const key = `new:${c.type}`;
      await page.click('#add-key');
      await page.selectOption('select[name=new-type]', c.type);
      await page.fill('input[name=new-key]', key);
      for (const [name, value] of Object.entries(c.first)) await page.fill(`input[name=new-${name}]`, value);
      await page.click('#new-key-form button[type=submit]');
      await page.waitForFunction((k) => document.querySelector('#key-title')?.textContent === k, key);
      expect(await page.textContent('#key-type'), key).toBe(c.type);
      if (Object.keys(c.more).length > 0) {
        for (const [name, value] of Object.entries(c.more)) await page.fill(`#add-member input[name=${name}]`, value);
        await page.click('#add-member button');
        await page.waitForSelector('.detail .note.ok');
      }
      expect((await command(p, c.check)).json.result, key).toEqual(c.want);
    }
    await openKey('new:string');
    await page.fill('#edit-string textarea', 'v2');
    await page.click('#edit-string button');
    await page.waitForSelector('.detail .note.ok');
    expect((await command(p, ['GET', 'new:string'])).json.result).toBe('v2');
    await page.selectOption('#edit-string select[name=edit-as]', 'hex');
    await page.fill('#edit-string textarea', '00ff');
    await page.click('#edit-string button');
    await page.waitForFunction(() => document.querySelector('#string-value')?.textContent === '00 ff');
    expect((await kv(p, '/get/new:string', { headers: { 'Upstash-Encoding': 'base64' } })).json.result).toBe('AP8=');
  });

  it('runs a command from the command box and shows its reply', async () => {
    await page.fill('input[name=command]', 'ZRANGE board 0 -1 WITHSCORES');
    await page.click('#run');
    await page.waitForSelector('#command-reply ol');
    expect(await page.locator('#command-reply li').allTextContents()).toEqual(['bob', '7.5', 'ada', '10']);
    await page.fill('input[name=command]', 'GET "bin"');
    await page.click('#run');
    await page.waitForSelector('#command-reply .bin');
    expect(await page.textContent('#command-reply')).toContain('00 ff 10 41');
    await page.fill('input[name=command]', 'NOSUCH x');
    await page.click('#run');
    await page.waitForSelector('#command-reply .note.error');
  });

  it("splits command lines as redis-cli does, and tells text from binary (the page's own modules)", async () => {
    // Evaluated as text: vitest would rewrite an import() written in a function here.
    const split = (line: string) =>
      page.evaluate(
        `import('./js/command-line.js').then(({ splitCommandLine }) => {
          try { return splitCommandLine(${JSON.stringify(line)}).map((a) => Array.from(a)); } catch (err) { return String(err); }
        })`,
      );
    const bytes = (s: string) => Array.from(Buffer.from(s, 'latin1'));
    expect(await split('SET  "a b" \'c"d\' x\\y')).toEqual([bytes('SET'), bytes('a b'), bytes('c"d'), bytes('x\\y')]);
    expect(await split('SET k "\\x00\\xff\\n\\"q"')).toEqual([bytes('SET'), bytes('k'), [0, 255, 10, 34, 113]]);
    expect(await split('SET "é"')).toEqual([bytes('SET'), [0xc3, 0xa9]]);
    expect(await split('  ')).toEqual([]);
    expect(await split('GET "open')).toBe('Error: unbalanced " quotes');
    expect(await split('GET "a"b')).toBe('Error: closing quote must be followed by a space');
    const text = (b: number[]) =>
      page.evaluate(`import('./js/bytes.js').then(({ asText }) => asText(new Uint8Array(${JSON.stringify(b)})) ?? null)`);
    expect(await text(bytes('tab\tand\nnewline'))).toBe('tab\tand\nnewline');
    expect(await text([0x41, 0x00])).toBeNull();
    expect(await text([0xc3])).toBeNull();
  });

  it('gives the Read Only token no way to change data', async () => {
    const ro = await openConsole(browser, p, p.readonlyToken, errors);
    await ro.waitForSelector('.status .note.error');
    expect(await ro.locator('#add-key').count()).toBe(0);
    await ro.fill('input[name=open]', 'user:1');
    await ro.click('#open');
    await ro.waitForSelector('#members');
    expect(await ro.textContent('#members')).toContain('Ada');
    expect(await ro.locator('#delete, #rename, #add-member, .detail button.danger').count()).toBe(0);
    await ro.fill('input[name=command]', 'DEL user:1');
    await ro.click('#run');
    await ro.waitForSelector('#command-reply .note.error');
    expect(await ro.textContent('#command-reply')).toContain('NOPERM');
    expect((await command(p, ['EXISTS', 'user:1'])).json.result).toBe(1);
    await ro.close();
  });

  it('threw no error in the page', () => {
    expect(errors).toEqual([]);
  });
});
