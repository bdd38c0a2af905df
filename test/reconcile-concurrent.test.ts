import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type TekilConfig } from '../src/config/index.js';
import { isTekilError } from '../src/errors.js';
import { runReconcile, type ReconcileReport } from '../src/reconcile/run.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startFakeStripe, type FakeApi, type StripeEventFixture } from './helpers/provider-apis.js';
import { waitUntil } from './helpers/wait.js';

const SOURCE = 'stripe';
const KEY = 'sk_test_concurrent';
const TOTAL = 250; // three pages of 100
const start = Math.floor(Date.parse('2026-11-28T00:00:00Z') / 1000);
const events: StripeEventFixture[] = Array.from({ length: TOTAL }, (_, i) => ({
  id: `evt_c${String(i).padStart(4, '0')}`,
  type: 'invoice.paid',
  created: start + i * 60,
  data: { object: { id: `in_c${i}`, object: 'invoice', status: 'paid' } },
}));

/** One reconcile run per source at a time: a second start while one runs is refused, so no finding is stored twice. */
describe('reconcile: concurrent runs of one source', () => {
  let t: TestDb;
  let stripe: FakeApi;
  let config: TekilConfig;
  const window = { start: new Date(start * 1000), end: null };
  const run = () => runReconcile({ db: t.db, config, logger: pino({ level: 'silent' }) }, { source: SOURCE, window, apply: false, trigger: 'cli' });
  const missing = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM reconcile_findings WHERE kind = 'missing'`)).rows[0]!.n;

  beforeAll(async () => {
    t = await createTestDb();
    stripe = await startFakeStripe({ key: KEY, events: () => events });
    // A pause between pages keeps a run going while the other one starts.
    config = parseConfig({
      sources: {
        [SOURCE]: {
          scheme: 'stripe',
          secrets: ['whsec_c'],
          tolerance: 0,
          reconcile: { provider: 'stripe', api_key: KEY, api_base: stripe.url, page_interval: '300ms' },
        },
      },
    });
  });
  afterAll(async () => {
    await stripe?.close();
    await t?.close();
  });

  it('two runs started together: one runs, the other is refused with RECONCILE_RUNNING; each missing event is found once', async () => {
    const [a, b] = await Promise.allSettled([run(), run()]);
    const fulfilled = [a, b].filter((r): r is PromiseFulfilledResult<ReconcileReport> => r.status === 'fulfilled');
    const rejected = [a, b].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(isTekilError(rejected[0]!.reason, 'RECONCILE_RUNNING')).toBe(true);
    expect((rejected[0]!.reason as Error).message).toMatch(new RegExp(`reconcile run ${fulfilled[0]!.value.run.id} of source "${SOURCE}" is in progress`));
    expect(fulfilled[0]!.value.counts.missing).toBe(TOTAL);
    expect(await missing()).toBe(TOTAL);
    const runs = await t.db.query<{ status: string }>('SELECT status FROM reconcile_runs');
    expect(runs.rows).toEqual([{ status: 'completed' }]);
  });

  it('a start while a run is on its pages is refused; after it completes, a new run starts', async () => {
    const pagesBefore = stripe.requests.length;
    const first = run();
    await waitUntil(() => stripe.requests.length > pagesBefore, 10_000, 'the first run to ask for a page');
    await expect(run()).rejects.toMatchObject({ code: 'RECONCILE_RUNNING', statusCode: 409 });
    await first;
    const again = await run();
    expect(again.run.status).toBe('completed');
    const runs = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM reconcile_runs');
    expect(runs.rows[0]!.n).toBe(3);
  });
});
