// The example shop: tekil receives Paymos webhooks on /in/shop-paymos and runs the order handlers.
// Run: DATABASE_URL=postgres://… npx tsx examples/orders/main.ts
import { loadConfigFile } from '../../src/config/index.js';
import { startTekil } from '../../src/runtime.js';
import { roleNames } from '../../src/service.js';
import { createExampleSchema, orderHandlers } from './handlers.js';

const config = await loadConfigFile(new URL('./tekil.yaml', import.meta.url).pathname);
const handlers = orderHandlers({
  source: 'shop-paymos',
  afterPaid: async ({ orderId, idempotencyKey }) => {
    console.log(`ship order ${orderId} (Idempotency-Key: ${idempotencyKey})`);
  },
});
const running = await startTekil({ config, roles: new Set(roleNames), handlers });
await createExampleSchema(running.ctx.db);
console.log(`tekil with the example shop listening on ${running.url}`);
const stop = () => void running.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
