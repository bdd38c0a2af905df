// Fills a tekil database with a long history, fast: generate_series in SQL, in chunks, no HTTP.
import type { Db } from '../../src/store/db.js';

/** Days the filled history spans: past a 400-day record horizon, so a sweep has both kinds of work. */
export const HISTORY_DAYS = 500;

/**
 * `n` settled inbox deliveries of source `source` and `n` outbox messages, each with one succeeded
 * delivery to endpoint `ep_growth` and one attempt. Times are spread evenly over HISTORY_DAYS, ids
 * and resources are distinct, a few in a hundred are dead (they stay queued, in the review queue),
 * bodies are about 300 bytes like a real provider's. Prints progress per chunk.
 */
export async function fillHistory(db: Db, source: string, n: number, log: (line: string) => void): Promise<void> {
  const chunk = 1_000_000;
  const spreadMs = HISTORY_DAYS * 86_400_000;
  await db.query(`INSERT INTO endpoints (id, url, timeout_ms, max_in_flight) VALUES ('ep_growth', 'http://127.0.0.1:9/', 10000, 16) ON CONFLICT DO NOTHING`);
  for (let from = 1; from <= n; from += chunk) {
    const to = Math.min(n, from + chunk - 1);
    const started = Date.now();
    await db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type, headers, received_at,
                                     status, attempts, last_attempt_at, processed_at, result_ref, final_outcome, final_worker, final_duration_ms)
       SELECT $1, 'evt_h' || i, 'inv_h' || (i / 3), CASE i % 4 WHEN 0 THEN 'invoice.paid' WHEN 1 THEN 'invoice.confirming' WHEN 2 THEN 'invoice.expired' ELSE 'invoice.awaiting_payment' END,
              t, convert_to('{"event_id":"evt_h' || i || '","event_type":"invoice.paid","version":1,"occurred_at":"' || t || '","data":{"invoice_id":"inv_h' || (i / 3) || '","merchant_id":"mrc_4f7a2c","status":"paid","amount":"1250.00","paid_amount":"1250.00","currency":"TRY","customer":{"email":"buyer' || i || '@example.com"}}}', 'UTF8'),
              'application/json', '{"user-agent":"Paymos-Webhooks/1.0","content-type":"application/json"}'::jsonb, t,
              CASE WHEN i % 97 = 0 THEN 'dead' ELSE 'done' END, 1, t, t, 'ord_' || i, CASE WHEN i % 97 = 0 THEN 'dead' ELSE 'done' END, 'w1', 12
       FROM generate_series($2::bigint, $3::bigint) AS i,
            LATERAL (SELECT now() - (i::float8 / $4::float8) * ($5::float8 * interval '1 millisecond') AS t) AS tt`,
      [source, from, to, n, spreadMs],
    );
    await db.query(
      `WITH m AS (
         INSERT INTO outbox_messages (id, event_type, resource_id, payload, created_at)
         SELECT 'evt_o' || i, 'invoice.paid', 'inv_o' || i,
                convert_to('{"id":"evt_o' || i || '","type":"invoice.paid","timestamp":"' || t || '","data":{"invoice_id":"inv_o' || i || '","amount":"1250.00","currency":"TRY"}}', 'UTF8'), t
         FROM generate_series($1::bigint, $2::bigint) AS i,
              LATERAL (SELECT now() - (i::float8 / $3::float8) * ($4::float8 * interval '1 millisecond') AS t) AS tt
         RETURNING id, created_at
       ), d AS (
         INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, next_attempt_at, last_status_code, last_attempt_at, created_at, completed_at)
         SELECT 'default', id, 'ep_growth', 'succeeded', 1, created_at, 200, created_at, created_at, created_at FROM m
         RETURNING id, message_id, created_at
       )
       INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, status_code, response_body)
       SELECT 'default', id, message_id, 'ep_growth', 1, 'http://127.0.0.1:9/', created_at, 40, true, 200, 'ok' FROM d`,
      [from, to, n, spreadMs],
    );
    log(`  filled ${to.toLocaleString('en')} / ${n.toLocaleString('en')} of each (${((Date.now() - started) / 1000).toFixed(0)} s for this chunk)`);
  }
  await db.exec('VACUUM ANALYZE inbox_deliveries, inbox_queue, inbox_attempt_history, outbox_messages, outbox_deliveries, outbox_attempts');
}
