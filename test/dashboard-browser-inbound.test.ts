import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { PDFParse } from 'pdf-parse';
import type { Download, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCE } from './helpers/inbox.js';
import { browserRunnable, screenshot, startPanel, type Panel } from './helpers/browser.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'panel-inbound-admin-token';
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
const saved = async (download: Download) => readFileSync((await download.path())!);

/** The Inbound page, a delivery's detail, exports and the Resource timeline, in Chromium against a real tekil. */
describe.skipIf(!browserRunnable)('panel: Inbound, detail, exports and the resource timeline', () => {
  let panel: Panel;
  let page: Page;

  beforeAll(async () => {
    panel = await startPanel(ADMIN);
    page = (await panel.newPage()).page;
    await panel.signIn(page);
  }, 60_000);
  afterAll(async () => panel?.close());

  it('a signed webhook appears live; its detail has the body pretty and raw and its attempts', async () => {
    await page.locator('#live.on').waitFor();
    expect(await panel.send({ eventId: 'evt_in_paid', invoiceId: 'inv_in', status: 'paid', occurredAt: minutesAgo(1) })).toBe(200);
    const row = page.locator('tr[data-key="shop-paymos/evt_in_paid"]');
    await row.waitFor();
    // The worker settles it; the change arrives over the stream too.
    await page.locator('tr[data-key="shop-paymos/evt_in_paid"][data-status="done"]').waitFor();
    await screenshot(page, 'inbound-live');

    await row.click();
    await page.locator('#detail').waitFor();
    expect(await page.locator('[data-field="status"]').textContent()).toBe('done');
    expect(await page.locator('#detail-body').textContent()).toContain('\n  "event_id": "evt_in_paid"');
    await page.locator('#body-raw').click();
    const raw = (await page.locator('#detail-body').textContent()) ?? '';
    expect(raw.startsWith('{"event_id":"evt_in_paid"')).toBe(true);
    expect(raw).not.toContain('\n');
    await page.locator('#body-pretty').click();
    expect(await page.locator('#attempts tr').count()).toBe(1);
    expect(await page.locator('#attempts td.outcome-done').textContent()).toBe('done');
    const headers = (await page.locator('#detail-headers').textContent()) ?? '';
    expect(headers).toContain('content-type: application/json');
    expect(headers).not.toMatch(/signature/i);
    await screenshot(page, 'delivery', { fullPage: true });
  }, 60_000);

  it('the resource timeline shows the late event as stale with the ordering guard’s reason', async () => {
    // Confirming happened before paid but arrives after it was applied: the guard skips it.
    await panel.send({ eventId: 'evt_in_conf', invoiceId: 'inv_in', status: 'confirming', occurredAt: minutesAgo(3) });
    await waitUntil(async () => (await panel.status('evt_in_conf')) === 'stale');
    await page.locator('#detail-timeline').click();
    await page.locator('#timeline-rows tr[data-key="shop-paymos/evt_in_paid"]').waitFor();
    const verdicts = await page
      .locator('#timeline-rows tr')
      .evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { key: string; verdict: string } }).dataset));
    expect(verdicts).toEqual([
      { key: 'shop-paymos/evt_in_conf', verdict: 'stale' },
      { key: 'shop-paymos/evt_in_paid', verdict: 'applied' },
    ]);
    expect(await page.locator('#timeline-rows tr').first().textContent()).toContain('terminal state paid (event evt_in_paid)');
    expect(await page.locator('#timeline-current').textContent()).toContain('now paid (applied last: evt_in_paid)');
    await screenshot(page, 'timeline');
  }, 60_000);

  it('filters, pages by cursor, and exports the filtered list as CSV, Excel and PDF', async () => {
    // 130 more deliveries of another type, stored as the receiver would (not timed through HTTP).
    await panel.t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, status, attempts, received_at, processed_at)
       SELECT $1, 'evt_bulk_' || lpad(i::text, 3, '0'), 'inv_bulk', 'invoice.expired', convert_to('{}', 'UTF8'), 'done', 1 + i % 3,
              now() - i * interval '1 second', now()
       FROM generate_series(1, 130) AS i`,
      [SOURCE],
    );
    await page.locator('#nav a[data-page="inbound"]').click();
    await page.locator('#inbound-filter-type').fill('invoice.expired');
    await page.locator('#inbound-filter button[type=submit]').click();
    await page.locator('#rows tr[data-key="shop-paymos/evt_bulk_001"]').waitFor();
    expect(await page.locator('#rows tr').count()).toBe(100);
    await page.locator('#next-page').click();
    await page.locator('#rows tr[data-key="shop-paymos/evt_bulk_130"]').waitFor();
    expect(await page.locator('#rows tr').count()).toBe(30);
    expect(await page.locator('#next-page').isDisabled()).toBe(true);
    await page.locator('#previous-page').click();
    await page.locator('#rows tr[data-key="shop-paymos/evt_bulk_001"]').waitFor();

    // attempts ≥ 3: every third of them (i % 3 = 2 → 44 rows).
    await page.locator('#inbound-filter-min_attempts').fill('3');
    await page.locator('#inbound-filter button[type=submit]').click();
    await page.locator('#rows tr[data-key="shop-paymos/evt_bulk_002"]').waitFor();
    expect(await page.locator('#rows tr').count()).toBe(43);

    const csv = (await saved(await Promise.all([page.waitForEvent('download'), page.locator('#export-csv').click()]).then(([d]) => d))).toString('utf8');
    const lines = csv.trim().split('\n');
    expect(lines).toHaveLength(44);
    expect(lines[1]).toContain('evt_bulk_002');

    const [xlsxDownload] = await Promise.all([page.waitForEvent('download'), page.locator('#export-xlsx').click()]);
    expect(xlsxDownload.suggestedFilename()).toBe('tekil-inbox.xlsx');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await saved(xlsxDownload)) as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.getRow(1).getCell(3).value).toBe('event id');
    expect(sheet.getRow(2).getCell(3).value).toBe('evt_bulk_002');
    expect(sheet.actualRowCount).toBe(44);

    const [pdfDownload] = await Promise.all([page.waitForEvent('download'), page.locator('#export-pdf').click()]);
    const parser = new PDFParse({ data: new Uint8Array(await saved(pdfDownload)) });
    const text = (await parser.getText()).text;
    await parser.destroy();
    expect(text).toContain('type = invoice.expired, min_attempts = 3');
    expect(text).toContain('Totals: 43 rows (done 43)');
    expect(text).toContain('evt_bulk_128');
    await screenshot(page, 'inbound-filtered');
  }, 60_000);

  it('switches to Turkish without a reload; no URL the browser asked for holds a token', async () => {
    await page.selectOption('#lang', 'tr');
    expect(await page.locator('#nav a[data-page="inbound"]').textContent()).toBe('Gelen');
    expect(await page.locator('#inbound th[data-i18n="eventId"]').textContent()).toBe('olay kimliği');
    expect(await page.locator('#next-page').textContent()).toBe('Sonraki →');
    await page.locator('#nav a[data-page="review"]').click();
    await page.locator('#review h1', { hasText: 'İnceleme kuyruğu' }).waitFor();
    await screenshot(page, 'review-tr');
    expect(panel.urls.length).toBeGreaterThan(10);
    for (const url of panel.urls) expect(url).not.toMatch(new RegExp(`${ADMIN}|token=`));
  }, 60_000);
});
