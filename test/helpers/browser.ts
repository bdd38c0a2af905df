// The panel's browser tests: Debian's Chromium through playwright-core (never a browser download),
// signing in, screenshots for docs/dashboard.md, and a whole tekil with the example shop behind a panel.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { pino } from 'pino';
import { request } from 'undici';
import { createExampleSchema, orderHandlers } from '../../examples/orders/handlers.js';
import { startTekil, type RunningTekil } from '../../src/runtime.js';
import { createScheme } from '../../src/signing/index.js';
import { createTestDb, onPostgres, type TestDb } from './db.js';
import { createOrder, invoiceEvent, SOURCE, workerTestConfig, type InvoiceEventInput } from './inbox.js';

export const CHROMIUM = '/usr/bin/chromium';
/** The panel's browser tests run on Postgres; in CI the browser must be there (.ci/run installs it). */
export const browserRunnable = onPostgres && (existsSync(CHROMIUM) || process.env.CI === 'true');

/** Headless, with nothing reaching out of the machine. */
export const CHROMIUM_FLAGS: readonly string[] = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/** Debian's Chromium with CHROMIUM_FLAGS, then `extra`. */
export function launchChromium(extra: readonly string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS, ...extra] });
}

/** Signs in on the panel at `url` with a token, and waits for the signed-in navigation. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.locator('#token').fill(token);
  await page.locator('#sign-in button[type=submit]').click();
  await page.locator('#nav a').first().waitFor();
}

/**
 * `TEKIL_UPDATE_SCREENSHOTS=1` writes the run's screenshots into docs/img/ for docs/dashboard.md (and,
 * with `prefix: 'portal'`, docs/portal.md); otherwise nothing is written, so a run leaves the tree clean.
 */
const screenshotDir = process.env.TEKIL_UPDATE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/img/', import.meta.url)) : undefined;
export const screenshot = async (page: Page, name: string, options: { fullPage?: boolean; prefix?: 'dashboard' | 'portal' } = {}) => {
  if (screenshotDir) await page.screenshot({ path: join(screenshotDir, `${options.prefix ?? 'dashboard'}-${name}.png`), fullPage: options.fullPage ?? false });
};

/**
 * A real tekil (receiver, worker and api) with the example shop's handlers on the run's Postgres, and
 * one Chromium. Every URL any page requests is recorded, to show no token ever travels in one.
 */
export interface Panel {
  tekil: RunningTekil;
  t: TestDb;
  browser: Browser;
  adminToken: string;
  /** Every URL a page of this browser asked for. */
  urls: string[];
  /** While true, the paid handler throws after its effect is rolled back: deliveries end dead. */
  failing: { paid: boolean };
  newPage(options?: { locale?: string }): Promise<{ context: BrowserContext; page: Page }>;
  signIn(page: Page, token?: string): Promise<void>;
  /** Sends a signed invoice event over HTTP (its order is created first); answers the status code. */
  send(input: Omit<InvoiceEventInput, 'orderId'> & { orderId?: string }): Promise<number>;
  status(eventId: string): Promise<string | undefined>;
  createOperator(name: string, role: 'viewer' | 'operator'): Promise<string>;
  close(): Promise<void>;
}

export async function startPanel(adminToken: string): Promise<Panel> {
  const t = await createTestDb();
  await createExampleSchema(t.db);
  const dataDir = mkdtempSync(join(tmpdir(), 'tekil-panel-'));
  const config = workerTestConfig();
  const secret = config.sources[SOURCE]!.secrets[0]!;
  const failing = { paid: false };
  const tekil = await startTekil({
    config,
    roles: new Set(['receiver', 'worker', 'api'] as const),
    port: 0,
    host: '127.0.0.1',
    logger: pino({ level: 'silent' }),
    db: t.db,
    env: { TEKIL_ADMIN_TOKEN: adminToken, TEKIL_DATA_DIR: dataDir },
    handlers: orderHandlers({
      source: SOURCE,
      afterPaid: async () => {
        if (failing.paid) throw new Error('warehouse down');
      },
    }),
  });
  const browser = await launchChromium();
  const urls: string[] = [];
  const scheme = createScheme('paymos');
  const orders = new Set<string>();

  return {
    tekil,
    t,
    browser,
    adminToken,
    urls,
    failing,
    async newPage(options = {}) {
      const context = await browser.newContext({
        viewport: { width: 1280, height: 720 },
        acceptDownloads: true,
        ...(options.locale ? { locale: options.locale } : {}),
      });
      context.on('request', (r) => urls.push(r.url()));
      return { context, page: await context.newPage() };
    },
    async signIn(page, token = adminToken) {
      await signIn(page, tekil.url, token);
    },
    async send(input) {
      const orderId = input.orderId ?? `ord_${input.invoiceId}`;
      if (!orders.has(orderId)) {
        await createOrder(t.db, orderId);
        orders.add(orderId);
      }
      const { body } = invoiceEvent({ ...input, orderId });
      const res = await request(`${tekil.url}/in/${SOURCE}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...scheme.sign({ body, secrets: [secret] }) },
      });
      await res.body.text();
      return res.statusCode;
    },
    async status(eventId) {
      return (await t.db.query<{ status: string }>('SELECT status FROM inbox_deliveries WHERE event_id = $1', [eventId])).rows[0]?.status;
    },
    async createOperator(name, role) {
      const made = await request(`${tekil.url}/api/v1/operators`, {
        method: 'POST',
        body: JSON.stringify({ name, role }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      });
      return ((await made.body.json()) as { token: string }).token;
    },
    async close() {
      await browser.close();
      await tekil.close();
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
