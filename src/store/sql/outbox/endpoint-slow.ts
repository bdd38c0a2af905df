import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

/** An endpoint enters the slow lane (its recent p90 in ms) or leaves it (null): migration 026. */
export const setEndpointSlow = defineStatement<{ id: string; p90_ms: number | null }, never>(
  'tekil_outbox_endpoint_slow',
  `UPDATE endpoints SET slow_p90_ms = $p90_ms::int WHERE id = $id AND slow_p90_ms IS DISTINCT FROM $p90_ms::int`,
  'prepared',
);

export async function writeEndpointSlow(db: Queryable, id: string, p90Ms: number | null): Promise<void> {
  await setEndpointSlow.run(db, { id, p90_ms: p90Ms });
}
