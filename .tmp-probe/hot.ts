import { performance } from 'node:perf_hooks';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { completeDeliveries, type Completion } from '../src/worker/complete-deliveries.js';
const db = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/tekil_probe_z' });
await migrate(db);
await db.exec(`DROP INDEX inbox_deliveries_leased; ALTER TABLE inbox_deliveries SET (fillfactor = 80);`);
await db.query(`INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
       SELECT 'bench', 'evt_' || i, 'inv_' || i, 'invoice.paid', now() - interval '1 hour' + i * interval '1 millisecond',
              convert_to('{"event_id":"evt_' || i || '"}', 'UTF8'), 'application/json' FROM generate_series(1, 20000) AS i`);
await db.exec('VACUUM ANALYZE inbox_deliveries');
const CLAIM = `
WITH candidates AS (
  SELECT d.source, d.event_id
  FROM inbox_deliveries d
  WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now())
    AND (d.resource_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM inbox_deliveries o
      WHERE o.source = d.source AND o.resource_id = d.resource_id
        AND o.status = 'pending' AND o.event_id <> d.event_id
        AND (o.locked_until >= now()
             OR (coalesce(o.occurred_at, o.received_at), o.received_at, o.event_id)
              < (coalesce(d.occurred_at, d.received_at), d.received_at, d.event_id))))
  ORDER BY d.next_attempt_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
UPDATE inbox_deliveries d
SET attempts = d.attempts + 1, locked_by = $3, claimed_at = now(),
    last_attempt_at = now(), locked_until = now() + $2 * interval '1 millisecond'
FROM candidates c
WHERE d.source = c.source AND d.event_id = c.event_id
RETURNING d.source, d.event_id, d.resource_id, d.event_type, d.occurred_at, d.received_at, d.body, d.content_type, d.headers, d.attempts`;
const t = { claim: 0, complete: 0, commit: 0 };
for (let b = 0; b < 40; b++) {
  let t0 = performance.now();
  const rows = (await db.query<{ source: string; event_id: string; attempts: number }>(CLAIM, [500, 60000, `tok${b}`])).rows;
  t.claim += performance.now() - t0; t0 = performance.now();
  await db.transaction(async (tx) => {
    const cs: Completion[] = rows.map((r) => ({ source: r.source, event_id: r.event_id, status: 'done', outcome: 'done', attempt: r.attempts, started_at: new Date().toISOString(), duration_ms: 0, error: null, next_attempt_at: null, result_ref: null }));
    await completeDeliveries(tx, cs, 'w');
    t.complete += performance.now() - t0; t0 = performance.now();
  });
  t.commit += performance.now() - t0;
}
console.log(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)])), 'ms total for 20000');
const hot = await db.query(`SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'inbox_deliveries'`);
console.log(hot.rows);
await db.close();
