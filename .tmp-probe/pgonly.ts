import { performance } from 'node:perf_hooks';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { claimDueDeliveries } from '../src/worker/claim-due-deliveries.js';
import { completeDeliveries, type Completion } from '../src/worker/complete-deliveries.js';
const N = 100000;
const admin = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.query('DROP DATABASE IF EXISTS tekil_probe_pgonly'); await admin.query('CREATE DATABASE tekil_probe_pgonly');
const db = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/tekil_probe_pgonly', max: 6 });
await migrate(db);
await db.query(`INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
       SELECT 'bench', 'evt_' || i, 'inv_' || i, 'invoice.paid', now() - interval '1 hour' + i * interval '1 millisecond',
              convert_to('{"event_id":"evt_' || i || '","event_type":"invoice.paid","data":{"id":"inv_' || i || '","status":"paid"}}', 'UTF8'), 'application/json' FROM generate_series(1, $1::int) AS i`, [N]);
await db.exec('VACUUM ANALYZE inbox_deliveries');
let claimMs = 0, txMs = 0, seq = 0;
const t0 = performance.now();
await Promise.all([0, 1, 2].map(async () => {
  for (;;) {
    const token = `t${seq++}`;
    let t = performance.now();
    const rows = await claimDueDeliveries(db, { limit: 500, leaseMs: 60000, token });
    claimMs += performance.now() - t;
    if (rows.length === 0) return;
    t = performance.now();
    await db.transaction(async (tx) => {
      const now = new Date().toISOString();
      const cs: Completion[] = rows.map((r) => ({ source: r.source, event_id: r.event_id, status: 'done', outcome: 'done', attempt: r.attempts, started_at: now, duration_ms: 0, error: null, next_attempt_at: null, result_ref: null }));
      await completeDeliveries(tx, cs, 'w', token);
    });
    txMs += performance.now() - t;
  }
}));
const wall = performance.now() - t0;
const hot = await db.query(`SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'inbox_deliveries'`);
console.log({ rate: Math.round(N / (wall / 1000)), claimMs: Math.round(claimMs), txMs: Math.round(txMs), wall: Math.round(wall) }, hot.rows[0]);
await db.close(); await admin.query('DROP DATABASE tekil_probe_pgonly'); await admin.close();
