import type { AlertsConfig } from '../config/alerts.js';
import { DEFAULT_TENANT_ID } from '../outbox/publish.js';
import type { Queryable } from '../store/db.js';
import { forgetStoreOutages, recentStoreOutages } from '../store/sql/alerts/store-outages.js';
import { forgetSignatureFailures, signatureFailuresInWindow } from '../store/sql/alerts/signature-failures.js';
import {
  deadPerSource,
  endpointAttempts,
  endpointSucceededSince,
  inboxOldestDue,
  latestReconcileFindings,
  outboxOldestDue,
} from '../store/sql/alerts/probes.js';

export const ruleNames = [
  'endpoint_failing',
  'review_queue',
  'signature_failures',
  'reconcile_findings',
  'store_unreachable',
  'dispatcher_stalled',
  'worker_stalled',
] as const;
export type RuleName = (typeof ruleNames)[number];

/** One problem seen in this round: which rule, about what, how bad, and what an operator needs to know. */
export interface Observation {
  rule: RuleName;
  subject: string;
  value: number;
  summary: string;
  details: Record<string, unknown>;
}

/**
 * What one rule saw: the subjects in trouble now, and those between trouble and recovery (an endpoint
 * that failed once since its incident opened has not recovered). An open incident whose subject is in
 * neither is closed.
 */
export interface RuleResult {
  rule: RuleName;
  firing: Observation[];
  holding: Set<string>;
}

type Q = Pick<Queryable, 'query'>;
type Rules = AlertsConfig['rules'];

/** A merchant's endpoint_failing incident is its tenant's (`tenant:<id>`); the provider's own are an endpoint's. */
export function tenantOfSubject(subject: string): string | undefined {
  return subject.startsWith('tenant:') ? subject.slice('tenant:'.length) : undefined;
}

/** The endpoints a tenant's endpoint_failing incident lists (its details). */
export function endpointsOf(details: Record<string, unknown> | undefined): Array<Record<string, unknown>> {
  const list = details?.endpoints;
  return Array.isArray(list) ? list.filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && typeof e.endpoint_id === 'string') : [];
}

/** The two queues' stall rules share their shape: one age, one subject. */
function stalled(rule: 'dispatcher_stalled' | 'worker_stalled', ageS: number | null, afterMs: number, what: string): RuleResult {
  const age = ageS ?? 0;
  const firing: Observation[] =
    age * 1000 > afterMs
      ? [
          {
            rule,
            subject: rule === 'dispatcher_stalled' ? 'dispatcher' : 'worker',
            value: age,
            summary: `${what} has waited ${Math.round(age)} s (more than ${afterMs / 1000} s)`,
            details: { oldest_due_age_s: age, after_s: afterMs / 1000 },
          },
        ]
      : [];
  return { rule, firing, holding: new Set() };
}

/**
 * `openSince`: the rule's open incidents, subject → when each opened; `openDetails`: their details.
 * `now`: the round's time (null: the database's clock).
 */
const evaluators: Record<
  RuleName,
  (q: Q, rules: Rules, openSince: ReadonlyMap<string, Date>, openDetails: ReadonlyMap<string, Record<string, unknown>>, now: Date | null) => Promise<RuleResult>
> = {
  async endpoint_failing(q, rules, openSince, openDetails, now) {
    const { failures, window, success_below, min_attempts } = rules.endpoint_failing;
    const rows = (await endpointAttempts.run(q, { windowMs: window, now })).rows;
    const failing = rows
      .filter((e) => e.failing_in_a_row >= failures || (e.attempts >= min_attempts && (100 * e.succeeded) / e.attempts < success_below))
      .map((e) => {
        const rate = Math.round((1000 * e.succeeded) / e.attempts) / 10;
        return {
          tenant_id: e.tenant_id,
          summary: `endpoint ${e.id} (${e.url}): ${e.failing_in_a_row} attempts failed in a row; ${rate}% of ${e.attempts} succeeded in the last ${window / 60_000} min${e.enabled ? '' : '; it is disabled'}`,
          details: {
            endpoint_id: e.id,
            url: e.url,
            enabled: e.enabled,
            failing_in_a_row: e.failing_in_a_row,
            attempts: e.attempts,
            succeeded: e.succeeded,
            success_rate: rate,
          },
        };
      });
    // The provider's own endpoints (the default tenant's) are an incident each. A merchant's are one
    // incident of its tenant, listing them: one merchant's 1,000 failing endpoints are one problem to the
    // operators, not 1,000 (the merchant still hears of each endpoint: src/alerts/evaluator.ts).
    const firing: Observation[] = [];
    const byTenant = new Map<string, Array<(typeof failing)[number]>>();
    for (const f of failing) {
      if (f.tenant_id === DEFAULT_TENANT_ID) {
        firing.push({ rule: 'endpoint_failing', subject: f.details.endpoint_id, value: f.details.failing_in_a_row, summary: f.summary, details: f.details });
      } else {
        const list = byTenant.get(f.tenant_id) ?? [];
        list.push(f);
        byTenant.set(f.tenant_id, list);
      }
    }
    // Recovery is the next successful attempt, not a quiet window: an endpoint waiting hours on its
    // retry ladder makes no attempts at all, and has not recovered. A tenant's incident keeps each endpoint
    // it listed until that endpoint succeeds.
    const holding = new Set<string>();
    const recovered = async (endpointId: string, since: Date) => (await endpointSucceededSince.run(q, { endpointId, since })).rows[0]!.ok;
    const kept = new Map<string, Array<Record<string, unknown>>>();
    for (const [subject, since] of openSince) {
      const tenantId = tenantOfSubject(subject);
      if (tenantId === undefined) {
        if (!(await recovered(subject, since))) holding.add(subject);
        continue;
      }
      const firingNow = new Set((byTenant.get(tenantId) ?? []).map((f) => f.details.endpoint_id));
      const listed = endpointsOf(openDetails.get(subject));
      const stillOut: Array<Record<string, unknown>> = [];
      for (const e of listed) if (!firingNow.has(e.endpoint_id as string) && !(await recovered(e.endpoint_id as string, since))) stillOut.push(e);
      if (stillOut.length > 0) kept.set(tenantId, stillOut);
    }
    for (const tenantId of new Set([...byTenant.keys(), ...kept.keys()])) {
      const ofTenant = byTenant.get(tenantId) ?? [];
      const endpoints = [...ofTenant.map((f) => f.details), ...(kept.get(tenantId) ?? [])].sort((a, b) =>
        String(a.endpoint_id).localeCompare(String(b.endpoint_id)),
      );
      const shown = endpoints
        .slice(0, 3)
        .map((e) => e.endpoint_id)
        .join(', ');
      firing.push({
        rule: 'endpoint_failing',
        subject: `tenant:${tenantId}`,
        value: endpoints.length,
        summary: `tenant ${tenantId}: ${endpoints.length} endpoint${endpoints.length === 1 ? '' : 's'} failing (${shown}${endpoints.length > 3 ? ', …' : ''})${ofTenant.length === 1 ? `; ${ofTenant[0]!.summary}` : ''}`,
        details: { tenant_id: tenantId, endpoint_count: endpoints.length, endpoints },
      });
    }
    return { rule: 'endpoint_failing', firing, holding };
  },
  async review_queue(q, rules) {
    const { size } = rules.review_queue;
    const firing = (await deadPerSource.run(q)).rows
      .filter((r) => r.dead >= size)
      .map<Observation>((r) => ({
        rule: 'review_queue',
        subject: r.source,
        value: r.dead,
        summary: `source ${r.source}: ${r.dead} deliveries wait in the review queue`,
        details: { source: r.source, dead: r.dead, threshold: size },
      }));
    return { rule: 'review_queue', firing, holding: new Set() };
  },
  async signature_failures(q, rules, _openSince, _openDetails, now) {
    const { failures, window } = rules.signature_failures;
    await forgetSignatureFailures.run(q, { now });
    const firing = (await signatureFailuresInWindow.run(q, { windowMs: window, now })).rows
      .filter((r) => r.failures >= failures)
      .map<Observation>((r) => ({
        rule: 'signature_failures',
        subject: r.source,
        value: r.failures,
        summary: `source ${r.source}: ${r.failures} requests failed the signature check in the last ${window / 60_000} min (a rotated secret?)`,
        details: { source: r.source, failures: r.failures, threshold: failures },
      }));
    return { rule: 'signature_failures', firing, holding: new Set() };
  },
  async reconcile_findings(q) {
    const firing = (await latestReconcileFindings.run(q)).rows
      .filter((r) => r.findings > 0)
      .map<Observation>((r) => ({
        rule: 'reconcile_findings',
        subject: r.source,
        value: r.findings,
        summary: `source ${r.source}: reconcile run ${r.run_id} found ${r.findings} events the webhooks did not bring`,
        details: { source: r.source, run_id: r.run_id, findings: r.findings },
      }));
    return { rule: 'reconcile_findings', firing, holding: new Set() };
  },
  async store_unreachable(q, rules, _openSince, _openDetails, now) {
    // Seen only afterwards: the processes report an outage once the store answers again (src/alerts/store-outages.ts).
    const { quiet_for } = rules.store_unreachable;
    await forgetStoreOutages.run(q, { now });
    const r = (await recentStoreOutages.run(q, { quietMs: quiet_for, now })).rows[0]!;
    const firing: Observation[] =
      r.outages > 0
        ? [
            {
              rule: 'store_unreachable',
              subject: 'store',
              value: r.failures,
              summary: `the store was unreachable from ${r.first_failure_at!.toISOString()} to ${r.recovered_at!.toISOString()}: ${r.failures} failed store calls in ${r.processes!.length} process(es)`,
              details: {
                failures: r.failures,
                first_failure_at: r.first_failure_at!.toISOString(),
                recovered_at: r.recovered_at!.toISOString(),
                processes: r.processes,
                quiet_for_s: quiet_for / 1000,
              },
            },
          ]
        : [];
    return { rule: 'store_unreachable', firing, holding: new Set() };
  },
  async dispatcher_stalled(q, rules, _openSince, _openDetails, now) {
    const age = (await outboxOldestDue.run(q, { now })).rows[0]?.age_s ?? null;
    return stalled('dispatcher_stalled', age, rules.dispatcher_stalled.after, 'the oldest due outgoing delivery');
  },
  async worker_stalled(q, rules, _openSince, _openDetails, now) {
    const age = (await inboxOldestDue.run(q, { now })).rows[0]?.age_s ?? null;
    return stalled('worker_stalled', age, rules.worker_stalled.after, 'the oldest received delivery due for processing');
  },
};

/**
 * Runs every enabled rule. A turned-off rule is not looked at, and its open incidents stay as they are.
 * `now` is the round's time: null (a running evaluator) reads the database's clock.
 */
export async function observe(
  q: Q,
  rules: Rules,
  open: ReadonlyArray<{ rule: string; subject: string; opened_at: Date; details?: Record<string, unknown> }>,
  now: Date | null = null,
): Promise<RuleResult[]> {
  const results: RuleResult[] = [];
  for (const name of ruleNames) {
    const mine = open.filter((o) => o.rule === name);
    const openSince = new Map(mine.map((o) => [o.subject, o.opened_at]));
    const openDetails = new Map(mine.map((o) => [o.subject, o.details ?? {}]));
    if (rules[name].enabled) results.push(await evaluators[name](q, rules, openSince, openDetails, now));
  }
  return results;
}
