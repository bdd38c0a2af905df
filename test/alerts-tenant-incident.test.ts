import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateOnce } from '../src/alerts/evaluator.js';
import { parseConfig } from '../src/config/load.js';
import { createTenant } from '../src/tenants/tenants.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';

const alerts = parseConfig({ alerts: { enabled: true, formats: ['slack'], rules: { endpoint_failing: { failures: 3 } } } }).alerts;
const ENDPOINTS = 40;

/**
 * One merchant made 1,000 endpoints in 6.4 s, all failing: the operators got 1,000 endpoint_failing
 * incidents and 1,001 announcements (doubled with Slack). A merchant's failing endpoints are now one
 * incident of its tenant, with its endpoints in the details, announced to the operators once; the merchant
 * still hears of each of its endpoints failing and recovering (endpoint.failing, endpoint.recovered).
 */
describe("a merchant's failing endpoints are one operator incident; the merchant hears of each", () => {
  let t: TestDb;
  const ids: string[] = [];

  /** Attempts as the dispatcher records them: `n` failures (or one success) of an endpoint, now. */
  const attempts = async (endpointId: string, n: number, succeeded: boolean) => {
    await t.db.query(
      `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, status_code)
       SELECT 'm_many', 1, 'evt_x', $1, i, 'http://127.0.0.1:9/', clock_timestamp(), 5, $3, CASE WHEN $3 THEN 200 ELSE 503 END FROM generate_series(1, $2::int) i`,
      [endpointId, n, succeeded],
    );
  };
  const messages = async (type: string, tenantId: string) =>
    (
      await t.db.query<{ resource_id: string }>('SELECT resource_id FROM outbox_messages WHERE event_type = $1 AND tenant_id = $2 ORDER BY resource_id', [
        type,
        tenantId,
      ])
    ).rows;

  beforeAll(async () => {
    t = await createTestDb();
    const h = outboxHarness(t.db);
    await createTenant(t.db, { id: 'm_many', name: 'Many endpoints' });
    for (let i = 0; i < ENDPOINTS; i++) ids.push((await h.endpoints.create(t.db, { tenant_id: 'm_many', url: `http://127.0.0.1:9/${i}` })).endpoint.id);
    ids.sort();
    for (const id of ids) await attempts(id, 3, false);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('opens one incident for the tenant with its endpoints, announced once to the operators; each endpoint is announced to the merchant', async () => {
    const round = await evaluateOnce(t.db, alerts);
    const opened = round.opened.filter((r) => r.rule === 'endpoint_failing');
    expect(opened.map((r) => r.subject)).toEqual(['tenant:m_many']);
    expect(opened[0]!.last_value).toBe(ENDPOINTS);
    const listed = (opened[0]!.details.endpoints as Array<{ endpoint_id: string }>).map((e) => e.endpoint_id);
    expect(listed).toEqual(ids);
    // To the operators (the default tenant): one incident.opened and one Slack body.
    expect(await messages('incident.opened', 'default')).toHaveLength(1);
    expect(await messages('alert.slack', 'default')).toHaveLength(1);
    // To the merchant: each of its endpoints.
    expect((await messages('endpoint.failing', 'm_many')).map((m) => m.resource_id)).toEqual(ids);
    // A second round changes nothing and announces nothing.
    const again = await evaluateOnce(t.db, alerts);
    expect(again.opened).toEqual([]);
    expect(await messages('endpoint.failing', 'm_many')).toHaveLength(ENDPOINTS);
  });

  it('an endpoint that succeeds leaves the incident (endpoint.recovered to the merchant); the last one closes it, announced once', async () => {
    await attempts(ids[0]!, 1, true);
    const round = await evaluateOnce(t.db, alerts);
    expect(round.closed).toEqual([]);
    expect((await messages('endpoint.recovered', 'm_many')).map((m) => m.resource_id)).toEqual([ids[0]]);
    const { rows } = await t.db.query<{ last_value: number; n: number }>(
      `SELECT last_value, jsonb_array_length(details->'endpoints') AS n FROM incidents WHERE subject = 'tenant:m_many' AND closed_at IS NULL`,
    );
    expect(rows).toEqual([{ last_value: ENDPOINTS - 1, n: ENDPOINTS - 1 }]);
    for (const id of ids.slice(1)) await attempts(id, 1, true);
    const last = await evaluateOnce(t.db, alerts);
    expect(last.closed.map((r) => r.subject)).toEqual(['tenant:m_many']);
    expect(await messages('endpoint.recovered', 'm_many')).toHaveLength(ENDPOINTS);
    expect(await messages('incident.closed', 'default')).toHaveLength(1);
    expect(await messages('incident.opened', 'default')).toHaveLength(1);
  });
});
