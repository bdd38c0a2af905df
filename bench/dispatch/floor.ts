// The floor of any durable webhook dispatcher: the least a sender that survives a crash and keeps a
// record of every attempt must do per delivery, against the same sink at the same concurrency as
// tekil's dispatcher. Per delivery it
//   - claims the delivery under a lease (a HOT update of a narrow queue row, in claims of 200 taken
//     ahead of the free request slots, one statement each): a crash leaves it due again;
//   - signs the body with one HMAC-SHA256 (Standard Webhooks headers), the least a webhook sender does;
//   - POSTs it with undici over keep-alive connections;
//   - records the attempt (one narrow row, no index) and takes the delivery off the queue, in groups
//     of 100 attempts, one statement each, two writers at once.
// What it leaves out, and tekil does: messages apart from deliveries (fan-out to many endpoints),
// per-endpoint in-flight caps, retry ladders, several signing schemes and secrets, the attempt's
// status, timing and answer, the delivery's state for the admin API, metrics. A measuring fixture,
// not a dispatcher to use.
import { createHmac, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { Agent, request } from 'undici';

const CLAIM_SIZE = 200;
const CLAIM_AHEAD = 4;
const GROUP = 100;
const WRITERS = 2;
const LEASE_SECONDS = 30;

const SETUP_SQL = `
DROP TABLE IF EXISTS bench_floor_queue, bench_floor_attempts;
CREATE TABLE bench_floor_queue (id bigint PRIMARY KEY, payload bytea NOT NULL, lease text, lease_until timestamptz) WITH (fillfactor = 50);
CREATE TABLE bench_floor_attempts (delivery_id bigint NOT NULL, status_code int NOT NULL, attempted_at timestamptz NOT NULL);`;

const CLAIM = {
  name: 'bench_floor_claim',
  text: `
UPDATE bench_floor_queue q SET lease = $1, lease_until = now() + interval '${LEASE_SECONDS} seconds'
WHERE q.id IN (
  SELECT id FROM bench_floor_queue WHERE lease_until IS NULL OR lease_until < now() ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
RETURNING q.id, q.payload`,
};

const COMPLETE = {
  name: 'bench_floor_complete',
  text: `
WITH r AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[]) AS r (id, lease, status_code)),
done AS (DELETE FROM bench_floor_queue q USING r WHERE q.id = r.id AND q.lease = r.lease)
INSERT INTO bench_floor_attempts (delivery_id, status_code, attempted_at) SELECT r.id, r.status_code, now() FROM r`,
};

/** Creates the floor's two tables (dropping earlier ones) in the bench database. */
export async function setUpFloor(pool: pg.Pool): Promise<void> {
  await pool.query(SETUP_SQL);
}

/** Empties the floor's tables and queues every message's payload once, as tekil's deliveries are. */
export async function refillFloor(pool: pg.Pool, payloadsFrom: string): Promise<void> {
  await pool.query('TRUNCATE bench_floor_queue, bench_floor_attempts');
  await pool.query(`INSERT INTO bench_floor_queue (id, payload) SELECT row_number() OVER (), payload FROM (${payloadsFrom}) AS m`);
  await pool.query('VACUUM ANALYZE bench_floor_queue, bench_floor_attempts');
}

export interface FloorResult {
  rate: number;
  /** This process's CPU per delivery, µs. */
  nodeUs: number;
  delivered: number;
}

interface Claimed {
  id: string;
  payload: Buffer;
  lease: string;
}

/** Sends every queued delivery to `url` with `concurrency` requests in flight; resolves once all are recorded. */
export async function floorDispatch(pool: pg.Pool, url: string, concurrency: number): Promise<FloorResult> {
  const key = randomBytes(32);
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const queue: Claimed[] = [];
  const pending: { ids: string[]; leases: string[]; codes: number[] } = { ids: [], leases: [], codes: [] };
  const writes = new Set<Promise<void>>();
  let inFlight = 0;
  let claims = 0;
  let claiming: Promise<void> | undefined;
  let exhausted = false;
  let delivered = 0;

  const claim = (): Promise<void> => {
    if (claiming) return claiming;
    const limit = Math.min(CLAIM_SIZE, CLAIM_AHEAD * concurrency - inFlight - queue.length);
    if (limit <= 0) return Promise.resolve();
    const lease = `floor:${++claims}`;
    claiming = pool
      .query<{ id: string; payload: Buffer }>({ ...CLAIM, values: [lease, limit] })
      .then((res) => {
        if (res.rows.length === 0) exhausted = true;
        for (const r of res.rows) queue.push({ id: r.id, payload: r.payload, lease });
      })
      .finally(() => {
        claiming = undefined;
      });
    return claiming;
  };

  const flush = async (): Promise<void> => {
    while (writes.size >= WRITERS) await Promise.race(writes);
    const group = { ids: pending.ids.splice(0), leases: pending.leases.splice(0), codes: pending.codes.splice(0) };
    const write = pool.query({ ...COMPLETE, values: [group.ids, group.leases, group.codes] }).then(() => {
      delivered += group.ids.length;
    });
    const tracked = write.finally(() => writes.delete(tracked));
    writes.add(tracked);
  };

  const lane = async (): Promise<void> => {
    for (;;) {
      if (queue.length < concurrency && !exhausted) void claim();
      let next = queue.shift();
      while (next === undefined) {
        if (exhausted) return;
        await claim();
        next = queue.shift();
      }
      inFlight++;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const msgId = `msg_${next.id}`;
      const signature = createHmac('sha256', key).update(`${msgId}.${timestamp}.`).update(next.payload).digest('base64');
      const res = await request(url, {
        dispatcher: agent,
        method: 'POST',
        body: next.payload,
        headers: { 'content-type': 'application/json', 'webhook-id': msgId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` },
      });
      await res.body.text();
      inFlight--;
      pending.ids.push(next.id);
      pending.leases.push(next.lease);
      pending.codes.push(res.statusCode);
      if (pending.ids.length >= GROUP) await flush();
    }
  };

  const cpu0 = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  if (pending.ids.length > 0) await flush();
  await Promise.all(writes);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await agent.close();
  // Every delivery recorded once and none left queued: the rate counts finished, recorded work.
  const { rows } = await pool.query<{ attempts: number; queued: number }>(
    'SELECT (SELECT count(*) FROM bench_floor_attempts)::int AS attempts, (SELECT count(*) FROM bench_floor_queue)::int AS queued',
  );
  if (rows[0]!.attempts !== delivered || rows[0]!.queued !== 0) {
    throw new Error(`floor: ${rows[0]!.attempts} attempts recorded for ${delivered} deliveries, ${rows[0]!.queued} still queued`);
  }
  return { rate: delivered / seconds, nodeUs: (cpu.user + cpu.system) / delivered, delivered };
}
