import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunnable, startPanel, type Panel } from './helpers/browser.js';

const ADMIN = 'panel-audit-admin-token';

/** The Audit page in Chromium against a real tekil: the panel's own sign-in is the first row, a filter narrows. */
describe.skipIf(!browserRunnable)('panel: the audit page', () => {
  let panel: Panel;
  let page: Page;

  beforeAll(async () => {
    panel = await startPanel(ADMIN);
    page = (await panel.newPage()).page;
    await panel.signIn(page);
  }, 60_000);
  afterAll(async () => panel?.close());

  it('lists the sign-in, and filters by route', async () => {
    await page.locator('#nav a[data-page="audit"]').click();
    const signIn = page.locator('#audit-rows tr', { hasText: '/api/v1/session' }).first();
    await signIn.waitFor({ timeout: 10_000 }).catch(async (err: unknown) => {
      throw new Error(`the audit page shows: ${await page.locator('#page-audit').innerHTML()}`, { cause: err });
    });
    expect(await signIn.innerText()).toMatch(/admin[\s\S]*POST[\s\S]*201/);
    // What a change was made to reads as words, not JSON.
    const made = await fetch(`${panel.tekil.url}/api/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'm_audit', name: 'Audited' }),
    });
    expect(made.status).toBe(201);
    await page.reload();
    const creation = page.locator('#audit-rows tr', { hasText: '/api/v1/tenants' }).first();
    await creation.waitFor({ timeout: 10_000 });
    expect(await creation.innerText()).toContain('id m_audit · body: id=m_audit, name=Audited');
    expect(await creation.innerText()).not.toContain('{"');
    // On a narrow window the wide table scrolls in its own box: the page, and the header bar, keep the window's width.
    await page.setViewportSize({ width: 480, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    expect(await page.evaluate("document.querySelector('header').getBoundingClientRect().width")).toBe(480);
    expect(await page.evaluate("document.querySelector('.table-scroll').scrollWidth > 480")).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.locator('#audit-filter input[name=route]').fill('/api/v1/nothing');
    await page.locator('#audit-filter button[type=submit]').click();
    await page.locator('#audit-rows td.empty').waitFor();
  }, 60_000);
});
