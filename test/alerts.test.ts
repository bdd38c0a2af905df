import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { evaluateOnce } from '../src/alerts/evaluator.js';
import type { AlertsConfig } from '../src/config/alerts.js';
import { parseConfig } from '../src/config/load.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { publish } from '../src/outbox/publish.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { createSignatureFailureFlusher } from '../src/receiver/signature-failures.js';
import { paymosBody, receiverApp, receiverConfig, signPaymos } from './helpers/receiver.js';
import { insertInvoiceDelivery, SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

const alerts: AlertsConfig = parseConfig({
  alerts: {
    enabled: true,
    formats: ['slack'],
    rules: { endpoint_failing: { failures: 3 }, signature_failures: { failures: 3 }, dispatcher_stalled: { after: '10s' }, worker_stalled: { after: '10s' } },
  },
}).alerts;

describe('alerts: one incident per problem, announced once, closed on recovery', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let dispatcher: Dispatcher | undefined;
  let slack: Sink;
  let failing: Sink;
  let failingNow = true;
  let failingEndpoint: string;

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db);
    slack = await startSink();
    failing = await startSink(() => ({ status: failingNow ? 500 : 200 }));
    // A Slack incoming webhook as an endpoint: subscribed only to the Slack-shaped copy of each incident.
    await h.endpoints.create(t.db, { url: slack.url, event_types: ['alert.slack'] });
    // Retries every 200 ms (the harness scales the ladder by 1/1000).
    failingEndpoint = (await h.endpoints.create(t.db, { url: failing.url, event_types: ['invoice.*'], ladder: Array(40).fill('200s') })).endpoint.id;
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all([slack?.close(), failing?.close()]);
    await t?.close();
  });

  /** Runs several rounds, as the evaluator would while the problem lasts. */
  async function rounds(n = 3): Promise<{ opened: number; closed: number }> {
    let opened = 0;
    let closed = 0;
    for (let i = 0; i < n; i++) {
      const r = await evaluateOnce(t.db, alerts);
      opened += r.opened.length;
      closed += r.closed.length;
    }
    return { opened, closed };
  }

  async function incidents(rule: string) {
    return (
      await t.db.query<{ id: string; subject: string; closed_at: Date | null }>(
        'SELECT id::text AS id, subject, closed_at FROM incidents WHERE rule = $1 ORDER BY id',
        [rule],
      )
    ).rows;
  }

  /** The messages published about one incident, by type. */
  async function messages(incidentId: string): Promise<string[]> {
    const { rows } = await t.db.query<{ event_type: string }>('SELECT event_type FROM outbox_messages WHERE resource_id = $1 ORDER BY created_at, event_type', [
      `incident_${incidentId}`,
    ]);
    return rows.map((r) => r.event_type).sort();
  }

  it('worker_stalled: a due received delivery waiting too long opens one incident, and closes when it is processed', async () => {
    await insertInvoiceDelivery(t.db, { eventId: 'evt_stalled_1', invoiceId: 'inv_stalled_1', status: 'paid', orderId: 'ord_1' });
    await t.db.query(`UPDATE inbox_queue SET next_attempt_at = now() - interval '1 hour' WHERE event_id = 'evt_stalled_1'`);
    expect(await rounds()).toEqual({ opened: 1, closed: 0 });
    const [incident] = await incidents('worker_stalled');
    expect(incident).toMatchObject({ subject: 'worker', closed_at: null });
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'incident.opened']);
    // Processed: the delivery leaves the queue.
    await t.db.query(`UPDATE inbox_deliveries SET status = 'done' WHERE event_id = 'evt_stalled_1'`);
    await t.db.query(`DELETE FROM inbox_queue WHERE event_id = 'evt_stalled_1'`);
    expect(await rounds()).toEqual({ opened: 0, closed: 1 });
    expect((await incidents('worker_stalled'))[0]!.closed_at).not.toBeNull();
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'alert.slack', 'incident.closed', 'incident.opened']);
  });

  it('review_queue: dead deliveries open one incident per source, closed when the queue is emptied', async () => {
    await insertInvoiceDelivery(t.db, { eventId: 'evt_dead_1', invoiceId: 'inv_dead_1', status: 'paid', orderId: 'ord_2' });
    await t.db.query(`UPDATE inbox_queue SET dead = true WHERE event_id = 'evt_dead_1'`);
    // Two evaluators at once (two processes on Postgres): one opens it, the other skips or finds it open.
    const both = await Promise.all([evaluateOnce(t.db, alerts), evaluateOnce(t.db, alerts)]);
    expect(both.reduce((n, r) => n + r.opened.length, 0)).toBe(1);
    expect(await rounds()).toEqual({ opened: 0, closed: 0 });
    const [incident] = await incidents('review_queue');
    expect(incident).toMatchObject({ subject: SOURCE, closed_at: null });
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'incident.opened']);
    await t.db.query(`DELETE FROM inbox_queue WHERE event_id = 'evt_dead_1'`);
    expect(await rounds()).toEqual({ opened: 0, closed: 1 });
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'alert.slack', 'incident.closed', 'incident.opened']);
  });

  it('the store holds one open incident per rule and subject, whoever writes it', async () => {
    const insert = "INSERT INTO incidents (rule, subject) VALUES ('review_queue', 'some-source')";
    await t.db.query(insert);
    await expect(t.db.query(insert)).rejects.toThrow(/incidents_one_open/);
    await t.db.query("UPDATE incidents SET closed_at = now() WHERE subject = 'some-source'");
    await t.db.query(insert); // a closed one does not count
    await t.db.query("DELETE FROM incidents WHERE subject = 'some-source'");
  });

  it('reconcile_findings: a completed run with findings opens one incident; a clean run closes it', async () => {
    const run = async (findings: number) => {
      const { rows } = await t.db.query<{ id: string }>(
        `INSERT INTO reconcile_runs (source, provider, window_start, window_end, apply, trigger, status, finished_at)
         VALUES ($1, 'generic', now() - interval '1 day', now(), false, 'manual', 'completed', now()) RETURNING id::text AS id`,
        [SOURCE],
      );
      for (let i = 0; i < findings; i++) {
        await t.db.query(`INSERT INTO reconcile_findings (run_id, source, kind, event_id, action) VALUES ($1::bigint, $2, 'missing', $3, 'listed')`, [
          rows[0]!.id,
          SOURCE,
          `evt_missed_${i}`,
        ]);
      }
    };
    await run(2);
    expect(await rounds()).toEqual({ opened: 1, closed: 0 });
    const [incident] = await incidents('reconcile_findings');
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'incident.opened']);
    await run(0);
    expect(await rounds()).toEqual({ opened: 0, closed: 1 });
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'alert.slack', 'incident.closed', 'incident.opened']);
  });

  it('dispatcher_stalled: a due outgoing delivery waiting too long opens one incident; sending it closes it', async () => {
    await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { invoice: 'inv_waiting' } }));
    failingNow = false;
    await t.db.query(`UPDATE outbox_queue SET next_attempt_at = now() - interval '1 hour'`);
    expect(await rounds()).toEqual({ opened: 1, closed: 0 });
    const [incident] = await incidents('dispatcher_stalled');
    expect(incident).toMatchObject({ subject: 'dispatcher' });
    // The dispatcher starts: it sends the waiting delivery and the alert messages.
    dispatcher = h.newDispatcher();
    await dispatcher.start();
    await failing.waitFor(1);
    await waitUntil(async () => Number((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_queue')).rows[0]!.n) === 0);
    expect(await rounds()).toEqual({ opened: 0, closed: 1 });
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'alert.slack', 'incident.closed', 'incident.opened']);
  });

  it('endpoint_failing: failures in a row open one incident (and endpoint.failing); the next success closes it; Slack gets {"text"}', async () => {
    failingNow = true;
    failing.requests.length = 0;
    await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { invoice: 'inv_fail' } }));
    const attempts = async (succeeded: boolean) =>
      (
        await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_attempts WHERE endpoint_id = $1 AND succeeded = $2', [
          failingEndpoint,
          succeeded,
        ])
      ).rows[0]!.n;
    const streak = () => attempts(false);
    await waitUntil(async () => (await streak()) >= 3, 20_000);
    expect(await rounds()).toEqual({ opened: 1, closed: 0 });
    const [incident] = await incidents('endpoint_failing');
    expect(incident).toMatchObject({ subject: failingEndpoint, closed_at: null });
    const { rows } = await t.db.query<{ event_type: string }>(`SELECT event_type FROM outbox_messages WHERE resource_id = $1`, [failingEndpoint]);
    expect(rows.map((r) => r.event_type)).toEqual(['endpoint.failing']);
    // Still failing: more rounds, no new incident and no new message.
    await waitUntil(async () => (await streak()) >= 5, 20_000);
    expect(await rounds()).toEqual({ opened: 0, closed: 0 });
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'incident.opened']);
    failingNow = false;
    // A fresh message as well: the first success resets the streak, whichever delivery it is.
    await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { invoice: 'inv_after_fix' } }));
    const okBefore = await attempts(true);
    await waitUntil(async () => (await attempts(true)) > okBefore, 20_000);
    expect(await rounds()).toEqual({ opened: 0, closed: 1 });
    expect(await messages(incident!.id)).toEqual(['alert.slack', 'alert.slack', 'incident.closed', 'incident.opened']);
    const recovered = await t.db.query<{ event_type: string }>(`SELECT event_type FROM outbox_messages WHERE resource_id = $1 ORDER BY event_type`, [
      failingEndpoint,
    ]);
    expect(recovered.rows.map((r) => r.event_type)).toEqual(['endpoint.failing', 'endpoint.recovered']);

    // The Slack endpoint received every incident's opening and closing in Slack's shape.
    await waitUntil(() => slack.requests.some((r) => String(r.body).includes(`#${incident!.id} closed`)), 20_000);
    const bodies = slack.requests.map((r) => JSON.parse(r.body.toString('utf8')) as Record<string, unknown>);
    for (const body of bodies) expect(Object.keys(body)).toEqual(['text']);
    expect(bodies.map((b) => b.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(new RegExp(`^tekil incident #${incident!.id} opened: endpoint_failing ${failingEndpoint}`))]),
    );
  });

  it('signature_failures: requests failing the signature check open one incident for their source, closed once they age out of the window', async () => {
    const { app, ctx } = await receiverApp(t.db, receiverConfig({ alerts: { enabled: true } }));
    const flusher = createSignatureFailureFlusher(ctx);
    try {
      const body = paymosBody('evt_rotated');
      const post = () => app.inject({ method: 'POST', url: '/in/shop', payload: body, headers: signPaymos(body, { secret: 'whsec_rotated_away' }) });
      for (let i = 0; i < 2; i++) expect((await post()).statusCode).toBe(401);
      await flusher.flush();
      expect(await rounds(1)).toEqual({ opened: 0, closed: 0 }); // 2: under the threshold
      expect((await post()).statusCode).toBe(401);
      await flusher.flush();
      expect(await rounds()).toEqual({ opened: 1, closed: 0 });
      const [incident] = await incidents('signature_failures');
      expect(incident).toMatchObject({ subject: 'shop', closed_at: null });
      expect(await messages(incident!.id)).toEqual(['alert.slack', 'incident.opened']);
      expect((await post()).statusCode).toBe(401); // still failing: no new message
      await flusher.flush();
      expect(await rounds()).toEqual({ opened: 0, closed: 0 });
      // An hour passes (the counts' minutes move back): the window holds no failures any more.
      await t.db.query(`UPDATE signature_failures SET minute = minute - interval '1 hour'`);
      expect(await rounds()).toEqual({ opened: 0, closed: 1 });
      expect(await messages(incident!.id)).toEqual(['alert.slack', 'alert.slack', 'incident.closed', 'incident.opened']);
    } finally {
      await flusher.stop();
      await app.close();
    }
  });

  it('GET /api/v1/incidents lists them, newest first, open or closed', async () => {
    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-alerts-api-')) } });
    const app = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken: 'alerts-admin-token' });
    try {
      const get = async (url: string) =>
        (await app.inject({ method: 'GET', url, headers: { authorization: 'Bearer alerts-admin-token' } })).json() as {
          incidents: Array<Record<string, unknown>>;
          next_before: string | null;
        };
      const closed = await get('/api/v1/incidents?state=closed');
      expect(closed.incidents.map((i) => i.rule)).toEqual([
        'signature_failures',
        'endpoint_failing',
        'dispatcher_stalled',
        'reconcile_findings',
        'review_queue',
        'worker_stalled',
      ]);
      expect(closed.incidents[1]).toMatchObject({ state: 'closed', subject: failingEndpoint, summary: expect.stringContaining('failed in a row') });
      expect((await get('/api/v1/incidents?state=open')).incidents).toEqual([]);
      const page = await get('/api/v1/incidents?limit=2');
      expect(page.next_before).toBe(page.incidents[1]!.id);
      expect((await get(`/api/v1/incidents?limit=2&before=${page.next_before}`)).incidents.map((i) => i.rule)).toEqual([
        'dispatcher_stalled',
        'reconcile_findings',
      ]);
    } finally {
      await app.close();
    }
  });
});
