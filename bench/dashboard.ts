// npm run bench:dashboard — the panel's table over a big inbox: the list queries the Inbound page and
// the review queue make, the dry-run count and the per-minute stats, timed over N stored deliveries
// (1% dead) on Postgres; then the panel's first paint in Chromium (when /usr/bin/chromium is there).
// Each run gets a fresh database, dropped afterwards; inserting the rows is not timed.
//
//   TEKIL_BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_N                   deliveries (default 1000000)
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { chromium } from 'playwright-core';
import { request } from 'undici';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/index.js';
import { inboxPerMinute } from '../src/dashboard/stats.js';
import { listInbox } from '../src/inbox/list.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { resolveSettings } from '../src/settings.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { countInboxMatching } from '../src/inbox/list.js';
import { resourceTimeline } from '../src/inbox/timeline.js';
import type { InboxFilter } from '../src/inbox/filter.js';
import { filterParams, filterShape } from '../src/inbox/filter.js';
import { listDeliveries, resourceTimeline as resourceTimelineStatement } from '../src/store/sql/inbox/admin.js';
import { withFreshDatabase } from './lib/database.js';

const N = Number(process.env.BENCH_N ?? 1_000_000);

/** Median of five runs after one warm-up, in ms. */
async function time(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await fn();
    runs.push(performance.now() - start);
  }
  return Math.round(runs.sort((a, b) => a - b)[2]! * 10) / 10;
}

/** Every row as .xlsx over HTTP: time, size, and the process's peak RSS while it streams. */
async function exportFigures(db: Awaited<ReturnType<typeof createPostgresDb>>): Promise<void> {
  const config = parseConfig({}, {});
  const ctx = { config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'silent' }), metrics: createMetricsRegistry(false) };
  const app = await buildApp({ ctx, roles: new Set(['api']), adminToken: 'bench' });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    for (const format of ['csv', 'xlsx'] as const) {
      const rssBefore = process.memoryUsage().rss;
      let peak = rssBefore;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
      const t0 = performance.now();
      const res = await request(`${base}/api/v1/inbox/export.${format}`, { headers: { authorization: 'Bearer bench' } });
      let bytes = 0;
      for await (const chunk of res.body) bytes += (chunk as Buffer).length;
      clearInterval(sampler);
      const mb = (n: number) => Math.round(n / 1e6);
      console.log(
        `${`export ${format}, every row`.padEnd(36)} ${Math.round(performance.now() - t0)} ms, ${mb(bytes)} MB, peak RSS ${mb(peak)} MB (${mb(rssBefore)} MB before)`,
      );
    }
  } finally {
    await app.close();
  }
}

/** The plans of the filters the panel added (BENCH_EXPLAIN=1): each must use an index, not read every row. */
async function explainPlans(db: Awaited<ReturnType<typeof createPostgresDb>>): Promise<void> {
  const list = (filter: InboxFilter) => {
    const stmt = listDeliveries(filterShape(filter));
    return { sql: stmt.text, params: stmt.bind({ ...filterParams(filter), afterReceivedAt: null, afterSource: null, afterEventId: null, limit: 101 }) };
  };
  const plans = {
    'event_id (no source)': list({ eventId: 'evt_500000' }),
    'min_attempts=2': list({ minAttempts: 2 }),
    'resource timeline': { sql: resourceTimelineStatement.text, params: resourceTimelineStatement.bind({ resourceId: 'inv_42', source: null, limit: 1001 }) },
  };
  for (const [what, { sql, params }] of Object.entries(plans)) {
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${sql}`, params);
    console.log(`-- ${what}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
  }
}

await withFreshDatabase('tekil_bench_dashboard', async (url) => {
  const db = await createPostgresDb({ connectionString: url });
  try {
    await migrate(db);
    const started = performance.now();
    await db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, received_at, status, attempts)
       SELECT CASE WHEN i % 3 = 0 THEN 'shop' ELSE 'payments' END, 'evt_' || i, 'inv_' || (i % 50000), 'invoice.paid',
              convert_to('{"event_id":"evt_' || i || '"}', 'UTF8'), now() - (i * interval '100 milliseconds'),
              CASE WHEN i % 100 = 0 THEN 'dead' ELSE 'done' END, 1 + (i % 5 = 0)::int
       FROM generate_series(1, $1::int) AS i`,
      [N],
    );
    await db.exec('ANALYZE');
    console.log(`inserted ${N} deliveries in ${Math.round(performance.now() - started)} ms`);

    const page = await listInbox(db, {}, { limit: 100 });
    const figures: Record<string, number> = {
      'list, newest 100': await time(() => listInbox(db, {}, { limit: 100 })),
      'list, next page (cursor)': await time(() => listInbox(db, {}, { limit: 100, cursor: page.next_cursor ?? undefined })),
      'list, status=dead (review queue)': await time(() => listInbox(db, { status: 'dead' }, { limit: 100 })),
      'list, source=shop': await time(() => listInbox(db, { source: 'shop' }, { limit: 100 })),
      'list, resource_id=inv_42': await time(() => listInbox(db, { resourceId: 'inv_42' }, { limit: 100 })),
      'list, event_id (no source)': await time(() => listInbox(db, { eventId: 'evt_500000' }, { limit: 100 })),
      'list, event_id + source': await time(() => listInbox(db, { eventId: 'evt_500001', source: 'payments' }, { limit: 100 })),
      'list, min_attempts=2 (20% match)': await time(() => listInbox(db, { minAttempts: 2 }, { limit: 100 })),
      'list, min_attempts=3 (none: every row)': await time(() => listInbox(db, { minAttempts: 3 }, { limit: 100 })),
      'list, status=dead, min_attempts=2': await time(() => listInbox(db, { status: 'dead', minAttempts: 2 }, { limit: 100 })),
      'resource timeline, inv_42 (20 events)': await time(() => resourceTimeline(db, 'inv_42', undefined)),
      'dry-run count, status=dead': await time(() => countInboxMatching(db, { status: 'dead' })),
      'stats, 1h per minute': await time(() => inboxPerMinute(db, 3_600_000, undefined)),
    };
    for (const [what, ms] of Object.entries(figures)) console.log(`${what.padEnd(36)} ${ms} ms`);
    if (process.env.BENCH_EXPLAIN === '1') await explainPlans(db);

    if (existsSync('/usr/bin/chromium')) {
      const config = parseConfig({}, {});
      const ctx = { config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'silent' }), metrics: createMetricsRegistry(false) };
      const app = await buildApp({ ctx, roles: new Set(['api']), adminToken: 'bench' });
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      });
      try {
        const page = await browser.newPage();
        await page.goto(base);
        await page.locator('#token').fill('bench');
        const t0 = performance.now();
        await page.locator('#sign-in button[type=submit]').click();
        await page.locator('#rows tr >> nth=99').waitFor();
        console.log(`${'sign-in to 100 rows painted'.padEnd(36)} ${Math.round(performance.now() - t0)} ms`);
        const t1 = performance.now();
        await page.reload();
        await page.locator('#rows tr >> nth=99').waitFor();
        console.log(`${'reload to 100 rows painted'.padEnd(36)} ${Math.round(performance.now() - t1)} ms`);
      } finally {
        await browser.close();
        await app.close();
      }
    }
    if (process.env.BENCH_EXPORT !== '0') await exportFigures(db);
  } finally {
    await db.close();
  }
});
