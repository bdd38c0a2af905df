import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { Job } from '../src/inbox/jobs.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'dashboard-jobs-admin';

/** Dead deliveries `prefix00001…`, in the review queue. */
async function seedDead(t: TestDb, prefix: string, n: number, type = 'invoice.paid'): Promise<void> {
  await t.db.query(
    `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body)
     SELECT $1, $2 || lpad(i::text, 5, '0'), $2 || i, $4, '\\x7b7d' FROM generate_series(1, $3::int) AS i`,
    [SOURCE, prefix, n, type],
  );
  await t.db.query(`UPDATE inbox_deliveries SET status = 'dead', attempts = 3 WHERE event_id LIKE $1 || '%'`, [prefix]);
  await t.db.query(`UPDATE inbox_queue SET dead = true WHERE event_id LIKE $1 || '%'`, [prefix]);
}

describe('bulk jobs: replay or discard by filter in the background', () => {
  let t: TestDb;
  let app: FastifyInstance;
  const api = async <T>(method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: T }> => {
    const res = await app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN}` }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() as T };
  };
  const statusCounts = async (prefix: string) => {
    const { rows } = await t.db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM inbox_deliveries WHERE event_id LIKE $1 || '%' GROUP BY 1`,
      [prefix],
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  const finished = async (id: string) => {
    let job: Job | undefined;
    await waitUntil(async () => {
      job = (await api<Job>('GET', `/api/v1/jobs/${id}`)).body;
      return job.status !== 'running';
    });
    return job!;
  };

  beforeAll(async () => {
    t = await createTestDb();
    app = await buildApp({ ctx: testContext(t.db, workerTestConfig()), roles: new Set(['api']), adminToken: ADMIN });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('a dry run counts; the job replays exactly the matching dead deliveries and reports its progress', async () => {
    await seedDead(t, 'evt_jr', 130);
    await seedDead(t, 'evt_jo', 5, 'invoice.expired');
    const filter = { status: 'dead', type: 'invoice.paid' };
    expect((await api<{ matching: number }>('POST', '/api/v1/jobs/dry-run', { filter })).body).toEqual({ matching: 130 });
    expect(await statusCounts('evt_jr')).toEqual({ dead: 130 }); // the dry run changed nothing

    const started = await api<Job>('POST', '/api/v1/jobs', { kind: 'inbox.replay', filter });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', total: 130 });
    const job = await finished(started.body.id);
    expect(job).toMatchObject({ status: 'done', total: 130, processed: 130, changed: 130, skipped: 0, created_by: 'admin' });
    expect(await statusCounts('evt_jr')).toEqual({ pending: 130 });
    expect(await statusCounts('evt_jo')).toEqual({ dead: 5 });
    const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_queue WHERE dead AND event_id LIKE 'evt_jr%'`);
    expect(rows[0]!.n).toBe(0);
  });

  it('a cancelled job stops at a batch boundary; what it did stays done and matches its count', async () => {
    await seedDead(t, 'evt_jc', 1500);
    const started = await api<Job>('POST', '/api/v1/jobs', { kind: 'inbox.discard', filter: { status: 'dead', resource_id: undefined, source: SOURCE } });
    const cancel = await api<Job>('POST', `/api/v1/jobs/${started.body.id}/cancel`);
    expect(cancel.status).toBe(200);
    const job = await finished(started.body.id);
    expect(job.status, JSON.stringify(job)).toBe('cancelled');
    expect(job.processed).toBeLessThan(job.total);
    expect(job.processed % 100).toBe(0);
    const counts = await statusCounts('evt_jc');
    expect(counts.discarded ?? 0).toBe(job.changed);
    expect((counts.discarded ?? 0) + (counts.dead ?? 0)).toBe(1500);
    expect((await api<{ items: Job[] }>('GET', '/api/v1/jobs')).body.items[0]?.id).toBe(started.body.id);
  });

  /** Four discarded deliveries of their own type, the second one's body trimmed as retention trims it. */
  const seedDiscardedOneTrimmed = async (prefix: string, type: string) => {
    await seedDead(t, prefix, 4, type);
    for (let i = 1; i <= 4; i++) expect((await api('POST', `/api/v1/inbox/${SOURCE}/${prefix}0000${i}/discard`)).status).toBe(200);
    await t.db.query(`UPDATE inbox_deliveries SET body = ''::bytea, headers = '{}'::jsonb, trimmed_at = now() WHERE event_id = $1`, [`${prefix}00002`]);
  };

  it("the panel's bulk replay and the CLI's pass over a delivery whose body was trimmed, and replay the rest", async () => {
    await seedDiscardedOneTrimmed('evt_jt', 'invoice.trimmed');
    const started = await api<Job>('POST', '/api/v1/jobs', { kind: 'inbox.replay', filter: { status: 'discarded', type: 'invoice.trimmed' } });
    expect(started.status).toBe(202);
    const job = await finished(started.body.id);
    expect(job, JSON.stringify(job)).toMatchObject({ status: 'done', error: null, total: 4, processed: 4, changed: 3, skipped: 1 });
    expect(await statusCounts('evt_jt')).toEqual({ pending: 3, discarded: 1 });

    // What `tekil inbox replay-bulk` calls: the same path, the same answer.
    await seedDiscardedOneTrimmed('evt_jk', 'invoice.kept');
    const bulk = await api<{ replayed: number }>('POST', '/api/v1/inbox/replay', { status: 'discarded', type: 'invoice.kept' });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toMatchObject({ replayed: 3 });
    expect(await statusCounts('evt_jk')).toEqual({ pending: 3, discarded: 1 });
  });
});
