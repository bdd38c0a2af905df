import { headerValue } from '../../src/http/header-value.js';
import type { Queryable } from '../../src/store/db.js';
import { eventKey, type LoadResult } from './load.js';
import { FORWARDED_SOURCE, HANDLED_SOURCE } from './plan.js';
import type { RecordingSink } from './sinks.js';

export interface CheckResult {
  name: string;
  /** What was counted, for the summary. */
  figures: string;
  violations: string[];
}

const sample = (items: readonly string[], n = 5) =>
  items
    .slice(0, n)
    .map((s) => JSON.stringify(s))
    .join(', ') + (items.length > n ? `, … (${items.length})` : '');

async function column<R>(db: Queryable, sql: string): Promise<R[]> {
  return (await db.query<R>(sql)).rows;
}

/** The five promises of the chaos run, each checked against the database and the sinks. */
export async function checkChaos(db: Queryable, load: LoadResult, sinks: { outbox: RecordingSink; forward: RecordingSink }): Promise<CheckResult[]> {
  const results: CheckResult[] = [];

  const rows = await column<{ source: string; event_id: string; status: string; last_error: string | null }>(
    db,
    'SELECT source, event_id, status, last_error FROM inbox_deliveries',
  );
  const stored = new Set(rows.map((r) => eventKey(r.source, r.event_id)));
  const missing = [...load.acked].filter((k) => !stored.has(k)).map((k) => k.replace('\u0000', '/'));
  const refused = [...load.answers].filter(([status]) => status !== 'network' && Number(status) < 500 && Number(status) >= 300);
  results.push({
    name: 'every id that got a 2xx has its row',
    figures: `${load.acked.size} ids acknowledged, ${rows.length} rows`,
    violations: [
      ...(missing.length ? [`acknowledged but not stored: ${sample(missing)}`] : []),
      ...refused.map(([status, n]) => `${n} requests refused with ${status} (none expected)`),
    ],
  });

  const byStatus = new Map<string, number>();
  for (const r of rows) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
  const open = rows.filter((r) => !['done', 'stale', 'dead'].includes(r.status)).map((r) => `${r.event_id} (${r.status})`);
  const noReason = rows.filter((r) => (r.status === 'dead' || r.status === 'stale') && !r.last_error).map((r) => r.event_id);
  const deadReasons = [...new Set(rows.filter((r) => r.status === 'dead').map((r) => r.last_error ?? ''))];
  results.push({
    name: 'every delivery ends done, stale or dead with a reason',
    figures: [...byStatus].map(([s, n]) => `${s} ${n}`).join(', ') + (deadReasons.length ? `; dead because: ${sample(deadReasons, 3)}` : ''),
    violations: [...(open.length ? [`not settled: ${sample(open)}`] : []), ...(noReason.length ? [`dead or stale without a reason: ${sample(noReason)}`] : [])],
  });

  const twice = await column<{ event_id: string; n: number }>(
    db,
    'SELECT event_id, count(*)::int AS n FROM example_ledger GROUP BY event_id HAVING count(*) > 1',
  );
  const doneWithoutEffect = await column<{ event_id: string }>(
    db,
    `SELECT d.event_id FROM inbox_deliveries d WHERE d.source = '${HANDLED_SOURCE}' AND d.status = 'done'
       AND NOT EXISTS (SELECT 1 FROM example_ledger l WHERE l.event_id = d.event_id)`,
  );
  const effectWithoutDone = await column<{ event_id: string }>(
    db,
    `SELECT l.event_id FROM example_ledger l WHERE NOT EXISTS
       (SELECT 1 FROM inbox_deliveries d WHERE d.source = '${HANDLED_SOURCE}' AND d.event_id = l.event_id AND d.status = 'done')`,
  );
  const credits = await column<{ id: string; paid_effects: number }>(db, 'SELECT id, paid_effects FROM example_invoices WHERE paid_effects <> 0');
  const paidDone = await column<{ n: number }>(
    db,
    `SELECT count(*)::int AS n FROM inbox_deliveries WHERE source = '${HANDLED_SOURCE}' AND event_type = 'invoice.paid' AND status = 'done'`,
  );
  const overCredited = credits.filter((c) => c.paid_effects !== 1).map((c) => `${c.id} credited ${c.paid_effects}×`);
  results.push({
    name: "the example app's ledger shows exactly one effect per invoice",
    figures: `${credits.length} invoices credited once each for ${paidDone[0]!.n} done payments; ledger rows twice for one event: ${twice.length}`,
    violations: [
      ...(twice.length ? [`events with more than one effect: ${sample(twice.map((t) => `${t.event_id} ×${t.n}`))}`] : []),
      ...(overCredited.length ? [`invoices credited more than once: ${sample(overCredited)}`] : []),
      ...(credits.length !== paidDone[0]!.n ? [`${paidDone[0]!.n} payments done but ${credits.length} invoices credited`] : []),
      ...(doneWithoutEffect.length ? [`done without their effect: ${sample(doneWithoutEffect.map((r) => r.event_id))}`] : []),
      ...(effectWithoutDone.length ? [`an effect without a done delivery: ${sample(effectWithoutDone.map((r) => r.event_id))}`] : []),
    ],
  });

  const messages = await column<{ id: string; statuses: string }>(
    db,
    `SELECT m.id, string_agg(d.status, ',') AS statuses FROM outbox_messages m JOIN outbox_deliveries d ON d.tenant_id = m.tenant_id AND d.message_id = m.id GROUP BY m.id`,
  );
  const unsent = messages.filter((m) => !sinks.outbox.seen.has(m.id)).map((m) => `${m.id} (${m.statuses})`);
  const mixedIds = [...sinks.outbox.seen].filter(([id, ids]) => ids.size !== 1 || !ids.has(id)).map(([id, ids]) => `${id}: ${[...ids].join(' | ')}`);
  const unsettled = messages.filter((m) => m.statuses.split(',').some((s) => s !== 'succeeded')).map((m) => `${m.id} (${m.statuses})`);
  results.push({
    name: 'every outbox message reached its sink at least once, with one webhook-id per delivery',
    figures: `${messages.length} messages (one per credited invoice: ${messages.length === credits.length ? 'yes' : 'NO'}), ${sinks.outbox.requests} requests at the sink for ${sinks.outbox.seen.size} ids`,
    violations: [
      ...(unsent.length ? [`never reached the sink: ${sample(unsent)}`] : []),
      ...(mixedIds.length ? [`a delivery seen under other webhook-ids: ${sample(mixedIds)}`] : []),
      ...(unsettled.length ? [`not succeeded: ${sample(unsettled)}`] : []),
      ...(messages.length !== credits.length ? [`${messages.length} messages for ${credits.length} credited invoices`] : []),
    ],
  });

  const forwardedDone = rows.filter((r) => r.source === FORWARDED_SOURCE && r.status === 'done').map((r) => r.event_id);
  const notForwarded = forwardedDone.filter((id) => !sinks.forward.seen.has(id));
  const wrongKeys = [...sinks.forward.seen]
    .filter(([id, keys]) => keys.size !== 1 || !keys.has(headerValue(`${FORWARDED_SOURCE}:${id}`)))
    .map(([id, keys]) => `${id}: ${[...keys].join(' | ')}`);
  const repeated = sinks.forward.requests - sinks.forward.seen.size;
  results.push({
    name: 'forward calls repeat only with the same Idempotency-Key',
    figures: `${forwardedDone.length} forwarded deliveries done, ${sinks.forward.requests} forward calls (${repeated} repeats)`,
    violations: [
      ...(notForwarded.length ? [`done but never forwarded: ${sample(notForwarded)}`] : []),
      ...(wrongKeys.length ? [`calls of one event with other keys: ${sample(wrongKeys)}`] : []),
    ],
  });
  return results;
}
