import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunnable, screenshot, startPanel, type Panel } from './helpers/browser.js';

const ADMIN = 'panel-incidents-admin-token';

/** The Incidents page in Chromium against a real tekil: open and closed incidents, the banner, the filter. */
describe.skipIf(!browserRunnable)('panel: incidents', () => {
  let panel: Panel;
  let page: Page;

  beforeAll(async () => {
    panel = await startPanel(ADMIN);
    await panel.t.db.query(`INSERT INTO incidents (rule, subject, opened_at, closed_at, last_value, details) VALUES
      ('review_queue', 'shop-paymos', now() - interval '2 hours', now() - interval '1 hour', 3, '{"summary": "source shop-paymos: 3 deliveries wait in the review queue"}'),
      ('endpoint_failing', 'ep_panel', now() - interval '5 minutes', NULL, 7, '{"summary": "endpoint ep_panel failed 7 attempts in a row"}')`);
    page = (await panel.newPage()).page;
    await panel.signIn(page);
  }, 60_000);
  afterAll(async () => panel?.close());

  it('lists open and closed incidents with a banner while one is open, and filters by state', async () => {
    await page.locator('#nav a[data-page="incidents"]').click();
    await page.locator('#incidents-rows tr[data-state="open"]').waitFor();
    expect(await page.locator('#incidents-rows tr').count()).toBe(2);
    expect(await page.locator('#incidents-banner').textContent()).toBe('1 incident is open.');
    expect(await page.locator('#incidents-rows tr[data-state="open"]').textContent()).toContain('endpoint ep_panel failed 7 attempts in a row');
    await screenshot(page, 'incidents');
    await page.locator('#incidents-state').selectOption('closed');
    await page.locator('#incidents-form button[type=submit]').click();
    await page.locator('#incidents-rows tr[data-state="open"]').waitFor({ state: 'detached' });
    // The table is emptied before the filtered rows arrive: wait for them.
    await expect.poll(() => page.locator('#incidents-rows tr').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('#incidents-rows tr').textContent()).toContain('review_queue');
  }, 60_000);
});
