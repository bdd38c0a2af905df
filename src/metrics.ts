import { Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per running tekil (not prom-client's global), so tests can build several apps. */
export function createMetricsRegistry(withDefaults = true): Registry {
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'tekil_process_' });
  return registry;
}
