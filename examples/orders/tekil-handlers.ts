// The shop's handlers as a module for the CLI, so every tekil process runs them:
//   tekil start --role worker --handlers examples/orders/tekil-handlers.ts   (with tsx: node --import tsx …)
// The shop's tables (schema.sql) must exist; create them once with `psql -f examples/orders/schema.sql`.
// A credited invoice publishes `invoice.credited` in the handler's own transaction: the outbox message
// exists exactly when the effect does.
import { publish } from '../../src/outbox/publish.js';
import { orderHandlers } from './handlers.js';

export default orderHandlers({
  source: 'shop-paymos',
  onCredited: async ({ tx, invoiceId, eventId }) => {
    await publish(tx, { type: 'invoice.credited', resourceId: invoiceId, data: { invoice_id: invoiceId, event_id: eventId } });
  },
});
