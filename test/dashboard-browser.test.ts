import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { browserRunnable, launchChromium } from './helpers/browser.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverConfig, signPaymos } from './helpers/receiver.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'dashboard-browser-admin-token';

/** The panel in Debian's Chromium against a real tekil (receiver + api) on Postgres. */
describe.skipIf(!browserRunnable)('the panel in a browser', () => {
  let t: TestDb;
  let tekil: RunningTekil;
  let browser: Browser;
  let page: Page;

  const status = async (eventId: string) =>
    (await tekil.ctx.db.query<{ status: string }>('SELECT status FROM inbox_deliveries WHERE event_id = $1', [eventId])).rows[0]?.status;

  beforeAll(async () => {
    t = await createTestDb();
    const env = { ...process.env, TEKIL_ADMIN_TOKEN: ADMIN, TEKIL_DATA_DIR: mkdtempSync(join(tmpdir(), 'tekil-browser-')), DATABASE_URL: t.url ?? '' };
    tekil = await startTekil({
      config: receiverConfig(),
      roles: ['receiver', 'api'],
      env,
      port: 0,
      host: '127.0.0.1',
      logger: createLogger({ level: 'silent' }),
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 640 } });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await tekil?.close();
    await t?.close();
  });

  it('refuses a wrong token, signs in, shows a signed webhook live, and replays it from its detail', async () => {
    const res = await page.goto(tekil.url);
    expect(res?.headers()['content-security-policy']).toMatch(/script-src 'self'/);
    await page.locator('#token').fill('not-the-token');
    await page.locator('#sign-in button[type=submit]').click();
    await page.locator('#sign-in-error', { hasText: 'Wrong token.' }).waitFor();

    await page.locator('#token').fill(ADMIN);
    await page.locator('#sign-in button[type=submit]').click();
    await page.locator('#inbound').waitFor();
    expect(await page.locator('#sign-in').isHidden()).toBe(true);
    await page.locator('#live.on').waitFor();

    // A webhook sent now appears without a reload.
    const body = paymosBody('evt_browser_1');
    const signed = signPaymos(body);
    const sent = await request(`${tekil.url}/in/shop`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signed } });
    await sent.body.text();
    expect(sent.statusCode).toBe(200);
    const row = page.locator('tr[data-key="shop/evt_browser_1"]');
    await row.waitFor();

    // It fails for good (as a worker would record it), then is replayed from its detail.
    await tekil.ctx.db.query(`UPDATE inbox_deliveries SET status = 'dead', attempts = 3, last_error = 'handler threw' WHERE event_id = 'evt_browser_1'`);
    await tekil.ctx.db.query(`UPDATE inbox_queue SET dead = true WHERE event_id = 'evt_browser_1'`);
    await row.click();
    await page.locator('#detail').waitFor();
    expect(await page.locator('#detail-body').textContent()).toContain('"event_id": "evt_browser_1"');
    expect(await page.locator('[data-field="status"]').textContent()).toBe('dead');
    // No worker ran it: the attempts table says so in the delivery page's own words (not Outbound's).
    expect(await page.locator('#attempts td.empty').textContent()).toBe('No attempt yet.');
    // The kept headers as text; no signature among them.
    const headers = (await page.locator('#detail-headers').textContent()) ?? '';
    expect(headers).toContain('content-type: application/json');
    for (const [name, value] of Object.entries(signed)) if (/signature/i.test(name)) expect(headers).not.toContain(value);
    await page.locator('#replay').click();
    await page.locator('#detail-message', { hasText: 'Replayed: now pending.' }).waitFor();
    await waitUntil(async () => (await status('evt_browser_1')) === 'pending');

    // The switch puts the panel in Turkish, without a reload.
    await page.selectOption('#lang', 'tr');
    expect(await page.locator('#back').textContent()).toBe('← Gelen');
    expect(await page.locator('#detail-message').textContent()).toBe('Replayed: now pending.');
    expect(await page.locator('dt[data-i18n="status"]').textContent()).toBe('durum');
    await page.locator('#back').click();
    await page.locator('#inbound th[data-i18n="eventId"]', { hasText: 'olay kimliği' }).waitFor();

    // No token in a URL or in script-readable storage; the cookie is not readable by script.
    expect(page.url()).not.toContain(ADMIN);
    // Evaluated in the page (a string, since this file is compiled without the DOM's types).
    expect(await page.evaluate('[document.cookie, JSON.stringify(localStorage), JSON.stringify(sessionStorage)]')).toEqual(['', '{}', '{}']);
  }, 60_000);

  it('a browser in Turkish gets the panel in Turkish; a viewer there sees no replay button', async () => {
    const made = await request(`${tekil.url}/api/v1/operators`, {
      method: 'POST',
      body: JSON.stringify({ name: 'browser-viewer', role: 'viewer' }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    });
    const { token } = (await made.body.json()) as { token: string };
    await tekil.ctx.db.query(`UPDATE inbox_deliveries SET status = 'dead' WHERE event_id = 'evt_browser_1'`);
    await tekil.ctx.db.query(`UPDATE inbox_queue SET dead = true WHERE event_id = 'evt_browser_1'`);
    const context = await browser.newContext({ locale: 'tr-TR' });
    const viewerPage = await context.newPage();
    await viewerPage.goto(tekil.url);
    expect(await viewerPage.locator('#sign-in button[type=submit]').textContent()).toBe('Giriş yap');
    await viewerPage.locator('#token').fill(token);
    await viewerPage.locator('#sign-in button[type=submit]').click();
    await viewerPage.locator('tr[data-key="shop/evt_browser_1"]').click();
    await viewerPage.locator('[data-field="status"]', { hasText: 'dead' }).waitFor();
    expect(await viewerPage.locator('#replay').isHidden()).toBe(true);
    expect(await viewerPage.locator('#discard').isHidden()).toBe(true);
    await context.close();
  }, 60_000);
});
