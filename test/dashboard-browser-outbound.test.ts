import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { browserRunnable, launchChromium, screenshot, signIn as signInAt } from './helpers/browser.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverConfig, signPaymos } from './helpers/receiver.js';
import { startSink, type Sink } from './helpers/sink.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'dashboard-outbound-admin-token';

/** The Outbound and Overview pages in Debian's Chromium, against a real tekil and a real HTTP sink. */
describe.skipIf(!browserRunnable)('the panel: Outbound and Overview', () => {
  let t: TestDb;
  let tekil: RunningTekil;
  let sink: Sink;
  let sinkFails = false;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  const admin = async (method: 'GET' | 'POST', path: string, body?: unknown, token = ADMIN) => {
    const res = await request(`${tekil.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const deliveryStatus = async (messageId: string) =>
    (await tekil.ctx.db.query<{ status: string }>('SELECT status FROM outbox_deliveries WHERE message_id = $1', [messageId])).rows[0]?.status;
  const signIn = (p: Page, token: string) => signInAt(p, tekil.url, token);
  const sendWebhook = async (eventId: string, signed = true) => {
    const body = paymosBody(eventId);
    const res = await request(`${tekil.url}/in/shop`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...(signed ? signPaymos(body) : {}) },
    });
    await res.body.text();
    return res.statusCode;
  };

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink(() => (sinkFails ? { status: 503, body: 'down for maintenance' } : { status: 200, body: 'pong received' }));
    // A two-step ladder at a thousandth of its time: a delivery to a failing sink fails for good at once.
    const config = receiverConfig({ sending: { allow_networks: ['127.0.0.0/8'], ladder: ['1s'], time_scale: 0.001, dispatcher: { poll_interval: '100ms' } } });
    const env = { ...process.env, TEKIL_ADMIN_TOKEN: ADMIN, TEKIL_DATA_DIR: mkdtempSync(join(tmpdir(), 'tekil-browser-out-')), DATABASE_URL: t.url ?? '' };
    tekil = await startTekil({ config, roles: ['receiver', 'api', 'dispatcher'], env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 720 } });
    // Anything the CSP blocks or a script throws is a failure of the page (checked at the end). (Failed
    // loads are not: the session check before signing in answers 401, and there is no favicon.)
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await tekil?.close();
    await sink?.close();
    await t?.close();
  });

  let endpointId = '';
  let pingId = '';

  it('creates an endpoint, rotates its secret (shown once), pings it and shows the signed attempt', async () => {
    await signIn(page, ADMIN);
    // The list arrives late (held until "New endpoint" has been clicked): the late list must not take
    // the screen back from the form. The page is busy (aria-busy) until it has dealt with the list.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/v1/stats/outbox*', async (route) => {
      await held;
      await route.continue();
    });
    await page.locator('#nav a[data-page=outbound]').click();
    await page.locator('#outbound[aria-busy="true"]').waitFor({ state: 'attached' });
    await page.locator('#endpoint-new').click();
    await page.locator('#endpoint-form').waitFor();
    release();
    await page.locator('#outbound:not([aria-busy])').waitFor({ state: 'attached' });
    await page.unrouteAll();
    expect(await page.locator('#endpoint-form').isVisible()).toBe(true);
    await page.locator('#endpoint-url').fill(sink.url);
    await page.locator('#endpoint-description').fill('orders service');
    await page.locator('#endpoint-form button[type=submit]').click();
    await page.locator('#secret-once').waitFor();
    const first = (await page.locator('#secret-value').textContent()) ?? '';
    expect(first).toMatch(/^whsec_/);
    endpointId = (await page.locator('#endpoint-title').textContent()) ?? '';
    expect((await admin('GET', `/endpoints/${endpointId}`)).body).toMatchObject({ url: sink.url, description: 'orders service', enabled: true });

    await page.locator('#endpoint-rotate').click();
    await page.locator('#endpoint-message', { hasText: 'New secret made' }).waitFor();
    const secret = (await page.locator('#secret-value').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(first);

    await page.locator('#endpoint-ping').click();
    await page.locator('#message-status[data-status=succeeded]').waitFor();
    const attempt = page.locator('#message-attempts tr[data-attempt="1"]');
    expect(await attempt.locator('td').nth(2).textContent()).toBe('200');
    expect(await attempt.locator('td.excerpt').textContent()).toBe('pong received');
    pingId = ((await page.locator('#message-detail').getAttribute('data-message')) ?? '').trim();
    expect(pingId).toMatch(/^evt_/);
    await page.locator(`#endpoint-history tr[data-message="${pingId}"]`).waitFor();
    await screenshot(page, 'outbound-endpoint', { fullPage: true });

    // The sink got the ping, signed with the new secret (and, inside the rotation window, the old one).
    expect(sink.requests).toHaveLength(1);
    const got = sink.requests[0]!;
    const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
    expect(new Webhook(secret).verify(got.body.toString(), headers)).toMatchObject({ type: 'test.ping' });
    expect(new Webhook(first).verify(got.body.toString(), headers)).toMatchObject({ type: 'test.ping' });

    // The secret is shown once: leaving the endpoint clears it, and coming back does not show it.
    await page.locator('#endpoint-back').click();
    await page.locator(`#endpoint-rows tr[data-endpoint="${endpointId}"]`).click();
    await page.locator('#endpoint-detail').waitFor();
    expect(await page.locator('#secret-once').isHidden()).toBe(true);
    expect(await page.locator('#secret-value').textContent()).toBe('');
    expect(await page.content()).not.toContain(secret);
  }, 60_000);

  it('edits and disables an endpoint, shows it failing, replays the failed ones of a window and one message', async () => {
    await page.locator('#endpoint-edit').click();
    await page.locator('#endpoint-description').fill('orders service (eu)');
    await page.locator('#endpoint-form button[type=submit]').click();
    await page.locator('[data-field="description"]', { hasText: 'orders service (eu)' }).waitFor();
    await page.locator('#endpoint-toggle', { hasText: 'Disable' }).click();
    await page.locator('[data-field="state"]', { hasText: 'disabled' }).waitFor();
    await page.locator('#endpoint-toggle', { hasText: 'Enable' }).click();
    await page.locator('[data-field="state"]', { hasText: 'enabled' }).waitFor();

    // The sink goes down: the next ping fails for good, and the list shows since when it has failed.
    sinkFails = true;
    await page.locator('#endpoint-ping').click();
    await page.locator('#message-status[data-status=failed]').waitFor();
    expect(await page.locator('#message-attempts tr').count()).toBe(2);
    expect(await page.locator('#message-attempts td.excerpt').first().textContent()).toBe('down for maintenance');
    const failedId = ((await page.locator('#message-detail').getAttribute('data-message')) ?? '').trim();
    await page.locator('#endpoint-back').click();
    const row = page.locator(`#endpoint-rows tr[data-endpoint="${endpointId}"]`);
    await row.locator('td', { hasText: '33.3% (1/3)' }).waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('default'); // the tenant that owns it
    expect(await row.locator('td').nth(6).textContent()).not.toBe('');
    await screenshot(page, 'outbound', { fullPage: true });

    // The list's CSV export downloads with the session cookie (no token in the link).
    expect(await page.locator('#deliveries-export-csv').getAttribute('href')).toBe('/api/v1/deliveries/export.csv');
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#deliveries-export-csv').click()]);
    const csv = await readFile((await download.path())!, 'utf8');
    expect(csv.split('\n').filter((line) => line.includes(endpointId) && line.includes('test.ping'))).toHaveLength(2);
    await row.click();
    expect(await page.locator('#endpoint-export-xlsx').getAttribute('href')).toBe(`/api/v1/deliveries/export.xlsx?endpoint_id=${endpointId}`);
    await page.locator('#endpoint-back').click();

    // Back up: "replay failed" for the last hour sends it again.
    sinkFails = false;
    const before = sink.requests.length;
    await page.locator('#replay-failed-endpoint').selectOption(endpointId);
    await page.locator('#replay-failed button[type=submit]').click();
    await page.locator('#replay-failed-message', { hasText: '1 failed deliveries replayed.' }).waitFor();
    await waitUntil(async () => (await deliveryStatus(failedId)) === 'succeeded');
    expect(sink.requests.length).toBe(before + 1);

    // One message replayed from its history.
    await row.click();
    await page.locator(`#endpoint-history tr[data-message="${pingId}"]`).click();
    await page.locator('#message-detail[data-message="' + pingId + '"]').waitFor();
    await page.locator('#message-replay').click();
    await page.locator('#endpoint-message', { hasText: 'Replayed to 1 destination(s).' }).waitFor();
    await page.locator('#message-attempts tr[data-attempt="2"]').waitFor();
    expect(sink.requests.filter((r) => r.headers['webhook-id'] === pingId)).toHaveLength(2);
  }, 60_000);

  it('a viewer sees no button that changes anything, and the API refuses them', async () => {
    const made = await admin('POST', '/operators', { name: 'outbound-viewer', role: 'viewer' });
    const token = String(made.body.token);
    // A viewer whose browser speaks Turkish: the pages speak it too.
    const context = await browser.newContext({ locale: 'tr-TR' });
    const viewer = await context.newPage();
    await signIn(viewer, token);
    expect(await viewer.locator('#nav a[data-page=outbound]').textContent()).toBe('Giden');
    await viewer.locator('#nav a[data-page=outbound]').click();
    expect(await viewer.locator('#outbound th[data-i18n="failingSince"]').textContent()).toBe('şu zamandan beri hatalı');
    await viewer.locator(`#endpoint-rows tr[data-endpoint="${endpointId}"]`).waitFor();
    expect(await viewer.locator('#endpoint-new').isHidden()).toBe(true);
    expect(await viewer.locator('#replay-failed').isHidden()).toBe(true);
    await viewer.locator(`#endpoint-rows tr[data-endpoint="${endpointId}"]`).click();
    await viewer.locator(`#endpoint-history tr[data-message="${pingId}"]`).click();
    await viewer.locator('#message-detail[data-message="' + pingId + '"]').waitFor();
    for (const id of ['endpoint-edit', 'endpoint-toggle', 'endpoint-rotate', 'endpoint-ping', 'message-replay']) {
      expect(await viewer.locator(`#${id}`).isHidden(), id).toBe(true);
    }
    // The address names what is shown: reloaded, it shows the same message's attempts to the same endpoint.
    expect(new URL(viewer.url()).hash).toBe(`#/outbound/${endpointId}/${pingId}`);
    await viewer.reload();
    await viewer.locator('#message-detail[data-message="' + pingId + '"]').waitFor();
    expect(await viewer.locator('#endpoint-title').textContent()).toBe(endpointId);
    // Back goes to the endpoint alone, then to the list.
    await viewer.goBack();
    await expect.poll(() => new URL(viewer.url()).hash).toBe(`#/outbound/${endpointId}`);
    await viewer.locator('#endpoint-detail').waitFor();
    for (const [path, body] of [
      [`/endpoints/${endpointId}/rotate-secret`, {}],
      [`/endpoints/${endpointId}/ping`, undefined],
      [`/messages/${pingId}/replay`, {}],
      ['/endpoints', { url: sink.url }],
    ] as const) {
      expect((await admin('POST', path, body, token)).status, path).toBe(403);
    }
    await context.close();
  }, 60_000);

  it('Overview draws per-minute and per-endpoint charts from real traffic and follows new deliveries live', async () => {
    expect(await sendWebhook('evt_overview_1')).toBe(200);
    expect(await sendWebhook('evt_overview_1')).toBe(200); // a duplicate
    expect(await sendWebhook('evt_overview_2', false)).toBe(401); // refused: unsigned
    await page.locator('#nav a[data-page=overview]').click();
    const inbox = page.locator('#chart-inbox');
    await page.locator('#chart-inbox polyline[data-series="received"]').waitFor();
    expect(Number(await inbox.getAttribute('data-total'))).toBeGreaterThan(0);
    expect(await page.locator('#chart-outbound rect.bar').count()).toBe(1);
    expect(await page.locator('#chart-receiver .legend').textContent()).toMatch(/accepted: 1.*duplicate: 1.*rejected: 1/);
    expect(await page.locator('#tile-review-queue').textContent()).toBe('0');
    expect(Number(await page.locator('#tile-ack-p50').textContent())).toBeGreaterThan(0);
    await page.locator('#overview-live.on').waitFor();

    // A new delivery arrives: the stream's event refreshes the charts without a reload.
    const before = Number(await inbox.getAttribute('data-total'));
    expect(await sendWebhook('evt_overview_3')).toBe(200);
    await waitUntil(async () => Number(await inbox.getAttribute('data-total')) > before, 15_000, 'the overview refreshed after a new delivery');
    expect(await page.locator('#chart-receiver .legend').textContent()).toContain('accepted: 2');
    await screenshot(page, 'overview', { fullPage: true });
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
