import { Counter, Histogram } from 'prom-client';
import type { Context, Service } from '../service.js';
import type { RetentionConfig } from '../config/retention.js';
import type { Queryable } from '../store/db.js';
import { deleteInboxRecords, trimInboxBodies } from '../store/sql/inbox/retention.js';
import { deleteOutboxMessages, lockOutboxMessages, lockOutboxPayloads, trimOutboxPayloads } from '../store/sql/outbox/retention.js';
import { tryAdvisoryLock } from '../store/sql/advisory-lock.js';
import { deleteAuditEvents } from '../store/sql/audit/events.js';

/** Held by the transaction of each batch: one process sweeps at a time, the others skip the sweep. */
const RETENTION_LOCK = 7_340_002;

/** Rows one sweep trimmed and deleted. */
export interface SweepCounts {
  inboxTrimmed: number;
  inboxDeleted: number;
  outboxTrimmed: number;
  outboxDeleted: number;
  /** Audit rows older than `retention.audit`. */
  auditDeleted: number;
  /** True when this process left the rest of the sweep to another one that was sweeping. */
  yielded: boolean;
}

/** A row a batch went over: its time, and for a locking step its key (an outbox message's: tenant and id). */
interface LockedRow {
  tenant_id?: string;
  id?: string;
  at: Date;
}

/** One batched job: a statement, its parameters before the batch size, and what its rows count as. */
interface Step {
  store: 'inbox' | 'outbox' | 'audit';
  action: 'trimmed' | 'deleted';
  source?: string;
  /** One batch from `start` on: the rows it went over (changed, or only locked when `apply` is set). */
  select(tx: Queryable, batchSize: number, start: Date): Promise<LockedRow[]>;
  /**
   * When set, `select` only locks candidates (`tenant_id`, `id`, `at`) and this, given them, changes those
   * still eligible: a second statement sees what committed after the first one's snapshot. Answers how many.
   */
  apply?: (tx: Queryable, rows: LockedRow[]) => Promise<number>;
}

export interface RetentionSweeper extends Service {
  /** Runs one whole sweep now (every step until nothing is left, or until another process is found sweeping). */
  sweepOnce(now?: Date): Promise<SweepCounts>;
}

/** The retention of each configured source: its own block, else the top-level default. */
export function inboxRetention(ctx: Context): Array<[string, RetentionConfig]> {
  const { bodies, records } = ctx.config.retention;
  return Object.entries(ctx.config.sources).map(([name, s]) => [name, s.retention ?? { bodies, records }]);
}

/** Locked outbox messages as their key's two arrays. */
function messageKeys(rows: LockedRow[]): { tenantIds: string[]; ids: string[] } {
  return { tenantIds: rows.map((r) => r.tenant_id!), ids: rows.map((r) => r.id!) };
}

function stepsAt(ctx: Context, now: number): Step[] {
  const steps: Step[] = [];
  const cutOff = (age: number | null) => (age === null ? undefined : new Date(now - age));
  for (const [source, r] of inboxRetention(ctx)) {
    // Records first: a row about to be deleted is not worth trimming.
    const records = cutOff(r.records);
    if (records) {
      steps.push({
        store: 'inbox',
        action: 'deleted',
        source,
        select: async (tx, batchSize, start) => (await deleteInboxRecords.run(tx, { source, cutoff: records, batchSize, start })).rows,
      });
    }
    const bodies = cutOff(r.bodies);
    if (bodies) {
      steps.push({
        store: 'inbox',
        action: 'trimmed',
        source,
        select: async (tx, batchSize, start) => (await trimInboxBodies.run(tx, { source, cutoff: bodies, batchSize, start })).rows,
      });
    }
  }
  const outbox = ctx.config.sending.retention;
  const records = cutOff(outbox.records);
  if (records) {
    steps.push({
      store: 'outbox',
      action: 'deleted',
      select: async (tx, batchSize, start) => (await lockOutboxMessages.run(tx, { cutoff: records, batchSize, start })).rows,
      apply: async (tx, rows) => (await deleteOutboxMessages.run(tx, messageKeys(rows))).rowCount,
    });
  }
  const bodies = cutOff(outbox.bodies);
  if (bodies) {
    steps.push({
      store: 'outbox',
      action: 'trimmed',
      select: async (tx, batchSize, start) => (await lockOutboxPayloads.run(tx, { cutoff: bodies, batchSize, start })).rows,
      apply: async (tx, rows) => (await trimOutboxPayloads.run(tx, messageKeys(rows))).rowCount,
    });
  }
  const audit = cutOff(ctx.config.retention.audit);
  if (audit) {
    steps.push({
      store: 'audit',
      action: 'deleted',
      select: async (tx, batchSize, start) => (await deleteAuditEvents.run(tx, { cutoff: audit, start, batchSize })).rows,
    });
  }
  return steps;
}

function retentionMetrics(ctx: Context) {
  const existing = ctx.metrics.getSingleMetric('tekil_retention_rows_total') as Counter<'store' | 'action'> | undefined;
  const rows =
    existing ??
    new Counter({
      name: 'tekil_retention_rows_total',
      help: 'Rows retention changed: bodies trimmed (the record kept) and records deleted, by store (inbox, outbox, audit).',
      labelNames: ['store', 'action'],
      registers: [ctx.metrics],
    });
  const duration =
    (ctx.metrics.getSingleMetric('tekil_retention_sweep_seconds') as Histogram | undefined) ??
    new Histogram({
      name: 'tekil_retention_sweep_seconds',
      help: 'How long one whole retention sweep took.',
      buckets: [0.01, 0.1, 1, 10, 60, 600, 3600],
      registers: [ctx.metrics],
    });
  return { rows, duration };
}

/**
 * The retention sweeper (worker role). Every `retention.interval` it runs each configured step in
 * batches of `retention.batch_size` rows, oldest first, one short transaction per batch, pausing
 * between batches (`batch_pause`, and never less than the batch took), until a batch comes back
 * short. Short transactions matter twice: the rows a batch locks are released at once, and no long
 * transaction holds back vacuum's cleanup horizon while millions of rows are swept. Several processes may run the sweeper: each batch takes an advisory
 * lock without waiting, and a process that cannot get it leaves the sweep to the one that has it.
 */
export function createRetentionSweeper(ctx: Context): RetentionSweeper {
  const { interval, batch_size: batchSize, batch_pause: batchPause } = ctx.config.retention;
  const log = ctx.logger.child({ service: 'retention' });
  const metrics = retentionMetrics(ctx);
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<unknown> | undefined;
  let stopped = false;

  /**
   * One batch from `start` on: the times of the rows it went over and how many it changed; undefined
   * when another process holds the sweep.
   */
  async function batch(step: Step, start: Date): Promise<{ times: Date[]; changed: number } | undefined> {
    return ctx.db.transaction(async (tx) => {
      if (!(await tryAdvisoryLock.run(tx, { key: RETENTION_LOCK })).rows[0]!.locked) return undefined;
      const rows = await step.select(tx, batchSize, start);
      const times = rows.map((r) => r.at);
      if (!step.apply) return { times, changed: rows.length };
      if (rows.length === 0) return { times, changed: 0 };
      return {
        times,
        changed: await step.apply(tx, rows),
      };
    });
  }

  async function sweepOnce(now = new Date()): Promise<SweepCounts> {
    const counts: SweepCounts = { inboxTrimmed: 0, inboxDeleted: 0, outboxTrimmed: 0, outboxDeleted: 0, auditDeleted: 0, yielded: false };
    const started = process.hrtime.bigint();
    for (const step of stepsAt(ctx, now.getTime())) {
      let candidates: number;
      // Oldest first; each batch starts where the one before ended (a Date's milliseconds never pass a row).
      let start = new Date(0);
      do {
        if (stopped) return counts;
        const batchStarted = Date.now();
        const result = await batch(step, start).catch((err: unknown) => {
          throw new Error(`retention: ${step.store} ${step.action}${step.source ? ` (${step.source})` : ''} failed`, { cause: err });
        });
        if (result === undefined) {
          log.debug(counts, 'another process is sweeping; this one leaves the rest to it');
          return { ...counts, yielded: true };
        }
        const { times } = result;
        // A full batch of candidates means there may be more, even when some were no longer eligible.
        candidates = times.length;
        for (const at of times) if (at > start) start = at;
        metrics.rows.inc({ store: step.store, action: step.action }, result.changed);
        if (step.store === 'audit') counts.auditDeleted += result.changed;
        else counts[`${step.store}${step.action === 'trimmed' ? 'Trimmed' : 'Deleted'}`] += result.changed;
        // As long as the batch itself took, and at least batch_pause: a slow store (busy, or a big
        // backlog) slows the sweep down rather than the other way round.
        const pause = Math.max(batchPause, Date.now() - batchStarted);
        if (candidates === batchSize && pause > 0) await new Promise((r) => setTimeout(r, pause));
      } while (candidates === batchSize);
    }
    metrics.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    if (counts.inboxTrimmed + counts.inboxDeleted + counts.outboxTrimmed + counts.outboxDeleted + counts.auditDeleted > 0)
      log.info(counts, 'retention sweep done');
    return counts;
  }

  function schedule(delay: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      current = sweepOnce()
        .catch((err: unknown) => log.warn({ err }, 'retention sweep failed; it runs again at the next interval'))
        .finally(() => schedule(interval));
    }, delay);
    timer.unref();
  }

  const enabled = stepsAt(ctx, Date.now()).length > 0;
  return {
    name: 'retention',
    sweepOnce,
    async start() {
      if (enabled) schedule(interval);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
