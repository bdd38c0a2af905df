import { Counter } from 'prom-client';
import type { Context } from '../service.js';
import { countFindings } from '../store/sql/reconcile/findings.js';

/**
 * `tekil_reconcile_findings_total{source,kind}`: every finding ever stored, read from the store when
 * scraped. Counting rows rather than in-process events means a run by `tekil reconcile` (another
 * process) or by another tekil shows up on every process's /metrics, and an alert on
 * `increase(tekil_reconcile_findings_total{kind="missing"}[1d]) > 0` sees "paid at the provider, not
 * paid here" wherever the run happened.
 */
export function registerReconcileMetrics(ctx: Context): void {
  if (ctx.metrics.getSingleMetric('tekil_reconcile_findings_total')) return;
  const { db, logger } = ctx;
  let last: Array<{ source: string; kind: string; n: number }> = [];
  new Counter({
    name: 'tekil_reconcile_findings_total',
    help: 'Differences reconcile found between a provider and tekil, by source and kind (missing, unprocessed, state, extra).',
    labelNames: ['source', 'kind'],
    registers: [ctx.metrics],
    // Read from the store: every process of a box reports the same counts, so the box's sum is the max.
    aggregator: 'max',
    async collect() {
      try {
        last = (await countFindings.run(db)).rows;
      } catch (err) {
        // A scrape must not fail because the store blinked: the last counts stand.
        logger.debug({ err }, 'reconcile findings could not be counted');
      }
      this.reset();
      for (const row of last) this.inc({ source: row.source, kind: row.kind }, row.n);
    },
  });
}
