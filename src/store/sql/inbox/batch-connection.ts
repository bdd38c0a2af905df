import { defineStatement, type NoParams, type Statement } from '../statement.js';

/**
 * Statements on a batch's own transaction outside its hot path: one handler's savepoint, and what it
 * takes to cancel a statement a timed-out handler left running.
 */

/** A savepoint's three statements. SQL takes no parameter for a savepoint's name, so it is in the text. */
export interface SavepointStatements {
  take: Statement<NoParams, never>;
  release: Statement<NoParams, never>;
  rollbackTo: Statement<NoParams, never>;
}

const byName = new Map<string, SavepointStatements>();

/**
 * The statements of the savepoint `name`, one fixed set per name. Names are the worker's own
 * constants (never user input), and are checked to be plain identifiers all the same.
 */
export function savepointStatements(name: string): SavepointStatements {
  let set = byName.get(name);
  if (!set) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid savepoint name: ${name}`);
    set = {
      take: defineStatement<NoParams, never>(`savepoint_${name}`, `SAVEPOINT ${name}`),
      release: defineStatement<NoParams, never>(`release_savepoint_${name}`, `RELEASE SAVEPOINT ${name}`),
      rollbackTo: defineStatement<NoParams, never>(`rollback_to_savepoint_${name}`, `ROLLBACK TO SAVEPOINT ${name}`),
    };
    byName.set(name, set);
  }
  return set;
}

/** The server process behind the batch's connection (also behind a pooler: it is the server's). */
export const backendPid = defineStatement<NoParams, { pid: number }>('tekil_backend_pid', 'SELECT pg_backend_pid() AS pid');
/** Sent on another connection; a backend idle by then ignores it. */
export const cancelBackend = defineStatement<{ pid: number }, { pg_cancel_backend: boolean }>('tekil_cancel_backend', 'SELECT pg_cancel_backend($pid)');
