import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { claimDueDeliveries } from '../src/worker/claim-due-deliveries.js';
import { completeDeliveries, type Completion } from '../src/worker/complete-deliveries.js';
import { readFileSync } from 'node:fs';
const admin = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.query('DROP DATABASE IF EXISTS tekil_probe_ex'); await admin.query('CREATE DATABASE tekil_probe_ex');
const db = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/tekil_probe_ex', max: 6 });
await migrate(db);
await db.query(`INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
       SELECT 'bench', 'evt_' || i, 'inv_' || i, 'invoice.paid', now() - interval '1 hour' + i * interval '1 millisecond',
              convert_to('{"event_id":"evt_' || i || '"}', 'UTF8'), 'application/json' FROM generate_series(1, 100000) AS i`);
await db.exec('VACUUM ANALYZE inbox_deliveries');
for (let b = 0; b < 40; b++) {
  const token = `t${b}`;
  const rows = await claimDueDeliveries(db, { limit: 500, leaseMs: 60000, token });
  await db.transaction(async (tx) => {
    const cs: Completion[] = rows.map((r) => ({ source: r.source, event_id: r.event_id, row_ref: r.row_ref, status: 'done', outcome: 'done', attempt: r.attempts, started_at: new Date().toISOString(), duration_ms: 0, error: null, next_attempt_at: null, result_ref: null }));
    await completeDeliveries(tx, cs, 'w', token);
  });
}
const rows = await claimDueDeliveries(db, { limit: 500, leaseMs: 60000, token: 'inflight' });
const cs: Completion[] = rows.map((r) => ({ source: r.source, event_id: r.event_id, row_ref: r.row_ref, status: 'done', outcome: 'done', attempt: r.attempts, started_at: new Date().toISOString(), duration_ms: 0, error: null, next_attempt_at: null, result_ref: null }));
const src = readFileSync('src/worker/complete-deliveries.ts', 'utf8');
const sql = src.slice(src.indexOf('const COMPLETE_SQL = `') + 22, src.indexOf('`;', src.indexOf('const COMPLETE_SQL')));
const plan = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, [JSON.stringify(cs), 'w', 'inflight']);
console.log(plan.rows.map((r) => (r as Record<string, string>)['QUERY PLAN']).join('\n'));
await db.query('ROLLBACK').catch(() => {});
await db.close(); await admin.query('DROP DATABASE tekil_probe_ex'); await admin.close();
