import pg from 'pg';
import { createPostgresDb } from './src/store/postgres.js';
import { migrate } from './src/store/migrate.js';
const a = new pg.Client('postgres://postgres@127.0.0.1:5432/postgres'); await a.connect();
await a.query('drop database if exists rcv_lat'); await a.query('create database rcv_lat');
const db = createPostgresDb({ connectionString: 'postgres://postgres@127.0.0.1:5432/rcv_lat', max: 2 }); await migrate(db); await db.close();
const c = new pg.Client('postgres://postgres@127.0.0.1:5432/rcv_lat'); await c.connect();
const body = Buffer.from(JSON.stringify({ event_id: 'evt_x', event_type: 'invoice.paid', data: { invoice_id: 'inv', amount: '1250.00', customer: { email: 'a@b.c' }, pad: 'x'.repeat(250) } }));
const text = `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type, headers)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::bytea[], $7::text[], $8::jsonb[])
  ON CONFLICT (source, event_id) DO NOTHING RETURNING source, event_id`;
for (const round of [1, 2]) for (const named of [false, true]) {
  const N = 200, rows = 30; const t = performance.now();
  for (let i = 0; i < N; i++) {
    const ids = Array.from({ length: rows }, (_, j) => `r${round}${named}_${i}_${j}`);
    const values = [ids.map(() => 'bench'), ids, ids.map((_, j) => `inv_${j}`), ids.map(() => 'invoice.paid'), ids.map(() => new Date()), ids.map(() => body), ids.map(() => 'application/json'), ids.map(() => '{"content-type":"application/json","user-agent":"x","x-webhook-id":"evt"}')];
    await c.query(named ? { name: 'ins', text, values } : { text, values });
  }
  console.log(named ? 'named' : 'unnamed', ((performance.now() - t) / N).toFixed(2), 'ms per 30 rows');
}
await c.end(); await a.query('drop database rcv_lat with (force)'); await a.end();
