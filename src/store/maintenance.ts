import type { Db } from './db.js';
import { autovacuumSetting } from './sql/autovacuum.js';

/** What /readyz, the start-up log and the panel say about the store's upkeep. */
export interface StoreMaintenance {
  /** `on` or `off` on Postgres; absent on the embedded store, which has none (tekil says so at start). */
  autovacuum?: 'on' | 'off';
  /** Set when something needs an operator's attention. */
  warning?: string;
}

export const AUTOVACUUM_OFF_WARNING =
  "the store runs with autovacuum off: tables are never vacuumed nor analyzed, dead rows pile up and the planner's statistics go stale; turn it on (autovacuum = on), or run VACUUM ANALYZE on a schedule (docs/operations.md)";

const CACHE_MS = 60_000;

/**
 * Reads the store's autovacuum setting, at most once a minute per process (readiness probes come often;
 * the setting changes only with a reload). Many CI images and some managed set-ups run Postgres with
 * autovacuum off; tekil's hot statements keep their plans without statistics, but the store still grows
 * dead rows that nothing removes.
 */
export function storeMaintenance(db: Db): () => Promise<StoreMaintenance> {
  let cached: { at: number; value: StoreMaintenance } | undefined;
  return async () => {
    if (db.kind !== 'postgres') return {};
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.value;
    const on = (await autovacuumSetting.run(db)).rows[0]?.autovacuum !== 'off';
    const value: StoreMaintenance = on ? { autovacuum: 'on' } : { autovacuum: 'off', warning: AUTOVACUUM_OFF_WARNING };
    cached = { at: Date.now(), value };
    return value;
  };
}
