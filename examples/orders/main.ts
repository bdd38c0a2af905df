// The example shop: tekil receives Paymos webhooks on /in/shop-paymos and runs the order handlers.
// Run: DATABASE_URL=postgres://… npx tsx examples/orders/main.ts
import { loadConfigFile } from '../../src/config/index.js';
import { startTekil } from '../../src/runtime.js';
import { roleNames } from '../../src/service.js';
import { createExampleSchema, orderHandlers } from './handlers.js';
import { ProveControl, startProveEndpoints } from './prove-endpoints.js';

const config = await loadConfigFile(new URL('./tekil.yaml', import.meta.url).pathname);
// The prove contracts (effects, and the staging-only control switches) listen on their own port.
const control = new ProveControl();
const handlers = orderHandlers({
  source: 'shop-paymos',
  control,
  afterPaid: async ({ orderId, idempotencyKey }) => {
    console.log(`ship order ${orderId} (Idempotency-Key: ${idempotencyKey})`);
  },
});
const running = await startTekil({ config, roles: new Set(roleNames), handlers });
await createExampleSchema(running.ctx.db);
const prove = await startProveEndpoints({ db: running.ctx.db, control, port: 8788 });
console.log(`tekil with the example shop listening on ${running.url}`);
console.log(
  `prove it: tekil prove --url ${running.url}/in/shop-paymos --scheme paymos --secret <PAYMOS_WEBHOOK_SECRET> --effects ${prove.url}/_prove/effects --control ${prove.url}/_prove`,
);
const stop = () =>
  void prove
    .close()
    .then(() => running.close())
    .then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
