import type { Queryable } from '../../db.js';
import { defineStatement, packBytes } from '../statement.js';

/** One received delivery, ready for the inbox table (a type, so it can name a statement's parameters). */
export type InboxDeliveryRow = {
  source: string;
  eventId: string;
  resourceId: string | null;
  eventType: string | null;
  occurredAt: Date | null;
  /** The raw body, byte for byte. */
  body: Buffer;
  contentType: string | null;
  /** The non-secret header subset, already serialised as a JSON object. */
  headers: string;
};

/** Identifies a delivery in memory. Source names and ids never contain NUL, so the key is unique. */
export function deliveryKey(source: string, eventId: string): string {
  return `${source}\u0000${eventId}`;
}

/** What a copy of a recorded delivery is answered with: the first copy's processing, as it stands. */
export interface PreviousOutcome {
  /** pending, processing, done, stale, dead or discarded. */
  status: string;
  /** The local record the processing produced (a handler's `resultRef`), when it is done and named one. */
  result_ref: string | null;
}

/** The new rows' keys, and for the others, where known, what the first copy's processing came to. */
export interface InsertedDeliveries {
  inserted: Set<string>;
  previous: Map<string, PreviousOutcome>;
}

interface InsertAnswerRow {
  source: string;
  event_id: string;
  inserted: boolean;
  status: string | null;
  result_ref: string | null;
}

/*
 * The rows the INSERT skipped, with the recorded row's status and result: "daha önceki sonucu
 * döndürün", the copy is answered with the first one's outcome. In the same statement, so a duplicate
 * costs no round trip: the anti-join leaves only the skipped rows, each one primary-key probe (a
 * LATERAL lookup, so the plan cannot turn it into a scan of the table) and one of the queue, whose
 * lease says `processing`, as the inbox lists say it. The
 * statement's snapshot predates the INSERT: a row committed by another batch after it began (a copy
 * racing its first) is skipped by ON CONFLICT but not seen here, and its copy is answered without
 * the previous outcome.
 */
const PREVIOUS_OF_THE_REST = `SELECT r.source, r.event_id, false, p.status, p.result_ref
  FROM r
  CROSS JOIN LATERAL (
    SELECT CASE WHEN q.locked_until > now() THEN 'processing' ELSE d.status END AS status, d.result_ref
    FROM inbox_deliveries d LEFT JOIN inbox_queue q ON q.source = d.source AND q.event_id = d.event_id
    WHERE d.source = r.source AND d.event_id = r.event_id
  ) p
  WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.source = r.source AND i.event_id = r.event_id)`;

/*
 * A named prepared statement on both stores (on Postgres unless `store.prepared_statements` is off):
 * parsing and planning this INSERT on every batch cost Postgres about a fifth of the batch. In six
 * alternating pairs of `BENCH_SERVERS=tekil,store npm run bench:ingest` (3 December 2026, 31 rows an
 * INSERT), Postgres spent 41–45 µs of CPU per row in the store-only line unnamed against 31–38 µs
 * prepared, and 48–51 against 40–46 µs behind the receiver. On PGlite, batches of 24: 3.4–3.9 ms per
 * INSERT unnamed, 3.0–3.3 ms named. The plan does not depend on the batch's size (a scan of the
 * arrays, a sort, the insert), so the generic plan Postgres settles on is as good as a custom one.
 *
 * One statement text for any number of rows (arrays, not a VALUES list), so Postgres sees the same
 * query every time and the parameter count never grows with the batch.
 *
 * The bodies travel as one bytea parameter, back to back, cut apart by offsets (packBytes).
 *
 * ORDER BY: each inserted key is locked until the batch commits. Two receivers inserting overlapping
 * ids in opposite orders would each hold a key the other waits for — a deadlock, and Postgres then
 * aborts one whole batch (unrelated new events included). Inserting every batch in one fixed order
 * (by primary key) makes such a cycle impossible: the later batch simply waits for the earlier one.
 */
const insertMany = defineStatement<
  {
    sources: string[];
    eventIds: string[];
    resourceIds: Array<string | null>;
    eventTypes: Array<string | null>;
    occurredAt: Array<string | null>;
    bodies: Buffer;
    bodyStarts: number[];
    bodyLengths: number[];
    contentTypes: Array<string | null>;
    headers: string[];
  },
  InsertAnswerRow
>(
  'inbox_insert_deliveries',
  `WITH r AS (
    SELECT * FROM unnest($sources::text[], $eventIds::text[], $resourceIds::text[], $eventTypes::text[],
              $occurredAt::timestamptz[], $bodyStarts::int[], $bodyLengths::int[], $contentTypes::text[],
              $headers::jsonb[])
      AS r(source, event_id, resource_id, event_type, occurred_at, body_start, body_length, content_type, headers)
  ), inserted AS (
    INSERT INTO inbox_deliveries
      (source, event_id, resource_id, event_type, occurred_at, body, content_type, headers)
    SELECT r.source, r.event_id, r.resource_id, r.event_type, r.occurred_at,
           substring($bodies::bytea FROM r.body_start FOR r.body_length), r.content_type, r.headers
    FROM r
    ORDER BY r.source, r.event_id
    ON CONFLICT (source, event_id) DO NOTHING
    RETURNING source, event_id
  )
  SELECT source, event_id, true AS inserted, NULL::text AS status, NULL::text AS result_ref FROM inserted
  UNION ALL
  ${PREVIOUS_OF_THE_REST}`,
  'prepared',
);

const insertOne = defineStatement<InboxDeliveryRow, InsertAnswerRow>(
  'inbox_insert_delivery',
  `WITH r AS (SELECT $source::text AS source, $eventId::text AS event_id),
  inserted AS (
    INSERT INTO inbox_deliveries
      (source, event_id, resource_id, event_type, occurred_at, body, content_type, headers)
    VALUES ($source, $eventId, $resourceId, $eventType, $occurredAt, $body, $contentType, $headers::jsonb)
    ON CONFLICT (source, event_id) DO NOTHING
    RETURNING source, event_id
  )
  SELECT source, event_id, true AS inserted, NULL::text AS status, NULL::text AS result_ref FROM inserted
  UNION ALL
  ${PREVIOUS_OF_THE_REST}`,
);

/**
 * Inserts distinct deliveries in one statement (one implicit transaction) and returns the keys
 * (see deliveryKey) of the rows that were new. The others were already recorded: with their first
 * copy's outcome where the statement saw it.
 */
export async function insertDeliveries(db: Queryable, rows: readonly InboxDeliveryRow[]): Promise<InsertedDeliveries> {
  const n = rows.length;
  const sources = new Array<string>(n);
  const eventIds = new Array<string>(n);
  const resourceIds = new Array<string | null>(n);
  const eventTypes = new Array<string | null>(n);
  // ISO text: node-postgres would format a Date in local time with an offset, a slower path.
  const occurredAt = new Array<string | null>(n);
  const bodies = new Array<Buffer>(n);
  const contentTypes = new Array<string | null>(n);
  const headers = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    sources[i] = r.source;
    eventIds[i] = r.eventId;
    resourceIds[i] = r.resourceId;
    eventTypes[i] = r.eventType;
    occurredAt[i] = r.occurredAt === null ? null : r.occurredAt.toISOString();
    bodies[i] = r.body;
    contentTypes[i] = r.contentType;
    headers[i] = r.headers;
  }
  const packed = packBytes(bodies);
  const res = await insertMany.run(db, {
    sources,
    eventIds,
    resourceIds,
    eventTypes,
    occurredAt,
    bodies: packed.bytes,
    bodyStarts: packed.starts,
    bodyLengths: packed.lengths,
    contentTypes,
    headers,
  });
  return answers(res.rows);
}

function answers(rows: readonly InsertAnswerRow[]): InsertedDeliveries {
  const inserted = new Set<string>();
  const previous = new Map<string, PreviousOutcome>();
  for (const row of rows) {
    const key = deliveryKey(row.source, row.event_id);
    if (row.inserted) inserted.add(key);
    else previous.set(key, { status: row.status!, result_ref: row.result_ref });
  }
  return { inserted, previous };
}

/** Inserts one delivery; true when it was new. Reconciliation's insert. */
export async function insertDelivery(db: Queryable, r: InboxDeliveryRow): Promise<boolean> {
  return (await insertDeliveryAnswer(db, r)).inserted.size > 0;
}

/** Inserts one delivery, answering as insertDeliveries does. The per-row fallback of the batcher. */
export async function insertDeliveryAnswer(db: Queryable, r: InboxDeliveryRow): Promise<InsertedDeliveries> {
  return answers((await insertOne.run(db, r)).rows);
}
