// `npm run demo`: a payment provider at its worst (tekil simulate) against tekil running the example
// shop (examples/orders) on the embedded store. Prints what arrived and what the shop did, then runs
// tekil prove against the same gateway and shop (its scorecard, reconciled with the provider's list),
// then stops.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { loadConfigFile } from '../../src/config/index.js';
import { startTekil } from '../../src/runtime.js';
import { generateEndpointSecret } from '../../src/outbox/secrets.js';
import { allFaults } from '../../src/simulate/faults.js';
import { finalStatus, type PlannedInvoice } from '../../src/simulate/lifecycle.js';
import { formatSummary } from '../../src/simulate/report.js';
import { startSimulator } from '../../src/simulate/simulator.js';
import type { InvoiceListPage } from '../../src/simulate/list-api.js';
import { createExampleSchema, orderHandlers } from '../orders/handlers.js';
import { ProveControl, startProveEndpoints } from '../orders/prove-endpoints.js';
import { defaultProveOptions, formatRow, formatSummary as formatScorecard, runProve } from '../../src/prove/index.js';
import { createShopOrders, withDecimalAmounts } from './shop-adapter.js';
import { shopReport, waitForShop } from './shop-report.js';

const SOURCE = 'shop-paymos';
/** The provider's second URL for the shop (an invoice's callback URL), for prove's second-endpoint row. */
const CALLBACK_SOURCE = 'shop-paymos-callback';
const INVOICES = Number(process.env.DEMO_INVOICES ?? 300);

/**
 * `tekil prove` against the same gateway and shop while they are still up: every row, with the shop's
 * effects and control routes (examples/orders/prove-endpoints.ts), and the reconcile row also holding
 * the shop to every invoice the provider lists (the shop's effects are keyed by its orders).
 */
async function afterSimulation(shop: {
  webhookUrl: string;
  callbackUrl: string;
  secret: string;
  effectsBase: string;
  listUrl: string;
  apiKey: string;
}): Promise<boolean> {
  console.log('\n— tekil prove against the gateway and the shop —');
  const report = await runProve(
    {
      url: shop.webhookUrl,
      callbackUrl: shop.callbackUrl,
      scheme: 'paymos',
      secret: shop.secret,
      effectsUrl: `${shop.effectsBase}/effects`,
      controlUrl: shop.effectsBase,
      providerList: { url: shop.listUrl, apiKey: shop.apiKey, resourceField: 'order_id' },
      ...defaultProveOptions,
      // The shop answers from its inbox and works afterwards: short provider timeouts and settle times
      // keep the twelve checks to seconds.
      providerTimeoutMs: 2_000,
      settleMs: 300,
      retryLadderMs: [100, 200, 400, 800, 1_600, 3_200],
    },
    {},
    (row) => console.log(formatRow(row, process.stdout.isTTY === true)),
  );
  console.log(`\n${formatScorecard(report, process.stdout.isTTY === true)}`);
  return report.ok;
}

const shopDir = mkdtempSync(join(tmpdir(), 'tekil-demo-shop-'));
const simDir = mkdtempSync(join(tmpdir(), 'tekil-demo-provider-'));
const secret = generateEndpointSecret();
const config = await loadConfigFile(new URL('../orders/tekil.yaml', import.meta.url).pathname, { ...process.env, PAYMOS_WEBHOOK_SECRET: secret });
config.sources[CALLBACK_SOURCE] = config.sources[SOURCE]!;
const control = new ProveControl();
const shop = await startTekil({
  config,
  roles: ['receiver', 'worker'],
  port: 0,
  host: '127.0.0.1',
  env: { TEKIL_DATA_DIR: shopDir },
  logger: pino({ level: 'error' }),
  handlers: withDecimalAmounts(orderHandlers({ source: [SOURCE, CALLBACK_SOURCE], control }), [SOURCE, CALLBACK_SOURCE]),
});
await createExampleSchema(shop.ctx.db);
const proveRoutes = await startProveEndpoints({ db: shop.ctx.db, control });
const webhookUrl = `${shop.url}/in/${SOURCE}`;
console.log(`tekil with the example shop: ${webhookUrl}`);

let invoices: readonly PlannedInvoice[] = [];
const sim = await startSimulator({
  target: webhookUrl,
  // The invoice's callback URL: the same events again, under the same ids, from a second destination.
  callbackUrl: webhookUrl,
  scheme: 'paymos',
  secret,
  invoices: INVOICES,
  timeScale: 0.001,
  timeoutMs: 3000,
  faults: allFaults,
  dataDir: simDir,
  listen: { host: '127.0.0.1', port: 0 },
  rateLimit: 0,
  logger: pino({ level: 'error' }),
  onInvoicesCreated: async (created) => {
    invoices = created;
    await createShopOrders(shop.ctx.db, created);
  },
  onProgress: (line) => console.log(`provider: ${line}`),
  settleTimeoutMs: 120_000,
});

let ok = false;
try {
  const summary = await sim.run();
  console.log(`\n— the provider —\n${formatSummary(summary)}`);
  await waitForShop(shop.ctx.db, 60_000);
  const report = await shopReport(
    shop.ctx.db,
    invoices.map((i) => ({ orderId: i.orderId, announced: finalStatus(i) })),
  );
  const copies = Object.values(summary.proxies).reduce((n, p) => n + p.forwarded, 0);
  console.log(
    `— the shop —\n  requests that reached it: ${copies} for ${summary.eventsPublished} events (${copies - summary.eventsPublished} duplicates: retries, copies, the callback URL, replays)\n${report.text}`,
  );
  const page = (await (
    await request(`${sim.listUrl}?status=paid&status=paid_over&limit=100`, { headers: { authorization: `Bearer ${sim.apiKey}` } })
  ).body.json()) as InvoiceListPage;
  console.log(
    `— the provider's list API — GET ${sim.listUrl}?status=paid&status=paid_over: ${page.items.length} on the first page, next_cursor ${page.next_cursor ?? 'null'}`,
  );
  ok = report.ok;
  ok =
    (await afterSimulation({
      webhookUrl,
      callbackUrl: `${shop.url}/in/${CALLBACK_SOURCE}`,
      secret,
      effectsBase: `${proveRoutes.url}/_prove`,
      listUrl: sim.listUrl!,
      apiKey: sim.apiKey,
    })) && ok;
  console.log(
    ok ? '\nevery invoice took effect exactly once and ended in the state the provider announced, and tekil prove passed' : '\nSOMETHING WENT WRONG: see above',
  );
} finally {
  await sim.close();
  await proveRoutes.close();
  await shop.close();
  rmSync(shopDir, { recursive: true, force: true });
  rmSync(simDir, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
