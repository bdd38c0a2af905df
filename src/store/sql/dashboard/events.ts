import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

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

const deliveryChanges = defineStatement<{ since: Date; lookbackMs: number; limit: number }, DeliveryChange>(
  'tekil_dashboard_changes',
  `SELECT source, event_id, event_type, resource_id, status, attempts, received_at,
            greatest(received_at, coalesce(processed_at, received_at), coalesce(last_attempt_at, received_at)) AS changed_at
       FROM inbox_deliveries
      WHERE received_at >= now() - $lookbackMs * interval '1 millisecond'
        AND greatest(received_at, coalesce(processed_at, received_at), coalesce(last_attempt_at, received_at)) >= $since
      ORDER BY changed_at, source, event_id
      LIMIT $limit`,
  'prepared',
);

/**
 * Deliveries received, or attempted or settled, at or after `since`. Only those received within
 * `lookbackMs` before now are looked at (through the received_at index), so the poll stays cheap over
 * millions of rows; a change to an older delivery (a late replay) shows in the list, not in the stream.
 */
export async function deliveryChangesSince(db: Queryable, since: Date, lookbackMs: number, limit: number): Promise<DeliveryChange[]> {
  return (await deliveryChanges.run(db, { since, lookbackMs, limit })).rows;
}
