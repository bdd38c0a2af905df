import { Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per running tekil (not prom-client's global), so tests can build several apps. */
export function createMetricsRegistry(withDefaults = true): Registry {
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'tekil_process_' });
  return registry;
}

/**
 * prom-client hashes the label values on every `labels()` call; a hot path instead keeps one child
 * per label set. `cachedChildren(metric)` returns a lookup that makes each child once.
 */
export function cachedChildren<C>(metric: { labels(...values: string[]): C }): (...values: string[]) => C {
  const children = new Map<string, C>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = children.get(key);
    if (child === undefined) {
      child = metric.labels(...values);
      children.set(key, child);
    }
    return child;
  };
}
