import type { Logger } from '../logger.js';
import type { Queryable } from '../store/db.js';
import { insertAuditEvent, type AuditEventInsert } from '../store/sql/audit/events.js';

/** One audit row to write: what the admin API's hook, the portal's links and the CLI's store actions record. */
export type AuditRow = Omit<AuditEventInsert, 'target'> & {
  /** The route's params, query and body summary; stored as jsonb. */
  target: Record<string, unknown>;
};

/**
 * Writes one audit row: the one place a row is made, whoever records it. A failure to write is logged
 * with the whole row, not thrown: the action it records was done (or refused) already, and its answer
 * must not change because the trail could not be written. Answers whether the row was written.
 */
export async function writeAuditRow(db: Queryable, log: Pick<Logger, 'error'>, row: AuditRow): Promise<boolean> {
  const stored: AuditEventInsert = { ...row, target: JSON.stringify(row.target) };
  try {
    await insertAuditEvent.run(db, stored);
    return true;
  } catch (err) {
    log.error({ err, audit: stored }, 'audit row not written: the store refused it; the row is in this log line');
    return false;
  }
}
