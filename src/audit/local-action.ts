import { userInfo } from 'node:os';
import type { Logger } from '../logger.js';
import type { Queryable } from '../store/db.js';
import { writeAuditRow } from './write.js';

/** Who runs a command on this machine, for the audit: `cli:<os user>` (no token was presented). */
function localActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli:unknown';
  }
}

/**
 * Records a change made by a CLI command straight on the store, not through the admin API (today:
 * `tekil reconcile --apply` with no tekil running). Same table and shape as the API's rows, with the
 * command as the route and `CLI` as the method. A failure to write is logged, not thrown: the change
 * was made.
 */
export async function recordLocalAction(
  db: Queryable,
  logger: Pick<Logger, 'error'>,
  action: { command: string; target: Record<string, unknown>; error?: { code: string } | undefined },
): Promise<void> {
  await writeAuditRow(db, logger, {
    actor: localActor(),
    role: null,
    address: null,
    method: 'CLI',
    route: action.command,
    target: action.target,
    status: action.error ? 500 : 200,
    errorCode: action.error?.code ?? null,
    tenantId: null,
  });
}
