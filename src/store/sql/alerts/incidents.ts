import { defineStatement, type NoParams } from '../statement.js';

/** An incident as stored (migration 017). */
export interface IncidentRow {
  id: string;
  rule: string;
  subject: string;
  opened_at: Date;
  closed_at: Date | null;
  last_value: number | null;
  details: Record<string, unknown>;
}

const COLUMNS = 'id::text AS id, rule, subject, opened_at, closed_at, last_value, details';

/** The open incidents: what the evaluator compares each round's observations with. */
export const openIncidents = defineStatement<NoParams, IncidentRow>(
  'tekil_alerts_open_incidents',
  `SELECT ${COLUMNS} FROM incidents WHERE closed_at IS NULL ORDER BY id`,
);

/**
 * Opens an incident unless one is open for the same rule and subject: then no row comes back (the
 * partial unique index incidents_one_open decides, so two evaluators cannot both open it).
 */
export const openIncident = defineStatement<{ rule: string; subject: string; value: number; details: string; now: Date | null }, IncidentRow>(
  'tekil_alerts_open_incident',
  `INSERT INTO incidents (rule, subject, last_value, details, opened_at) VALUES ($rule, $subject, $value, $details::jsonb, coalesce($now::timestamptz, now()))
   ON CONFLICT (rule, subject) WHERE closed_at IS NULL DO NOTHING
   RETURNING ${COLUMNS}`,
);

/** Keeps an open incident's latest value (no message: a repeat is not news). */
export const touchIncident = defineStatement<{ id: string; value: number; details: string }, Record<string, never>>(
  'tekil_alerts_touch_incident',
  'UPDATE incidents SET last_value = $value, details = $details::jsonb WHERE id = $id::bigint AND closed_at IS NULL',
);

/** Closes an open incident; no row when it was closed already. `now`: the round's time, null for the database's clock. */
export const closeIncident = defineStatement<{ id: string; value: number | null; now: Date | null }, IncidentRow>(
  'tekil_alerts_close_incident',
  `UPDATE incidents SET closed_at = coalesce($now::timestamptz, now()), last_value = coalesce($value::double precision, last_value)
   WHERE id = $id::bigint AND closed_at IS NULL RETURNING ${COLUMNS}`,
);

/** A page of incidents, newest first; `open` filters to open (true) or closed (false) ones. */
export const listIncidents = defineStatement<{ open: boolean | null; beforeId: string | null; limit: number }, IncidentRow>(
  'tekil_alerts_list_incidents',
  `SELECT ${COLUMNS} FROM incidents
   WHERE ($open::boolean IS NULL OR (closed_at IS NULL) = $open::boolean)
     AND ($beforeId::bigint IS NULL OR id < $beforeId::bigint)
   ORDER BY id DESC LIMIT $limit`,
  'unprepared',
);
