import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { browserRunnable, launchChromium, screenshot } from './helpers/browser.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startFramingPage, type Listening } from './helpers/embedding.js';
import { receiverConfig } from './helpers/receiver.js';
import { startSink, type Sink } from './helpers/sink.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'portal-browser-admin-token';
const A = 'm_100';
const B = 'm_200';
/** More of A's webhooks than one page of the portal holds (25), so it pages both ways. */
const A_PAID = 27;

/**
 * The merchant portal in Debian's Chromium, against a real tekil on Postgres with two tenants (two
 * merchants), each with an endpoint at its own real HTTP sink.
 */
/** The portal's own requests say so: only then is its cookie (tekil_portal) read, never the panel's. */
const PORTAL = { 'x-tekil-portal': '1' };

describe.skipIf(!browserRunnable)('the merchant portal', () => {
  let t: TestDb;
  let tekil: RunningTekil;
  let sinkA: Sink;
  let sinkB: Sink;
  let allowed: Listening;
  let other: Listening;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dataDir = '';
  const pageErrors: string[] = [];
  let endpointA = '';
  let failingA = '';
  let voidedA = '';
  /** The delivery of voidedA to A's refusing endpoint (the one to A's first endpoint succeeds). */
  let voidedRefused = '';
  let paidA = '';
  let messageB = '';

  const admin = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await request(`${tekil.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await res.body.json()) as Record<string, unknown>;
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
    return answer;
  };
  const publish = async (tenant: string, type: string, resourceId: string) =>
    String((await admin('POST', '/messages', { tenant_id: tenant, type, resource_id: resourceId, data: { invoice: resourceId } })).id);
  const portalLink = async (tenant: string) => String((await admin('POST', `/tenants/${tenant}/portal-links`, { role: 'operator' })).url);
  /** Every delivery of a tenant's messages, as the store holds them. */
  const deliveriesOf = async (tenant: string) =>
    (
      await tekil.ctx.db.query<{ id: string; message_id: string; status: string; attempts: number }>(
        'SELECT d.id::text AS id, d.message_id, d.status, d.attempts FROM outbox_deliveries d JOIN outbox_messages m ON m.id = d.message_id WHERE m.tenant_id = $1',
        [tenant],
      )
    ).rows;
  /** The message ids a sink was sent (its `webhook-id` header). */
  const sentTo = (sink: Sink) => sink.requests.map((r) => String(r.headers['webhook-id']));
  const rows = (p: Page | ReturnType<Page['frameLocator']>) => p.locator('#deliveries tr[data-delivery]');

  beforeAll(async () => {
    t = await createTestDb();
    // A's sink refuses the invoice.failed webhooks (so a row has a code, an error and a next attempt).
    // Its second endpoint (at /hook/refuse) refuses everything.
    sinkA = await startSink((_n, req) =>
      req.path.endsWith('/refuse')
        ? { status: 500, body: 'refused' }
        : req.body.toString().includes('"invoice.failed"')
          ? { status: 503, body: 'card processor down' }
          : { status: 200, body: 'thanks from A' },
    );
    sinkB = await startSink(() => ({ status: 200, body: 'thanks from B' }));
    allowed = await startFramingPage();
    other = await startFramingPage();
    const config = receiverConfig({
      // One retry, ten minutes on: a refused webhook stays pending with its next attempt in view.
      sending: { allow_networks: ['127.0.0.0/8'], ladder: ['10m'], dispatcher: { poll_interval: '100ms' } },
      tenants: { allow_networks: ['127.0.0.0/8'] },
      portal: { name: 'Paymos', accent_color: '#0a7cff', frame_ancestors: [allowed.origin] },
    });
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-portal-'));
    const env = { ...process.env, TEKIL_ADMIN_TOKEN: ADMIN, TEKIL_DATA_DIR: dataDir, DATABASE_URL: t.url ?? '' };
    tekil = await startTekil({ config, roles: ['receiver', 'api', 'dispatcher'], env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });

    await admin('POST', '/tenants', { id: A, name: 'Kahve Dükkanı' });
    await admin('POST', '/tenants', { id: B, name: 'Kitapçı' });
    endpointA = String((await admin('POST', '/endpoints', { tenant_id: A, url: sinkA.url, description: 'shop backend' })).id);
    // A's second endpoint takes only invoice.voided (the first takes every type), and gives up after two
    // attempts a second apart.
    await admin('POST', '/endpoints', { tenant_id: A, url: `${sinkA.url}/refuse`, event_types: ['invoice.voided'], ladder: ['1s'] });
    await admin('POST', '/endpoints', { tenant_id: B, url: sinkB.url });
    for (let i = 1; i <= A_PAID; i++) {
      const id = await publish(A, 'invoice.paid', `inv_a${i}`);
      if (i === 1) paidA = id;
    }
    voidedA = await publish(A, 'invoice.voided', 'inv_a_void');
    failingA = await publish(A, 'invoice.failed', 'inv_a_fail');
    messageB = await publish(B, 'invoice.paid', 'inv_b1');
    await waitUntil(
      async () =>
        (await deliveriesOf(A)).every((d) => d.attempts >= 1) &&
        (await deliveriesOf(A)).some((d) => d.message_id === voidedA && d.status === 'failed') &&
        (await deliveriesOf(B)).every((d) => d.status === 'succeeded'),
      30_000,
      'every first attempt',
    );
    voidedRefused = (await deliveriesOf(A)).find((d) => d.message_id === voidedA && d.status === 'failed')!.id;

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1360, height: 760 }, acceptDownloads: true, locale: 'en-GB' });
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await tekil?.close();
    await sinkA?.close();
    await sinkB?.close();
    await allowed?.close();
    await other?.close();
    await t?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  let link = '';

  it("a portal link opens tenant A's portal, showing A's webhooks with every column, in English and Turkish, live", async () => {
    link = await portalLink(A);
    expect(link).toMatch(new RegExp(`^${tekil.url}/portal/link/`));
    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe('/portal/');
    await waitUntil(async () => (await rows(page).count()) === 25, 15_000, 'the first page of A');
    expect(await page.locator('#brand-name').textContent()).toBe('Paymos');
    expect(await page.locator('#tenant-name').textContent()).toBe('Kahve Dükkanı');
    expect(await page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()")).toBe('#0a7cff');
    expect(await page.locator('#webhooks-table thead th').allTextContents()).toEqual([
      'created',
      'event type',
      'target URL',
      'attempts',
      'status',
      'HTTP code',
      'response time (ms)',
      'error',
      'next attempt',
    ]);

    // Only A's: every row is one of A's messages, none of B's.
    const mine = new Set((await deliveriesOf(A)).map((d) => d.message_id));
    const shown = await rows(page).evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { message?: string } }).dataset.message ?? ''));
    expect(shown.every((id) => mine.has(id))).toBe(true);
    expect(shown).not.toContain(messageB);

    // The refused one (newest of A's, first row): its code, error and next attempt; the delivered ones theirs.
    const failing = page.locator(`#deliveries tr[data-message="${failingA}"] td`);
    const cells = await failing.allTextContents();
    expect(cells.slice(1, 7)).toEqual(['invoice.failed', sinkA.url, '1', 'pending', '503', expect.stringMatching(/^\d+$/)]);
    expect(cells[7]).not.toBe('');
    expect(cells[8]).not.toBe('');
    const given = await page.locator(`#deliveries tr[data-delivery="${voidedRefused}"] td`).allTextContents();
    expect(given.slice(1, 6)).toEqual(['invoice.voided', `${sinkA.url}/refuse`, '2', 'failed', '500']);
    expect(given[8]).toBe('');
    const delivered = await rows(page).nth(3).locator('td').allTextContents();
    expect(delivered.slice(1, 6)).toEqual(['invoice.paid', sinkA.url, '1', 'succeeded', '200']);
    expect(delivered[8]).toBe('');
    await screenshot(page, 'webhooks', { prefix: 'portal' });

    // Paging both ways.
    await page.locator('#page-older').click();
    await waitUntil(async () => (await rows(page).count()) === A_PAID + 3 - 25, 10_000, 'the second page');
    expect(await page.locator(`#deliveries tr[data-message="${paidA}"]`).count()).toBe(1);
    expect(await page.locator('#page-older').isDisabled()).toBe(true);
    await page.locator('#page-newer').click();
    await page.locator(`#deliveries tr[data-message="${failingA}"]`).waitFor();
    expect(await page.locator('#page-newer').isDisabled()).toBe(true);

    // Filters: type, status, resource id.
    await page.locator('#filter-type').fill('invoice.failed');
    await page.locator('#filters button[type=submit]').click();
    await waitUntil(async () => (await rows(page).count()) === 1, 10_000, 'the filtered list');
    await page.locator('#filter-type').fill('');
    await page.locator('#filter-status').selectOption('succeeded');
    await page.locator('#filter-resource').fill('inv_a2');
    await page.locator('#filters button[type=submit]').click();
    await waitUntil(
      async () => (await rows(page).count()) === 1 && (await page.locator('#deliveries td[data-status=succeeded]').count()) === 1,
      10_000,
      'inv_a2',
    );

    // Turkish, status words too.
    await page.locator('#lang').selectOption('tr');
    await page.locator('#deliveries td[data-status=succeeded]', { hasText: 'iletildi' }).waitFor();
    expect(await page.locator('#webhooks-table thead th').nth(1).textContent()).toBe('olay türü');
    expect(await page.locator('#nav a[data-page=webhooks]').textContent()).toBe('Webhooklar');
    await page.goto(`${tekil.url}/portal/#/webhooks`);
    await page.locator(`#deliveries tr[data-message="${failingA}"] td[data-status=pending]`, { hasText: 'bekliyor' }).waitFor();
    expect(await page.locator(`#deliveries tr[data-delivery="${voidedRefused}"] td[data-status=failed]`).textContent()).toBe('başarısız');
    await screenshot(page, 'webhooks-tr', { prefix: 'portal' });

    // Live: a webhook published while the page is open appears on it without a reload, told by the
    // tenant's event stream (the page reads the list every few seconds only while the stream is down).
    await page.locator('#live.on[data-via=stream]').waitFor();
    const reads: string[] = [];
    const record = (r: { url(): string }) => reads.push(new URL(r.url()).pathname);
    page.on('request', record);
    await new Promise((r) => setTimeout(r, 3500));
    expect(reads.filter((path) => path === '/api/v1/deliveries')).toEqual([]);
    const live = await publish(A, 'invoice.refunded', 'inv_a_live');
    await page.locator(`#deliveries tr[data-message="${live}"]`).waitFor({ timeout: 15_000 });
    page.off('request', record);
    await page.locator('#lang').selectOption('en');
  });

  it("a resend and a Send test (Test gönder) reach A's sink, and nothing reaches B's", async () => {
    const toB = sinkB.requests.length;
    // A delivery: every attempt, then Resend.
    await page.goto(`${tekil.url}/portal/#/webhooks?resource_id=inv_a1`);
    await waitUntil(async () => (await rows(page).count()) === 1, 10_000, 'the list of inv_a1');
    await rows(page).first().click();
    await page.locator(`#delivery[data-message="${paidA}"]`).waitFor();
    const first = await page.locator('#attempts tr[data-attempt="1"] td').allTextContents();
    expect(first[2]).toBe('200');
    expect(first[3]).toMatch(/^\d+$/);
    // A merchant's receiver on a non-public address: its answer's status, never an excerpt of its body.
    expect(first[5]).toBe('');
    const before = sentTo(sinkA).filter((id) => id === paidA).length;
    await page.locator('#resend').click();
    await waitUntil(() => sentTo(sinkA).filter((id) => id === paidA).length === before + 1, 15_000, 'the resend at A');
    await waitUntil(
      async () => {
        await page.reload();
        return (await page.locator('#attempts tr[data-attempt="2"]').count()) === 1;
      },
      15_000,
      'the second attempt shown',
    );
    await screenshot(page, 'delivery', { prefix: 'portal' });

    // The failing one's attempt shows the answer's code and error (no excerpt: a non-public address).
    await page.goto(`${tekil.url}/portal/#/delivery/${failingA}`);
    await page.locator(`#delivery[data-message="${failingA}"]`).waitFor();
    const refused = await page.locator('#attempts tr[data-attempt="1"] td').allTextContents();
    expect(refused[2]).toBe('503');
    expect(refused[5]).toBe('');

    // The failed ones of a window, from a failed delivery's page: this endpoint's only.
    await page.goto(`${tekil.url}/portal/#/delivery/${voidedA}/${voidedRefused}`);
    await page.locator(`#delivery[data-delivery="${voidedRefused}"]`).waitFor();
    expect(await page.locator('#attempts tr').count()).toBe(2);
    const voidedSent = sentTo(sinkA).filter((id) => id === voidedA).length;
    await page.locator('#resend-window button[type=submit]').click();
    await page.locator('#delivery-message', { hasText: '1 failed webhook(s) sent again.' }).waitFor();
    await waitUntil(() => sentTo(sinkA).filter((id) => id === voidedA).length === voidedSent + 1, 15_000, 'the failed one again at A');

    // Settings in Turkish: Test gönder.
    await page.locator('#lang').selectOption('tr');
    // An endpoint in the slow lane says so, with its recent p90 (then it is judged fast again).
    await tekil.ctx.db.query('UPDATE endpoints SET slow_p90_ms = 8200 WHERE id = $1', [endpointA]);
    await page.goto(`${tekil.url}/portal/#/settings`);
    await page.locator(`#endpoints tr[data-endpoint="${endpointA}"] .slow`, { hasText: 'yavaş: p90 8200 ms' }).waitFor();
    await tekil.ctx.db.query('UPDATE endpoints SET slow_p90_ms = NULL WHERE id = $1', [endpointA]);
    const pings = () => sinkA.requests.filter((r) => r.body.toString().includes('"test.ping"')).length;
    await page.locator(`#endpoints tr[data-endpoint="${endpointA}"]`).getByRole('button', { name: 'Test gönder' }).click();
    await page.locator('#settings-message', { hasText: 'test.ping gönderildi' }).waitFor();
    await waitUntil(() => pings() === 1, 15_000, 'the test.ping at A');
    await screenshot(page, 'settings', { prefix: 'portal' });
    expect(sinkB.requests.length).toBe(toB);
  });

  it('Settings adds an endpoint of A (secret shown once), edits it and rotates its secret with a 24 h window', async () => {
    // Still on Settings: the switch builds it again, in English, once the endpoints have arrived.
    await page.locator('#lang').selectOption('en');
    await page.locator(`#endpoints tr[data-endpoint="${endpointA}"] [data-i18n=enabled]`, { hasText: 'enabled' }).waitFor();
    await page.locator('#endpoint-new').click();
    await page.locator('#endpoint-url').fill(`${sinkA.url}/second`);
    await page.locator('#endpoint-event-types').fill('invoice.paid, invoice.refunded');
    await page.locator('#endpoint-form button[type=submit]').click();
    await page.locator('#secret-once').waitFor();
    const secret = (await page.locator('#secret-value').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    const made = (
      await tekil.ctx.db.query<{ id: string; tenant_id: string; event_types: string[] }>('SELECT id, tenant_id, event_types FROM endpoints WHERE url = $1', [
        `${sinkA.url}/second`,
      ])
    ).rows[0];
    expect(made).toMatchObject({ tenant_id: A, event_types: ['invoice.paid', 'invoice.refunded'] });
    const row = page.locator(`#endpoints tr[data-endpoint="${made!.id}"]`);

    await row.getByRole('button', { name: 'Edit' }).click();
    expect(await page.locator('#secret-once').isVisible()).toBe(false);
    await page.locator('#endpoint-url').fill(`${sinkA.url}/third`);
    await page.locator('#endpoint-enabled').uncheck();
    await page.locator('#endpoint-form button[type=submit]').click();
    await row.locator('td', { hasText: 'disabled' }).waitFor();
    expect(await admin('GET', `/endpoints/${made!.id}`)).toMatchObject({ url: `${sinkA.url}/third`, enabled: false });

    const start = Date.now();
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await page.locator('#settings-message', { hasText: 'two signatures' }).waitFor();
    const rotated = (await page.locator('#secret-value').textContent()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    const window = (
      await tekil.ctx.db.query<{ expires_at: Date }>('SELECT max(expires_at) AS expires_at FROM endpoint_secrets WHERE endpoint_id = $1', [made!.id])
    ).rows[0]!.expires_at;
    expect(Math.abs(window.getTime() - (start + 86_400_000))).toBeLessThan(60_000);
  });

  it("an Excel export holds A's rows only, for the current filter", async () => {
    await page.goto(`${tekil.url}/portal/#/webhooks`);
    await rows(page).first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export-xlsx').click()]);
    const file = await download.path();
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(file);
    const sheet = book.worksheets[0]!;
    const header = (sheet.getRow(1).values as unknown[]).map(String);
    const column = header.indexOf('message id');
    expect(column).toBeGreaterThan(0);
    const ids: string[] = [];
    sheet.eachRow((r, n) => {
      if (n > 1) ids.push(String(r.getCell(column).value));
    });
    const mine = (await deliveriesOf(A)).map((d) => d.message_id);
    expect(ids.sort()).toEqual(mine.sort());
    expect(ids).not.toContain(messageB);

    // With a filter, only the filter's rows.
    await page.goto(`${tekil.url}/portal/#/webhooks?type=invoice.failed`);
    await waitUntil(async () => (await rows(page).count()) === 1, 10_000, 'the filtered list');
    const [filtered] = await Promise.all([page.waitForEvent('download'), page.locator('#export-xlsx').click()]);
    const book2 = new ExcelJS.Workbook();
    await book2.xlsx.readFile(await filtered.path());
    expect(book2.worksheets[0]!.rowCount).toBe(2);
  });

  it("the link's second use is refused and makes no session; A's session gets 404 for B's delivery", async () => {
    const fresh = await browser.newContext();
    try {
      const second = await fresh.newPage();
      const res = await second.goto(link);
      expect(res?.status()).toBe(410);
      const session = await fresh.request.get(`${tekil.url}/api/v1/session`, { headers: PORTAL });
      expect(session.status()).toBe(401);
    } finally {
      await fresh.close();
    }
    // A's session asks for B's message: not found, as if it did not exist.
    const theirs = await context.request.get(`${tekil.url}/api/v1/messages/${messageB}`, { headers: PORTAL });
    expect(theirs.status()).toBe(404);
    const mine = await context.request.get(`${tekil.url}/api/v1/messages/${paidA}`, { headers: PORTAL });
    expect(mine.status()).toBe(200);
    await page.goto(`${tekil.url}/portal/#/delivery/${messageB}`);
    await page.locator('.page-error').waitFor();
    expect(await page.locator('#delivery').count()).toBe(0);
  });

  it('a viewer link shows the same rows and no button that changes anything', async () => {
    const viewer = await browser.newContext();
    try {
      const made = await admin('POST', `/tenants/${A}/portal-links`, { role: 'viewer' });
      const p = await viewer.newPage();
      await p.goto(String(made.url));
      await rows(p).first().waitFor();
      expect(await p.locator('#resend-failed').count()).toBe(0);
      await p.goto(`${tekil.url}/portal/#/delivery/${paidA}`);
      await p.locator('#delivery').waitFor();
      expect(await p.locator('#resend').count()).toBe(0);
      await p.goto(`${tekil.url}/portal/#/settings`);
      await p.locator(`#endpoints tr[data-endpoint="${endpointA}"]`).waitFor();
      expect(await p.locator('#page-settings button').count()).toBe(0);
      // And the API refuses what the page does not offer.
      const refused = await viewer.request.post(`${tekil.url}/api/v1/endpoints/${endpointA}/ping`, { headers: PORTAL });
      expect(refused.status()).toBe(403);
    } finally {
      await viewer.close();
    }
  });

  it('works inside an iframe on an allowed origin, and is refused on another', async () => {
    const embed = await browser.newContext({ viewport: { width: 1280, height: 760 } });
    const refused: string[] = [];
    try {
      const panel = await embed.newPage();
      await panel.goto(`${allowed.origin}/?src=${encodeURIComponent(await portalLink(A))}`);
      const frame = panel.frameLocator('#portal');
      await waitUntil(async () => (await rows(frame).count()) > 0, 15_000, 'the portal in the frame');
      expect(await frame.locator('#tenant-name').textContent()).toBe('Kahve Dükkanı');
      await screenshot(panel, 'embedded', { prefix: 'portal' });

      const elsewhere = await embed.newPage();
      elsewhere.on('console', (m) => refused.push(m.text()));
      await elsewhere.goto(`${other.origin}/?src=${encodeURIComponent(`${tekil.url}/portal/`)}`);
      await waitUntil(() => refused.some((m) => /frame-ancestors/.test(m)), 10_000, "the browser's refusal");
      const inner = elsewhere.frames().find((f) => f !== elsewhere.mainFrame());
      expect(await inner?.locator('#nav').count()).toBe(0);
    } finally {
      await embed.close();
    }
    expect(pageErrors).toEqual([]);
  });
});
