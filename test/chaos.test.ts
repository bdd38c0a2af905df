import { describe, expect, it } from 'vitest';
import { runChaos } from '../bench/chaos/run.js';
import { onPostgres, postgresUrl } from './helpers/db.js';
import { privatePostgresUnavailable } from './helpers/private-postgres.js';

// `npm run chaos` in small: its own private Postgres cluster, so it does not depend on the project's
// store and runs once (in the postgres project when the suite has one, else in the pglite one).
describe.skipIf(!onPostgres && postgresUrl !== undefined)('chaos, short: SIGKILLs of every role and a Postgres crash under load', () => {
  it('loses nothing and does nothing twice', async () => {
    const unavailable = privatePostgresUnavailable();
    if (unavailable) throw new Error(`the chaos test must run in CI, but no private cluster can be made here: ${unavailable}`);
    const log: string[] = [];
    const report = await runChaos({
      events: 1_500,
      killEveryMs: 2_000,
      maxKills: 3, // one per role group: the kill loop takes the groups in turn
      pgRestarts: 1,
      seed: 11,
      processes: 1,
      concurrency: 32,
      settleTimeoutMs: 120_000,
      log: (line) => log.push(line),
    });
    expect(report.violations, `${log.join('\n')}\n${report.summary}`).toEqual([]);
    expect(report.summary).toMatch(/SIGKILLs 3 \(receiver 1, worker 1, dispatcher 1\); postgres restarts \(stop -m immediate\) 1/);
  }, 300_000);
});
