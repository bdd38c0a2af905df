// The retention sweeper in a process of its own (as the worker role runs it), sweeping until SIGTERM;
// prints "sweeping" once started and, at the end, the rows it trimmed and deleted as one JSON line.
import { pino } from 'pino';
import { loadConfigFile } from '../../src/config/load.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { createRetentionSweeper } from '../../src/retention/sweeper.js';
import { resolveSettings } from '../../src/settings.js';
import { createPostgresDb } from '../../src/store/postgres.js';

const config = await loadConfigFile(process.env.BENCH_CONFIG!);
const db = createPostgresDb({ connectionString: process.env.DATABASE_URL!, max: 2 });
const ctx = { config, settings: resolveSettings(config, process.env), db, logger: pino({ level: 'warn' }), metrics: createMetricsRegistry(false) };
const sweeper = createRetentionSweeper(ctx);
let stopping = false;
const totals = { inboxTrimmed: 0, inboxDeleted: 0, outboxTrimmed: 0, outboxDeleted: 0, finishedAfterMs: null as number | null };
process.on('SIGTERM', () => {
  stopping = true;
  void sweeper.stop();
});
const started = Date.now();
process.stdout.write('sweeping\n');
while (!stopping) {
  const c = await sweeper.sweepOnce();
  totals.inboxTrimmed += c.inboxTrimmed;
  totals.inboxDeleted += c.inboxDeleted;
  totals.outboxTrimmed += c.outboxTrimmed;
  totals.outboxDeleted += c.outboxDeleted;
  if (!stopping) {
    // Nothing left: the sweep finished inside the window.
    totals.finishedAfterMs = Date.now() - started;
    break;
  }
}
process.stdout.write(`${JSON.stringify(totals)}\n`);
await db.close();
process.exit(0);
