import { performance } from 'node:perf_hooks';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
const variant = process.argv[2]!;
const ff = Number(process.argv[3] ?? 100);
const name = `tekil_probe_${variant}_${ff}`;
const admin = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.query(`DROP DATABASE IF EXISTS ${name}`); await admin.query(`CREATE DATABASE ${name}`);
const db = createPostgresDb({ connectionString: `postgres://postgres@127.0.0.1:5432/${name}` });
await migrate(db);
await db.exec(`ALTER TABLE inbox_deliveries SET (fillfactor = ${ff});`);
await db.query(`INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
       SELECT 'bench', 'evt_' || i, 'inv_' || i, 'invoice.paid', now() - interval '1 hour' + i * interval '1 millisecond',
              convert_to('{"event_id":"evt_' || i || '","event_type":"invoice.paid","data":{"id":"inv_' || i || '","status":"paid"}}', 'UTF8'), 'application/json' FROM generate_series(1, 30000) AS i`);
await db.exec('VACUUM ANALYZE inbox_deliveries');
const status = variant === 'status' ? `status = 'processing',` : '';
const inflight = variant === 'status' ? `o.status = 'processing'` : `o.locked_until >= now()`;
const CLAIM = `
WITH candidates AS (
  SELECT d.source, d.event_id FROM inbox_deliveries d
  WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now())
    AND (d.resource_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM inbox_deliveries o WHERE o.source = d.source AND o.resource_id = d.resource_id
        AND o.status IN ('pending','processing') AND o.event_id <> d.event_id
        AND (${inflight} OR (coalesce(o.occurred_at, o.received_at), o.received_at, o.event_id)
              < (coalesce(d.occurred_at, d.received_at), d.received_at, d.event_id))))
  ORDER BY d.next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
UPDATE inbox_deliveries d SET ${status} attempts = d.attempts + 1, locked_by = $3, claimed_at = now(),
    last_attempt_at = now(), locked_until = now() + $2 * interval '1 millisecond'
FROM candidates c WHERE d.source = c.source AND d.event_id = c.event_id
RETURNING d.source, d.event_id, d.body, d.attempts`;
let claim = 0, complete = 0;
for (let b = 0; b < 60; b++) {
  let t0 = performance.now();
  const rows = (await db.query<{ source: string; event_id: string; attempts: number }>(CLAIM, [500, 60000, `tok${b}`])).rows;
  claim += performance.now() - t0; t0 = performance.now();
  await db.query(`UPDATE inbox_deliveries d SET status = 'done', processed_at = now(), locked_until = NULL, locked_by = NULL
     FROM jsonb_to_recordset($1::jsonb) AS r(source text, event_id text) WHERE d.source = r.source AND d.event_id = r.event_id`, [JSON.stringify(rows.map((r) => ({ source: r.source, event_id: r.event_id })))]);
  complete += performance.now() - t0;
}
const hot = await db.query(`SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'inbox_deliveries'`);
console.log(variant, ff, { claim: Math.round(claim), complete: Math.round(complete) }, hot.rows[0]);
await db.close(); await admin.query(`DROP DATABASE ${name}`); await admin.close();
