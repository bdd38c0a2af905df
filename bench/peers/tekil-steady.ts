// tekil's side of bench:peers' steady phase (latency.ts), after its backlog run on the same database:
//   process  the worker as the service runs it (start(): claim loops woken by the inbox trigger's
//            NOTIFY), events inserted one by one as a receiver does; an item ends when its batch
//            transaction has committed (seen by wrapping the store's transaction(): nothing of the
//            worker changes);
//   send     the dispatcher as the service runs it, messages published one by one with publish() on an
//            application's pg pool (one statement, committed on its own); an item ends at the sink.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { Dispatcher } from '../../src/outbox/dispatcher.js';
import { publish } from '../../src/outbox/publish.js';
import { resolveSettings } from '../../src/settings.js';
import type { Db } from '../../src/store/db.js';
import { createPostgresDb } from '../../src/store/postgres.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { createInboxWorker } from '../../src/worker/worker.js';
import type { TekilDispatch } from '../dispatch/tekil.js';
import { CompletionEnd, steadyPhase, wallClock, type LatencyEnd, type LatencyResult, type SteadyLoad } from './latency.js';

/** The body of the process path's steady item i (the backlog's shape, with t0). */
export function processPayload(i: number, t0: number): string {
  return JSON.stringify({ event_id: `lat_${i}`, event_type: 'invoice.paid', data: { id: `inv_lat_${i}`, status: 'paid' }, t0 });
}

export async function tekilProcessSteady(url: string, options: { batch: number; loops: number; load: SteadyLoad }): Promise<LatencyResult> {
  const db = createPostgresDb({ connectionString: url, max: options.loops + 2 });
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {}); // the database is dropped WITH (FORCE) after the run
  const end = new CompletionEnd();
  const batchBodies = new AsyncLocalStorage<string[]>();
  // The store as the worker sees it, but each transaction() tells `end` of the items handled inside it
  // once it has committed.
  const timed = new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction') {
        return async <T>(fn: Parameters<Db['transaction']>[0]): Promise<T> => {
          const bodies: string[] = [];
          const answer = (await batchBodies.run(bodies, () => target.transaction(fn))) as T;
          const t1 = wallClock();
          for (const b of bodies) end.completed(b, t1);
          return answer;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const config = parseConfig({
    worker: { batch_size: options.batch, concurrency: options.loops, lease: '5m' },
    sources: { bench: { scheme: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } },
  });
  const handlers = defineHandlers().on('bench', '*', (event) => {
    batchBodies.getStore()?.push(event.body.toString('utf8'));
  });
  const worker = createInboxWorker(
    { config, settings: resolveSettings(config, {}), db: timed, logger: pino({ level: 'warn' }), metrics: createMetricsRegistry(false) },
    { handlers },
  );
  await worker.start();
  try {
    return await steadyPhase(options.load, end, (i, t0) =>
      pool.query(
        `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
         VALUES ('bench', $1, $2, 'invoice.paid', now(), $3, 'application/json')`,
        [`lat_${i}`, `inv_lat_${i}`, Buffer.from(processPayload(i, t0))],
      ),
    );
  } finally {
    await worker.stop();
    await pool.end();
    await db.close();
  }
}

/** The data of the send path's steady message i, as tekil publishes it and the peers send it. */
export function sendData(i: number, t0: number): { invoice_id: string; amount: string; currency: string; t0: number } {
  return { invoice_id: `inv_lat_${i}`, amount: '125.00', currency: 'TRY', t0 };
}

type PostgresDb = ReturnType<typeof createPostgresDb>;

export async function tekilSendSteady(db: PostgresDb, pool: pg.Pool, setup: TekilDispatch, load: SteadyLoad, end: LatencyEnd): Promise<LatencyResult> {
  const { rows } = await db.query<{ last: string }>('SELECT coalesce(max(id), 0)::text AS last FROM outbox_deliveries');
  const last = rows[0]!.last;
  const dispatcher = new Dispatcher({ db, sending: setup.config.sending, box: setup.box, guard: setup.guard, logger: createLogger({ level: 'warn' }) });
  await dispatcher.start();
  try {
    return await steadyPhase(load, end, (i, t0) => publish(pool, { type: 'invoice.paid', resourceId: `inv_lat_${i}`, data: sendData(i, t0) }));
  } finally {
    await dispatcher.stop();
    // The backlog runs count on exactly the published messages: the steady phase's go.
    await db.query('DELETE FROM outbox_attempts WHERE delivery_id > $1', [last]);
    await db.query('DELETE FROM outbox_queue WHERE delivery_id > $1', [last]);
    await db.query('DELETE FROM outbox_messages WHERE id IN (SELECT message_id FROM outbox_deliveries WHERE id > $1)', [last]);
    await db.query('DELETE FROM outbox_deliveries WHERE id > $1', [last]);
  }
}
