import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunnable, screenshot, startPanel, type Panel } from './helpers/browser.js';

const ADMIN = 'panel-tenants-admin-token';

/**
 * The Tenants page in Chromium against a real tekil on Postgres: two merchants, one of them with an
 * endpoint whose circuit breaker is open. The page lists both with their health, a search narrows to
 * one, and "Open portal" lands a new tab on that merchant's portal, signed in as that merchant.
 */
describe.skipIf(!browserRunnable)('panel: the tenants page', () => {
  let panel: Panel;
  let page: Page;

  const row = (id: string) => page.locator(`#tenants-rows tr[data-id="${id}"]`);

  beforeAll(async () => {
    panel = await startPanel(ADMIN);
    const db = panel.t.db;
    await db.query(`INSERT INTO tenants (id, name) VALUES ('m_alpha', 'Alpha Apparel'), ('m_beta', 'Beta Books')`);
    await db.query(
      `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight, failed_attempts_in_row) VALUES
         ('ep_alpha', 'm_alpha', 'https://alpha.example/hooks', 5000, 4, 0),
         ('ep_beta_down', 'm_beta', 'https://beta.example/down', 5000, 4, 40),
         ('ep_beta_up', 'm_beta', 'https://beta.example/up', 5000, 4, 0)`,
    );
    // Alpha's deliveries all succeeded; Beta's first endpoint failed its last ones.
    await db.query(
      `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, last_attempt_at)
       SELECT e.tenant_id, x.* FROM (
         SELECT 'msg_a' || g, 'ep_alpha', 'succeeded', 1, now() FROM generate_series(1, 8) g
         UNION ALL SELECT 'msg_b' || g, 'ep_beta_down', 'failed', 5, now() FROM generate_series(1, 3) g
         UNION ALL SELECT 'msg_c' || g, 'ep_beta_up', 'succeeded', 1, now() FROM generate_series(1, 1) g
       ) x (message_id, endpoint_id, status, attempts, last_attempt_at) JOIN endpoints e ON e.id = x.endpoint_id`,
    );
    await db.query(
      `INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) SELECT tenant_id, id, endpoint_id, true FROM outbox_deliveries WHERE status = 'failed'`,
    );
    page = (await panel.newPage()).page;
    await panel.signIn(page);
  }, 60_000);
  afterAll(async () => panel?.close());

  it('lists the tenants with their health, and searches', async () => {
    await page.locator('#nav a[data-page="tenants"]').click();
    await row('m_beta')
      .waitFor({ timeout: 10_000 })
      .catch(async (err: unknown) => {
        throw new Error(`the tenants page shows: ${await page.locator('#page-tenants').innerHTML()}`, { cause: err });
      });
    expect(await row('m_alpha').innerText()).toMatch(/Alpha Apparel[\s\S]*100%/);
    const beta = row('m_beta');
    expect(await beta.getAttribute('data-failing')).toBe('1');
    expect(await beta.locator('.failing').innerText()).toBe('1');
    expect(await beta.locator('.failing').getAttribute('title')).toBe('ep_beta_down: circuit breaker open');
    expect(await beta.innerText()).toMatch(/Beta Books[\s\S]*25%/);
    await screenshot(page, 'tenants');

    await page.locator('#tenants-filter input[name=q]').fill('books');
    await page.locator('#tenants-filter button[type=submit]').click();
    await expect.poll(() => page.locator('#tenants-rows tr').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('#tenants-rows tr').getAttribute('data-id')).toBe('m_beta');
    await page.locator('#tenants-filter input[name=q]').fill('nobody');
    await page.locator('#tenants-filter button[type=submit]').click();
    await page.locator('#tenants-rows td.empty').waitFor();
  }, 60_000);

  it("opens a tenant's portal in a new tab, signed in as that tenant", async () => {
    await page.locator('#tenants-filter button[type=button]').click(); // clear the search
    await row('m_alpha').waitFor();
    const [tab] = await Promise.all([page.context().waitForEvent('page'), row('m_alpha').locator('button.open-portal').click()]);
    await tab.waitForURL(/\/portal\/$/, { timeout: 15_000 });
    expect(new URL(tab.url()).origin).toBe(panel.tekil.url);
    const session = await tab.evaluate(async () => (await fetch('/api/v1/session', { credentials: 'same-origin', headers: { 'x-tekil-portal': '1' } })).json());
    expect(session).toMatchObject({ role: 'viewer', tenant: { id: 'm_alpha', name: 'Alpha Apparel' } });
    // The portal's session sees its own tenant only: the health of every tenant is not for it.
    expect(
      await tab.evaluate(async () => (await fetch('/api/v1/stats/tenants', { credentials: 'same-origin', headers: { 'x-tekil-portal': '1' } })).status),
    ).toBe(404);
    await page.locator('#tenants-note').getByText('The portal opened in a new tab.').waitFor();
  }, 60_000);
});
