import type { Queryable } from '../../db.js';

export interface DeliveryChange {
  source: string;
  event_id: string;
  event_type: string | null;
  resource_id: string | null;
  status: string;
  attempts: number;
  received_at: Date;
  /** When it last changed: received, or last attempted / settled. */
  changed_at: Date;
}

/**
 * Deliveries received, or attempted or settled, at or after `since`. Only those received within
 * `lookbackMs` before now are looked at (through the received_at index), so the poll stays cheap over
 * millions of rows; a change to an older delivery (a late replay) shows in the list, not in the stream.
 */
export async function deliveryChangesSince(db: Queryable, since: Date, lookbackMs: number, limit: number): Promise<DeliveryChange[]> {
  const { rows } = await db.query<DeliveryChange>(
    `SELECT source, event_id, event_type, resource_id, status, attempts, received_at,
            greatest(received_at, coalesce(processed_at, received_at), coalesce(last_attempt_at, received_at)) AS changed_at
       FROM inbox_deliveries
      WHERE received_at >= now() - $2 * interval '1 millisecond'
        AND greatest(received_at, coalesce(processed_at, received_at), coalesce(last_attempt_at, received_at)) >= $1
      ORDER BY changed_at, source, event_id
      LIMIT $3`,
    [since, lookbackMs, limit],
    { name: 'tekil_dashboard_changes' },
  );
  return rows;
}
