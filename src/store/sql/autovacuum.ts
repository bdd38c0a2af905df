import { defineStatement, type NoParams } from './statement.js';

/** Whether the server runs autovacuum (which also keeps the planner's statistics). */
export const autovacuumSetting = defineStatement<NoParams, { autovacuum: string }>(
  'tekil_store_autovacuum',
  "SELECT current_setting('autovacuum') AS autovacuum",
);
