import type { Queryable } from '../store/db.js';
import { listIncidents, type IncidentRow } from '../store/sql/alerts/incidents.js';

/** An incident as the API answers it. */
export interface IncidentView extends Omit<IncidentRow, 'opened_at' | 'closed_at'> {
  state: 'open' | 'closed';
  opened_at: string;
  closed_at: string | null;
  /** The details' summary line, taken out of `details`. */
  summary: string;
}

export function incidentView(row: IncidentRow): IncidentView {
  const { summary, ...details } = row.details as { summary?: unknown } & Record<string, unknown>;
  return {
    id: row.id,
    rule: row.rule,
    subject: row.subject,
    state: row.closed_at ? 'closed' : 'open',
    opened_at: row.opened_at.toISOString(),
    closed_at: row.closed_at ? row.closed_at.toISOString() : null,
    last_value: row.last_value,
    summary: typeof summary === 'string' ? summary : '',
    details,
  };
}

/** A page of incidents, newest first: open ones, closed ones, or both; `before` pages by id. */
export async function listIncidentPage(
  db: Pick<Queryable, 'query'>,
  filter: { state: 'open' | 'closed' | null; before: string | null; limit: number },
): Promise<IncidentView[]> {
  const open = filter.state === null ? null : filter.state === 'open';
  return (await listIncidents.run(db, { open, beforeId: filter.before, limit: filter.limit })).rows.map(incidentView);
}
