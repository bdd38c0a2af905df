import type { Context, Service } from '../service.js';
import { DestinationGuard } from '../http/destination-guard.js';
import { Dispatcher } from './dispatcher.js';
import { endpointStore, type EndpointStore } from './endpoints.js';
import { resolveSecretBox, type SecretBox } from './secrets.js';

/** The parts of the sending side that the API and the dispatcher share within one process. */
export interface OutboxParts {
  box: SecretBox;
  /** The default tenant's endpoints, the operator's own: `sending.allow_networks`. */
  guard: DestinationGuard;
  /** Every other tenant's endpoints: `tenants.allow_networks`, never the operator's list. */
  tenantGuard: DestinationGuard;
  endpoints: EndpointStore;
}

const partsByContext = new WeakMap<Context, OutboxParts>();

/**
 * Made once per context from its settings, whichever role asks first: the admin API and the dispatcher
 * seal and open endpoint secrets with the same key.
 */
export function outboxParts(ctx: Context): OutboxParts {
  let parts = partsByContext.get(ctx);
  if (!parts) {
    const sending = ctx.config.sending;
    const box = resolveSecretBox(ctx.settings.secretKey);
    const guard = new DestinationGuard(sending.allow_networks);
    const tenantGuard = new DestinationGuard(ctx.config.tenants.allow_networks, { setting: ['tenants', 'allow_networks'] });
    parts = { box, guard, tenantGuard, endpoints: endpointStore({ sending, box, guard, tenantGuard }) };
    partsByContext.set(ctx, parts);
  }
  return parts;
}

/** The dispatcher role's service. */
export function createDispatcherService(ctx: Context): Service {
  const { box, guard, tenantGuard } = outboxParts(ctx);
  return new Dispatcher({
    db: ctx.db,
    sending: ctx.config.sending,
    box,
    guard,
    tenantGuard,
    logger: ctx.logger,
    metrics: ctx.metrics,
    announceExhausted: ctx.config.alerts.enabled,
  });
}
