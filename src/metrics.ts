import { createHash, timingSafeEqual } from 'node:crypto';
import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per running tekil (not prom-client's global), so tests can build several apps. Node's
 * own metrics already start with `process_` or `nodejs_`; the one `tekil_` prefix makes them
 * `tekil_process_cpu_seconds_total`, `tekil_nodejs_eventloop_lag_p99_seconds` and so on.
 */
export function createMetricsRegistry(withDefaults = true): Registry {
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'tekil_' });
  return registry;
}

/**
 * Whether a scrape's `Authorization` header carries the metrics token (`Bearer <token>`). Digests are
 * compared, in constant time, so neither the token's characters nor its length leak through timing.
 */
export function metricsTokenMatches(expected: string, authorization: string | undefined): boolean {
  const presented = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1];
  if (presented === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(expected), digest(presented));
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
