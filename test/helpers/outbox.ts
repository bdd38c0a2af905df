import { parseConfig } from '../../src/config/load.js';
import type { SendingConfig } from '../../src/config/sending.js';
import { createLogger } from '../../src/logger.js';
import { DestinationGuard } from '../../src/http/destination-guard.js';
import { Dispatcher } from '../../src/outbox/dispatcher.js';
import { endpointStore, type EndpointStore } from '../../src/outbox/endpoints.js';
import { createSecretBox, type SecretBox } from '../../src/outbox/secrets.js';
import type { Db } from '../../src/store/db.js';

export interface OutboxHarness {
  sending: SendingConfig;
  box: SecretBox;
  endpoints: EndpointStore;
  newDispatcher(options?: { announceExhausted?: boolean }): Dispatcher;
}

/** The sending side wired for tests: loopback allowed, ladders scaled down, fast polling. */
export function outboxHarness(db: Db, sending: Record<string, unknown> = {}): OutboxHarness {
  const config = parseConfig({
    sending: {
      allow_networks: ['127.0.0.0/8'],
      time_scale: 0.001,
      ...sending,
      dispatcher: { poll_interval: '100ms', lease_margin: '1s', ...(sending.dispatcher as object) },
    },
  });
  const box = createSecretBox('test secret key');
  const guard = new DestinationGuard(config.sending.allow_networks);
  // Tests send tenants' deliveries to loopback sinks too: the tenants' list allows what the operator's does.
  const tenantGuard = new DestinationGuard(config.sending.allow_networks, { setting: ['tenants', 'allow_networks'] });
  return {
    sending: config.sending,
    box,
    endpoints: endpointStore({ sending: config.sending, box, guard, tenantGuard }),
    newDispatcher: (options = {}) =>
      new Dispatcher({
        db,
        sending: config.sending,
        box,
        guard,
        tenantGuard,
        logger: createLogger({ level: 'silent' }),
        announceExhausted: options.announceExhausted,
      }),
  };
}
