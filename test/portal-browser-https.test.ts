import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Response } from 'playwright-core';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { browserRunnable, CHROMIUM, CHROMIUM_FLAGS, launchChromium } from './helpers/browser.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { selfSignedCertificate, startFramingPage, startTlsProxy, type Listening, type TestCertificate } from './helpers/embedding.js';
import { receiverConfig } from './helpers/receiver.js';
import { startSink, type Sink } from './helpers/sink.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'portal-browser-https-admin-token';
const A = 'm_100';
const B = 'm_200';
/** The browser trusts no certificate of these servers; the flag stands for a real certificate. */
const TLS_FLAGS = ['--ignore-certificate-errors'];

/**
 * A browser profile of its own (a user's, not the off-the-record one `browser.newContext()` gives).
 * Debian's Chromium blocks third-party cookies by default, in every profile; `allowThirdParty` turns
 * that setting off (`cookie_controls_mode: 0`, what chrome://settings/cookies writes), and otherwise
 * `--test-third-party-cookie-phaseout` makes the blocking explicit, as browsers phasing them out do.
 */
async function profile(dir: string, allowThirdParty: boolean): Promise<BrowserContext> {
  mkdirSync(join(dir, 'Default'), { recursive: true });
  if (allowThirdParty) writeFileSync(join(dir, 'Default', 'Preferences'), JSON.stringify({ profile: { cookie_controls_mode: 0 } }));
  const args = [...CHROMIUM_FLAGS, ...TLS_FLAGS, ...(allowThirdParty ? [] : ['--test-third-party-cookie-phaseout'])];
  return chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, args, viewport: { width: 1280, height: 760 }, locale: 'en-GB' });
}

/**
 * A control the proxy answers itself: `/control/set` sets an unpartitioned `SameSite=None; Secure`
 * cookie, `/control/seen` says whether it came back. Framed by the panel, it shows whether the browser
 * keeps third-party cookies, so the blocked browser's case is known to block.
 */
function control(req: IncomingMessage, res: ServerResponse): boolean {
  if (!req.url?.startsWith('/control/')) return false;
  const seen = /(?:^|;\s*)control=1/.test(req.headers.cookie ?? '');
  const headers: Record<string, string> = { 'content-type': 'text/plain' };
  if (req.url === '/control/set') headers['set-cookie'] = 'control=1; Path=/control; HttpOnly; Secure; SameSite=None';
  res.writeHead(200, headers);
  res.end(req.url === '/control/seen' ? (seen ? 'seen' : 'absent') : 'set');
  return true;
}

/**
 * The portal embedded the way a deployment embeds it: tekil on Postgres behind a TLS-ending reverse
 * proxy (https://127.0.0.1:…, `server.trust_proxy`), framed by a provider's panel on another site
 * (https://localhost:…), in Debian's Chromium with third-party cookies allowed and blocked.
 */
describe.skipIf(!browserRunnable)('the merchant portal embedded on another site over https', () => {
  let tls: TestCertificate;
  /** Admin calls go through the proxy too, trusting its certificate and no other. */
  let trusting: Agent;
  let t: TestDb;
  let tekil: RunningTekil;
  let proxy: Listening;
  let panel: Listening;
  let stranger: Listening;
  let sink: Sink;
  let browser: Browser;
  let dataDir = '';
  const messagesOfA: string[] = [];
  let messageB = '';

  const admin = async (method: 'POST', path: string, body: unknown) => {
    const res = await request(`${proxy.origin}/api/v1${path}`, {
      method,
      dispatcher: trusting,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await res.body.json()) as Record<string, unknown>;
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
    return answer;
  };
  const publish = async (tenant: string, resourceId: string) =>
    String((await admin('POST', '/messages', { tenant_id: tenant, type: 'invoice.paid', resource_id: resourceId, data: { invoice: resourceId } })).id);
  /** The ids of a tenant's messages (with a delivery each: one endpoint per tenant), as the store holds them. */
  const messagesOf = async (tenant: string) =>
    (await tekil.ctx.db.query<{ id: string }>('SELECT id FROM outbox_messages WHERE tenant_id = $1', [tenant])).rows.map((r) => r.id);
  const portalLink = async () => String((await admin('POST', `/tenants/${A}/portal-links`, { role: 'operator' })).url);

  beforeAll(async () => {
    tls = selfSignedCertificate();
    trusting = new Agent({ connect: { ca: tls.cert } });
    t = await createTestDb();
    sink = await startSink(() => ({ status: 200, body: 'thanks' }));
    panel = await startFramingPage(tls);
    stranger = await startFramingPage(tls);
    const config = receiverConfig({
      // The proxy connects from loopback: only it is believed about https and the client's address.
      server: { trust_proxy: ['127.0.0.1'] },
      sending: { allow_networks: ['127.0.0.0/8'], dispatcher: { poll_interval: '100ms' } },
      tenants: { allow_networks: ['127.0.0.0/8'] },
      portal: { name: 'Paymos', frame_ancestors: [panel.origin] },
    });
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-portal-https-'));
    const env = { ...process.env, TEKIL_ADMIN_TOKEN: ADMIN, TEKIL_DATA_DIR: dataDir, DATABASE_URL: t.url ?? '' };
    tekil = await startTekil({ config, roles: ['receiver', 'api', 'dispatcher'], env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
    proxy = await startTlsProxy(tekil.url, tls, control);

    await admin('POST', '/tenants', { id: A, name: 'Kahve Dükkanı' });
    await admin('POST', '/tenants', { id: B, name: 'Kitapçı' });
    await admin('POST', '/endpoints', { tenant_id: A, url: sink.url });
    await admin('POST', '/endpoints', { tenant_id: B, url: sink.url });
    for (let i = 1; i <= 3; i++) messagesOfA.push(await publish(A, `inv_a${i}`));
    messageB = await publish(B, 'inv_b1');
    await waitUntil(() => sink.requests.length >= 4, 30_000, 'every webhook at the sink');

    browser = await launchChromium(TLS_FLAGS);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await tekil?.close();
    await sink?.close();
    await panel?.close();
    await stranger?.close();
    await trusting?.close();
    await t?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("makes links with the proxy's https address; the dashboard's cookie stays SameSite=Strict, Secure behind it", async () => {
    expect(await portalLink()).toMatch(new RegExp(`^${proxy.origin.replace(/\./g, '\\.')}/portal/link/`));
    const res = await request(`${proxy.origin}/api/v1/session`, {
      method: 'POST',
      dispatcher: trusting,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: ADMIN }),
    });
    await res.body.text();
    expect(res.statusCode).toBe(201);
    expect(res.headers['set-cookie']).toMatch(/^tekil_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
  });

  for (const allowThirdParty of [true, false]) {
    it(`third-party cookies ${allowThirdParty ? 'allowed' : 'blocked'}: the panel frames a portal link; the frame shows A's deliveries with its partitioned session cookie`, async () => {
      const context = await profile(join(dataDir, `profile-${allowThirdParty}`), allowThirdParty);
      try {
        const page = await context.newPage();
        const opened: Response[] = [];
        const api: Response[] = [];
        page.on('response', (r) => {
          const path = new URL(r.url()).pathname;
          if (path.startsWith('/portal/link/')) opened.push(r);
          if (path.startsWith('/api/v1/')) api.push(r);
        });
        const link = await portalLink();
        await page.goto(`${panel.origin}/?src=${encodeURIComponent(link)}`);
        const frame = page.frameLocator('#portal');
        const rows = frame.locator('#deliveries tr[data-delivery]');
        const mine = await messagesOf(A);
        await waitUntil(async () => (await rows.count()) === mine.length, 15_000, "A's deliveries in the frame");
        expect(await frame.locator('#tenant-name').textContent()).toBe('Kahve Dükkanı');
        const shown = await rows.evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { message?: string } }).dataset.message ?? ''));
        expect(shown.sort()).toEqual(mine.sort());
        expect(shown).toEqual(expect.arrayContaining(messagesOfA));
        expect(shown).not.toContain(messageB);

        // The link's answer, as the frame received it.
        expect(opened).toHaveLength(1);
        expect(opened[0]!.status()).toBe(303);
        const setCookie = (await opened[0]!.headerValue('set-cookie')) ?? '';
        expect(setCookie).toMatch(/^tekil_portal=[^;]+; Path=\/; HttpOnly; SameSite=None; Max-Age=\d+; Secure; Partitioned$/);
        // Kept by the browser under the panel's site, and sent on every API call the frame made.
        const cookies = (await context.cookies(proxy.origin)).filter((c) => c.name === 'tekil_portal');
        expect(cookies).toEqual([expect.objectContaining({ httpOnly: true, secure: true, sameSite: 'None', partitionKey: 'https://localhost' })]);
        const calls = api.filter((r) => r.frame() !== page.mainFrame());
        expect(calls.map((r) => new URL(r.url()).pathname)).toEqual(expect.arrayContaining(['/api/v1/session', '/api/v1/deliveries']));
        for (const call of calls) {
          expect(call.status(), call.url()).toBe(200);
          expect(await call.request().headerValue('cookie'), call.url()).toMatch(/(?:^|; )tekil_portal=/);
        }

        // A change from inside the frame (cookie and CSRF header): Send test reaches A's endpoint.
        const pings = () => sink.requests.filter((r) => r.body.toString().includes('"test.ping"')).length;
        const before = pings();
        await frame.locator('#nav a[data-page=settings]').click();
        await frame.locator('#endpoints tr[data-endpoint]').getByRole('button', { name: 'Send test' }).click();
        await frame.locator('#settings-message', { hasText: 'test.ping' }).waitFor();
        await waitUntil(() => pings() === before + 1, 15_000, 'the test.ping from the frame');

        // The control: an unpartitioned SameSite=None cookie of tekil's site comes back in a frame only
        // when third-party cookies are allowed.
        await page.goto(`${panel.origin}/?src=${encodeURIComponent(`${proxy.origin}/control/set`)}`);
        const inner = page.frames().find((f) => f !== page.mainFrame())!;
        await inner.goto(`${proxy.origin}/control/seen`);
        expect(await inner.locator('body').textContent()).toBe(allowThirdParty ? 'seen' : 'absent');
      } finally {
        await context.close();
      }
    });
  }

  it('a panel of an origin not in frame_ancestors gets an empty frame: the browser refuses the portal', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('console', (m) => refused.push(m.text()));
      await page.goto(`${stranger.origin}/?src=${encodeURIComponent(`${proxy.origin}/portal/`)}`);
      await waitUntil(() => refused.some((m) => /frame-ancestors/.test(m)), 10_000, "the browser's refusal");
      const inner = page.frames().find((f) => f !== page.mainFrame());
      expect(await inner?.locator('#nav').count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});
