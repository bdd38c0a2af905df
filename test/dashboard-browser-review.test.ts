import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunnable, screenshot, startPanel, type Panel } from './helpers/browser.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'panel-review-admin-token';

/** The Review queue in Chromium against a real tekil whose worker runs: one replay, a bulk job, a viewer. */
describe.skipIf(!browserRunnable)('panel: the review queue', () => {
  let panel: Panel;
  let page: Page;
  const dead = ['evt_rq_1', 'evt_rq_2', 'evt_rq_3', 'evt_rq_4'];

  beforeAll(async () => {
    panel = await startPanel(ADMIN);
    // The paid handler fails until told otherwise: with 3 attempts each delivery ends dead.
    panel.failing.paid = true;
    for (const [i, eventId] of dead.entries()) expect(await panel.send({ eventId, invoiceId: `inv_rq_${i}`, status: 'paid' })).toBe(200);
    await waitUntil(async () => (await Promise.all(dead.map((id) => panel.status(id)))).every((s) => s === 'dead'), 20_000, 'the four deliveries end dead');
    panel.failing.paid = false;
    page = (await panel.newPage()).page;
    await panel.signIn(page);
  }, 60_000);
  afterAll(async () => panel?.close());

  it('a dead delivery replayed from the queue turns done', async () => {
    await page.locator('#nav a[data-page="review"]').click();
    await page.locator('#review-rows tr[data-key="shop-paymos/evt_rq_1"]').waitFor();
    expect(await page.locator('#review-rows tr').count()).toBe(4);
    await screenshot(page, 'review');
    await page.locator('#review-rows tr[data-key="shop-paymos/evt_rq_1"] input[type=checkbox]').check();
    await page.locator('#replay-selected').click();
    await page.locator('#review-message', { hasText: '1 done, 0 skipped' }).waitFor();
    await waitUntil(async () => (await panel.status('evt_rq_1')) === 'done', 10_000, 'the replayed delivery is done');
    await page.locator('#dry-run').click();
    await page.locator('#dry-run-count', { hasText: '3 dead deliveries match.' }).waitFor();
  }, 60_000);

  it('replays everything matching a filter as a job: dry-run count, progress, every row done', async () => {
    // Narrowed to two of the three left by their minimum attempts and a time window around now.
    await panel.t.db.query("UPDATE inbox_queue SET attempts = 5 WHERE event_id IN ('evt_rq_2', 'evt_rq_3')");
    await page.locator('#review-filter-min_attempts').fill('5');
    await page.locator('#review-filter button[type=submit]').click();
    await page.locator('#review-rows tr[data-key="shop-paymos/evt_rq_4"]').waitFor({ state: 'detached' });
    await page.locator('#dry-run').click();
    await page.locator('#dry-run-count', { hasText: '2 dead deliveries match.' }).waitFor();
    await page.locator('#replay-all').click();
    await page.locator('#job-status[data-status="done"]').waitFor();
    expect(await page.locator('#job-status').textContent()).toBe('inbox.replay done: 2 / 2 (changed 2, skipped 0)');
    await waitUntil(
      async () => (await panel.status('evt_rq_2')) === 'done' && (await panel.status('evt_rq_3')) === 'done',
      10_000,
      'both replayed deliveries are done',
    );
    expect(await panel.status('evt_rq_4')).toBe('dead');
    await page.locator('#review-rows td.empty').waitFor();
    await screenshot(page, 'review-job');
  }, 60_000);

  it('a viewer sees the queue with no replay or discard, and the API refuses one anyway', async () => {
    const token = await panel.createOperator('panel-viewer', 'viewer');
    const { context, page: viewer } = await panel.newPage();
    await panel.signIn(viewer, token);
    await viewer.locator('#nav a[data-page="review"]').click();
    await viewer.locator('#review-rows tr[data-key="shop-paymos/evt_rq_4"]').waitFor();
    for (const id of ['#replay-selected', '#discard-selected', '#replay-all', '#discard-all', '#review-rows input[type=checkbox]'])
      expect(await viewer.locator(id).count()).toBe(0);
    await viewer.locator('#dry-run').click();
    await viewer.locator('#dry-run-count', { hasText: '1 dead delivery matches.' }).waitFor();
    await viewer.locator('#review-rows tr[data-key="shop-paymos/evt_rq_4"]').click();
    await viewer.locator('[data-field="status"]', { hasText: 'dead' }).waitFor();
    expect(await viewer.locator('#replay').count()).toBe(0);
    expect(await viewer.locator('#discard').count()).toBe(0);
    // The same call the button would make, from the viewer's page with its session and CSRF token.
    const refused = await viewer.evaluate(`(async () => {
      const { csrf_token } = await (await fetch('/api/v1/session')).json();
      const res = await fetch('/api/v1/inbox/shop-paymos/evt_rq_4/replay', { method: 'POST', headers: { 'x-tekil-csrf': csrf_token } });
      return [res.status, (await res.json()).error];
    })()`);
    expect(refused).toEqual([403, 'FORBIDDEN']);
    expect(await panel.status('evt_rq_4')).toBe('dead');
    await context.close();
    for (const url of panel.urls) expect(url).not.toMatch(new RegExp(`${ADMIN}|${token}|token=`));
  }, 60_000);

  it('an operator discards a selected dead delivery after confirming', async () => {
    await page.locator('#nav a[data-page="review"]').click();
    await page.locator('#review-filter-clear').click();
    await page.locator('#review-rows tr[data-key="shop-paymos/evt_rq_4"] input[type=checkbox]').check();
    await page.locator('#discard-selected').click();
    await page.locator('#confirm-text', { hasText: 'Discard 1 delivery for good?' }).waitFor();
    await page.locator('#confirm-ok').click();
    await page.locator('#review-message', { hasText: '1 done, 0 skipped' }).waitFor();
    expect(await panel.status('evt_rq_4')).toBe('discarded');
    await page.locator('#review-rows td.empty').waitFor();
  }, 60_000);

  it('a bulk job can be cancelled part-way: what it did stays done, the rest stays dead', async () => {
    // Enough dead deliveries (stored as the receiver would) that the job is still running when cancelled.
    await panel.t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, status, attempts)
       SELECT 'shop-paymos', 'evt_many_' || i, 'inv_many', 'invoice.many', convert_to('{}', 'UTF8'), 'dead', 3 FROM generate_series(1, 3000) AS i`,
    );
    await page.locator('#review-filter-type').fill('invoice.many');
    await page.locator('#review-filter button[type=submit]').click();
    await page.locator('#dry-run').click();
    await page.locator('#dry-run-count', { hasText: '3000 dead deliveries match.' }).waitFor();
    await page.locator('#discard-all').click();
    await page.locator('#confirm-ok').click();
    await page.locator('#job-cancel:visible').click();
    await page.locator('#job-status[data-status="cancelled"]').waitFor();
    const counts = await panel.t.db.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM inbox_deliveries WHERE event_type = 'invoice.many' GROUP BY status ORDER BY status",
    );
    const by = Object.fromEntries(counts.rows.map((r) => [r.status, r.n]));
    expect(by.discarded).toBeGreaterThan(0);
    expect(by.dead).toBeGreaterThan(0);
    expect(await page.locator('#job-status').textContent()).toContain(`inbox.discard cancelled: ${by.discarded} / 3000 (changed ${by.discarded}, skipped 0)`);
  }, 60_000);
});
