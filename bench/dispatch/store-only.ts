// The store-only ceiling of dispatching: the dispatcher's own claim and completion statements, in its
// batch and group sizes, back to back without HTTP (every attempt recorded as a 200).
import { performance } from 'node:perf_hooks';
import type { Queryable } from '../../src/store/db.js';
import { claimDeliveries } from '../../src/store/sql/outbox/claim-deliveries.js';
import { writeCompletions } from '../../src/outbox/write-completions.js';
import type { OutboxCompletion } from '../../src/outbox/types.js';

export interface DispatchStoreOnly {
  rate: number;
  nodeUs: number;
  /** Statements per delivery (claims and completion groups). */
  statementsPerItem: number;
  /** Wall time per delivery in the claim and in the completion statements, µs. */
  claimUs: number;
  completeUs: number;
}

/** Claims `batchSize` at a time and records each claim's attempts in groups of `group`, until nothing is due. */
export async function dispatchStoreOnly(sql: Queryable, options: { batchSize: number; group: number; leaseMarginMs: number }): Promise<DispatchStoreOnly> {
  let items = 0;
  let statements = 0;
  let seq = 0;
  let claimMs = 0;
  let completeMs = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (;;) {
    const lease = `store-only:${++seq}`;
    let t = performance.now();
    const rows = await claimDeliveries(sql, options.batchSize, lease, options.leaseMarginMs);
    claimMs += performance.now() - t;
    statements++;
    if (rows.length === 0) break;
    const completions: OutboxCompletion[] = rows.map((r) => ({
      tenantId: r.tenant_id,
      deliveryId: Number(r.id),
      lease,
      messageId: r.message_id,
      endpointId: r.endpoint_id,
      attempt: r.attempt,
      url: r.url,
      startedAt: new Date(),
      durationMs: 1,
      succeeded: true,
      statusCode: 200,
      error: null,
      responseBody: null,
      endpointHadFailures: false,
      probeDelayMs: 0,
      next: 'succeeded',
      delayMs: 0,
    }));
    t = performance.now();
    for (let i = 0; i < completions.length; i += options.group) {
      await writeCompletions(sql, completions.slice(i, i + options.group), 'store-only', 1_000_000);
      statements++;
    }
    completeMs += performance.now() - t;
    items += rows.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    rate: items / seconds,
    nodeUs: (cpu.user + cpu.system) / items,
    statementsPerItem: statements / items,
    claimUs: (claimMs * 1000) / items,
    completeUs: (completeMs * 1000) / items,
  };
}
