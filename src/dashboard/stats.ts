import { Gauge, type Registry } from 'prom-client';
import type { Queryable } from '../store/db.js';
import { endpointAttemptStats, failedOutboxDeliveries, inboxMinuteCounts, reviewQueueSize, type EndpointAttemptStats } from '../store/sql/dashboard/stats.js';
import { receiverMetrics } from '../receiver/metrics.js';
import type { OutcomeMinute } from '../receiver/minute-counts.js';
import { histogramQuantile, type CumulativeBucket } from './histogram-quantile.js';

/** How far before a window settled deliveries are looked for (see inboxMinuteCounts). */
export const SETTLED_LOOKBACK_MS = 24 * 3_600_000;

export const inboxKinds = ['received', 'done', 'stale', 'dead'] as const;
type InboxKind = (typeof inboxKinds)[number];

export interface InboxMinute {
  minute: string;
  received: number;
  done: number;
  stale: number;
  dead: number;
}

/** One row per minute of the window, zeros included, so a chart needs no gap filling. */
export async function inboxPerMinute(db: Queryable, windowMs: number, source: string | undefined, now = new Date()): Promise<InboxMinute[]> {
  const first = Math.floor((now.getTime() - windowMs) / 60_000) * 60_000;
  const counts = await inboxMinuteCounts(db, new Date(first), SETTLED_LOOKBACK_MS, source ?? null);
  const minutes = new Map<number, InboxMinute>();
  for (let t = first; t <= now.getTime(); t += 60_000) minutes.set(t, { minute: new Date(t).toISOString(), received: 0, done: 0, stale: 0, dead: 0 });
  for (const c of counts) {
    const row = minutes.get(c.minute.getTime());
    if (row && (inboxKinds as readonly string[]).includes(c.kind)) row[c.kind as InboxKind] += c.count;
  }
  return [...minutes.values()];
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

async function metricValues(registry: Registry, name: string): Promise<MetricValue[]> {
  const metric = registry.getSingleMetric(name);
  return metric ? ((await metric.get()).values as MetricValue[]) : [];
}

export interface ReceiverSnapshot {
  /** This process's receiver since it started (absent when this process does not receive). */
  accepted: number;
  duplicate: number;
  rejected: number;
  ack_p50_ms: number | null;
  ack_p99_ms: number | null;
  /** The same answers per minute of the window (kept in memory for a day; empty before this process started). */
  minutes: OutcomeMinute[];
}

/**
 * Duplicates and refusals are never stored, and acknowledgement latency is measured only in the
 * receiver: these come from this process's metrics, since it started, for every source together.
 */
export async function receiverSnapshot(registry: Registry, windowMs: number, now = new Date()): Promise<ReceiverSnapshot | undefined> {
  if (!registry.getSingleMetric('tekil_inbox_deliveries_total')) return undefined;
  const totals = { accepted: 0, duplicate: 0, rejected: 0 };
  for (const v of await metricValues(registry, 'tekil_inbox_deliveries_total')) {
    const outcome = String(v.labels.outcome) as keyof typeof totals;
    if (outcome in totals) totals[outcome] += v.value;
  }
  const byBound = new Map<number, number>();
  for (const v of await metricValues(registry, 'tekil_inbox_ack_seconds')) {
    if (v.metricName !== 'tekil_inbox_ack_seconds_bucket') continue;
    const le = v.labels.le === '+Inf' ? Infinity : Number(v.labels.le);
    byBound.set(le, (byBound.get(le) ?? 0) + v.value);
  }
  const buckets: CumulativeBucket[] = [...byBound].map(([le, count]) => ({ le, count }));
  const ms = (s: number | undefined) => (s === undefined ? null : Math.round(s * 1e4) / 10);
  const minutes = receiverMetrics(registry).perMinute.read(now.getTime() - windowMs, now.getTime());
  return { ...totals, minutes, ack_p50_ms: ms(histogramQuantile(0.5, buckets)), ack_p99_ms: ms(histogramQuantile(0.99, buckets)) };
}

export interface EndpointHealth extends EndpointAttemptStats {
  success_rate: number | null;
}

export async function endpointHealth(db: Queryable, windowMs: number, now = new Date()): Promise<EndpointHealth[]> {
  const rows = await endpointAttemptStats(db, new Date(now.getTime() - windowMs));
  return rows.map((r) => ({ ...r, success_rate: r.attempts === 0 ? null : r.succeeded / r.attempts }));
}

export { reviewQueueSize, failedOutboxDeliveries };

/**
 * Gauges read from the store when /metrics is scraped, so an alert can fire on a growing review queue
 * or failed outbound deliveries without the dashboard open. Registered once per registry.
 */
export function registerDashboardGauges(registry: Registry, db: Queryable): void {
  if (registry.getSingleMetric('tekil_review_queue_size')) return;
  new Gauge({
    name: 'tekil_review_queue_size',
    help: 'Dead inbound deliveries waiting in the review queue (read from the store at scrape time).',
    registers: [registry],
    // Every process reads the same number from the store: summing over processes would multiply it.
    aggregator: 'max',
    async collect() {
      this.set(await reviewQueueSize(db));
    },
  });
  new Gauge({
    name: 'tekil_outbox_failed_deliveries',
    help: 'Outbound deliveries whose retry ladder ran out without a 2xx (read from the store at scrape time).',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      this.set(await failedOutboxDeliveries(db));
    },
  });
}
