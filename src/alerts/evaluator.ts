import { Counter } from 'prom-client';
import type { AlertsConfig } from '../config/alerts.js';
import type { Logger } from '../logger.js';
import { publish } from '../outbox/publish.js';
import type { Context, Service } from '../service.js';
import type { Db, Queryable } from '../store/db.js';
import { endpointTenant } from '../store/sql/alerts/probes.js';
import { closeIncident, openIncident, openIncidents, touchIncident, type IncidentRow } from '../store/sql/alerts/incidents.js';
import { tryAdvisoryLock } from '../store/sql/advisory-lock.js';
import { toClientError } from '../errors.js';
import { chatBody } from './format.js';
import { storeOutages } from './store-outages.js';
import { incidentView } from './list.js';
import { endpointsOf, observe, tenantOfSubject, type Observation } from './rules.js';

/** Held by each round's transaction: one process evaluates at a time, the others skip the round. */
const ALERTS_LOCK = 7_340_003;

/** What one round did. */
export interface RoundResult {
  opened: IncidentRow[];
  closed: IncidentRow[];
  /** True when another process held the lock and this one skipped the round. */
  skipped: boolean;
}

/**
 * Publishes one incident change in the transaction that made it: `incident.opened` or
 * `incident.closed` (tekil's envelope), one `alert.<format>` per configured chat format, and for an
 * endpoint, `endpoint.failing` or `endpoint.recovered`. The idempotency keys name the incident and the
 * change, so the same change is never published twice.
 */
async function announce(tx: Queryable, config: AlertsConfig, row: IncidentRow): Promise<void> {
  const incident = incidentView(row);
  const change = incident.state === 'open' ? 'opened' : 'closed';
  const key = `tekil-incident:${row.id}:${change}`;
  await publish(tx, { type: `incident.${change}`, resourceId: `incident_${row.id}`, data: incident, idempotencyKey: key });
  for (const format of config.formats) {
    await publish(tx, {
      type: `alert.${format}`,
      resourceId: `incident_${row.id}`,
      body: () => chatBody(format, incident),
      idempotencyKey: `${key}:${format}`,
    });
  }
  // A merchant's incident (all its failing endpoints): the merchant hears of each endpoint on its own.
  if (row.rule === 'endpoint_failing' && tenantOfSubject(row.subject) !== undefined) {
    await tellMerchant(tx, row, incident.state === 'open' ? [] : endpointsOf(row.details), incident.state === 'open' ? endpointsOf(row.details) : []);
    return;
  }
  // To the tenant the endpoint belongs to (its own endpoints subscribed to the type), not the default
  // tenant's: an endpoint deleted meanwhile, or whose tenant is being deleted, has no one left to tell.
  const tenantId = row.rule === 'endpoint_failing' ? (await endpointTenant.run(tx, { endpointId: row.subject })).rows[0]?.tenant_id : undefined;
  if (tenantId !== undefined) {
    const type = incident.state === 'open' ? 'endpoint.failing' : 'endpoint.recovered';
    await publish(tx, {
      tenantId,
      type,
      resourceId: row.subject,
      data: { endpoint_id: row.subject, incident_id: row.id, ...incident.details },
      idempotencyKey: `${key}:endpoint`,
    });
  }
}

/**
 * Tells a merchant of each of its endpoints that joined (`endpoint.failing`) or left (`endpoint.recovered`)
 * its tenant's incident, once each (the key names the incident, the endpoint and the change). An
 * endpoint deleted meanwhile, or whose tenant is being deleted, has no one left to tell.
 */
async function tellMerchant(tx: Queryable, row: IncidentRow, before: Array<Record<string, unknown>>, after: Array<Record<string, unknown>>): Promise<void> {
  const was = new Set(before.map((e) => e.endpoint_id as string));
  const is = new Set(after.map((e) => e.endpoint_id as string));
  const changes = [
    ...after.filter((e) => !was.has(e.endpoint_id as string)).map((e) => ['failing', e] as const),
    ...before.filter((e) => !is.has(e.endpoint_id as string)).map((e) => ['recovered', e] as const),
  ];
  for (const [change, endpoint] of changes) {
    const endpointId = endpoint.endpoint_id as string;
    const tenantId = (await endpointTenant.run(tx, { endpointId })).rows[0]?.tenant_id;
    if (tenantId === undefined) continue;
    await publish(tx, {
      tenantId,
      type: `endpoint.${change}`,
      resourceId: endpointId,
      data: { ...endpoint, endpoint_id: endpointId, incident_id: row.id, state: change === 'failing' ? 'open' : 'closed' },
      idempotencyKey: `tekil-incident:${row.id}:endpoint:${endpointId}:${change}`,
    });
  }
}

const details = (o: Observation): string => JSON.stringify({ ...o.details, summary: o.summary });
const sameEndpoints = (a: Record<string, unknown>, b: Record<string, unknown>): boolean =>
  endpointsOf(a)
    .map((e) => e.endpoint_id)
    .join() ===
  endpointsOf(b)
    .map((e) => e.endpoint_id)
    .join();

/**
 * One round: what the rules see now against the open incidents. A new problem opens an incident and
 * announces it; a problem still there only updates its incident's value; an open incident whose
 * problem is gone is closed and announced. All in one transaction, under an advisory lock: a second
 * process skips the round, and the partial unique index on open incidents guards the rest. `now`: the
 * round's time, for a test to move it; null (what the running evaluator passes) is the database's clock.
 */
export async function evaluateOnce(db: Db, config: AlertsConfig, now: Date | null = null): Promise<RoundResult> {
  return db.transaction(async (tx) => {
    const result: RoundResult = { opened: [], closed: [], skipped: false };
    if (!(await tryAdvisoryLock.run(tx, { key: ALERTS_LOCK })).rows[0]!.locked) return { ...result, skipped: true };
    const openRows = (await openIncidents.run(tx)).rows;
    const results = await observe(tx, config.rules, openRows, now);
    const open = new Map(openRows.map((r) => [`${r.rule}\u0000${r.subject}`, r]));
    for (const { rule, firing, holding } of results) {
      const seen = new Set(firing.map((o) => o.subject));
      for (const o of firing) {
        const current = open.get(`${rule}\u0000${o.subject}`);
        if (current) {
          // A tenant's incident whose endpoints changed: the merchant hears of the ones that joined or left.
          const endpointsChanged = tenantOfSubject(o.subject) !== undefined && !sameEndpoints(current.details, o.details);
          if (current.last_value !== o.value || endpointsChanged) await touchIncident.run(tx, { id: current.id, value: o.value, details: details(o) });
          if (endpointsChanged) await tellMerchant(tx, current, endpointsOf(current.details), endpointsOf(o.details));
          continue;
        }
        const row = (await openIncident.run(tx, { rule, subject: o.subject, value: o.value, details: details(o), now })).rows[0];
        if (!row) continue;
        await announce(tx, config, row);
        result.opened.push(row);
      }
      for (const incident of open.values()) {
        if (incident.rule !== rule || seen.has(incident.subject) || holding.has(incident.subject)) continue;
        const row = (await closeIncident.run(tx, { id: incident.id, value: null, now })).rows[0];
        if (!row) continue;
        await announce(tx, config, row);
        result.closed.push(row);
      }
    }
    return result;
  });
}

/**
 * Rounds run, by outcome (`evaluated`, `skipped`: another process held the lock, `failed`): shows the
 * evaluator is alive, and lets a test wait for a round instead of for a guessed time.
 */
function roundsCounter(ctx: Context): Counter<'outcome'> {
  return (
    (ctx.metrics.getSingleMetric('tekil_alerts_rounds_total') as Counter<'outcome'> | undefined) ??
    new Counter({ name: 'tekil_alerts_rounds_total', help: 'Alert evaluation rounds, by outcome', labelNames: ['outcome'], registers: [ctx.metrics] })
  );
}

/**
 * The evaluator, in the worker role (a role every deployment runs, like the retention sweeper): a round
 * every `alerts.interval`. A round that fails (the store unreachable) is logged and tried again at the
 * next interval: while the store is down, the evaluator cannot record an incident either.
 */
export function createAlertEvaluator(ctx: Context): Service {
  const config = ctx.config.alerts;
  const log: Logger = ctx.logger.child({ service: 'alerts' });
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let stopped = false;

  const rounds = roundsCounter(ctx);
  async function round(): Promise<void> {
    try {
      const { opened, closed, skipped } = await evaluateOnce(ctx.db, config);
      rounds.inc({ outcome: skipped ? 'skipped' : 'evaluated' });
      for (const r of opened) log.warn({ incident: r.id, rule: r.rule, subject: r.subject, value: r.last_value }, 'incident opened');
      for (const r of closed) log.info({ incident: r.id, rule: r.rule, subject: r.subject }, 'incident closed');
    } catch (err) {
      rounds.inc({ outcome: 'failed' });
      if (toClientError(err).code === 'STORE_UNAVAILABLE') storeOutages(ctx.metrics).note();
      log.warn({ err }, 'alert evaluation failed; it runs again at the next interval');
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      current = round().finally(() => {
        current = undefined;
        schedule();
      });
    }, config.interval);
    timer.unref();
  }

  return {
    name: 'alerts',
    async start() {
      if (config.enabled) schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
