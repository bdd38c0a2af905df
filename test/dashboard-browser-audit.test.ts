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
    await page.locator('#audit-filter input[name=route]').fill('/api/v1/nothing');
    await page.locator('#audit-filter button[type=submit]').click();
    await page.locator('#audit-rows td.empty').waitFor();
  }, 60_000);
});
