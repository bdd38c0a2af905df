import type { Context, Service } from '../service.js';
import { DestinationGuard } from './destination-guard.js';
import { Dispatcher } from './dispatcher.js';
import { endpointStore, type EndpointStore } from './endpoints.js';
import { resolveSecretBox, type SecretBox } from './secrets.js';

/** The parts of the sending side that the API and the dispatcher share within one process. */
export interface OutboxParts {
  box: SecretBox;
  guard: DestinationGuard;
  endpoints: EndpointStore;
}

const partsByContext = new WeakMap<Context, OutboxParts>();

/** Where the generated secret key lives when TEKIL_SECRET_KEY is not set (the same data dir as the store). */
function dataDir(ctx: Context, env: NodeJS.ProcessEnv): string {
  return env.TEKIL_DATA_DIR || ctx.config.store.data_dir || './.tekil';
}

export function outboxParts(ctx: Context, env: NodeJS.ProcessEnv = process.env): OutboxParts {
  let parts = partsByContext.get(ctx);
  if (!parts) {
    const sending = ctx.config.sending;
    const box = resolveSecretBox(env, dataDir(ctx, env));
    const guard = new DestinationGuard(sending.allow_networks);
    parts = { box, guard, endpoints: endpointStore({ sending, box, guard }) };
    partsByContext.set(ctx, parts);
  }
  return parts;
}

/**
 * The dispatcher role's service. Created before the admin API, so both share the parts made with the
 * environment the process was started with.
 */
export function createDispatcherService(ctx: Context, env: NodeJS.ProcessEnv = process.env): Service {
  const { box, guard } = outboxParts(ctx, env);
  return new Dispatcher({ db: ctx.db, sending: ctx.config.sending, box, guard, logger: ctx.logger, metrics: ctx.metrics });
}
