import type { PublishResult } from '../outbox/publish.js';
import { replayMessage } from '../outbox/operations.js';
import type { InvoiceStatus } from '../provider/invoice-events.js';
import type { Db, Queryable } from '../store/db.js';
import { deliveryProgress, outboxSummary, succeededMessages, unsettledDeliveries, updateInvoiceStatuses } from '../store/sql/simulate/invoices.js';
import { TekilError } from '../errors.js';
import type { FaultCounts } from './fault-proxy.js';
import { finalStatus, paidAmountAt, type PlannedInvoice } from './lifecycle.js';

/** Invoices changed and announced in one transaction: small enough to keep the dispatcher fed early. */
const INVOICES_PER_TRANSACTION = 250;

export interface WaveOptions {
  db: Db;
  invoices: readonly PlannedInvoice[];
  /** Wall-clock pause between lifecycle steps (already scaled). */
  stepGapMs: number;
  startedAt: Date;
  publishOne(tx: Queryable, invoice: PlannedInvoice, status: InvoiceStatus, occurredAt: Date): Promise<PublishResult>;
  /** Called once, when half the events are out (the secret rotation happens there). */
  halfway(): Promise<void>;
  progress(line: string): void;
}

/**
 * Walks every invoice one step per wave. An invoice picked for reordering announces its steps latest
 * first, each still stamped with the provider time at which it happened (just after the run began),
 * so a receiver that trusts arrival order regresses it; the others are stamped when they are sent.
 */
export async function publishWaves(options: WaveOptions): Promise<number> {
  const { db, invoices } = options;
  const waves = Math.max(...invoices.map((i) => i.steps.length));
  const total = invoices.reduce((n, i) => n + i.steps.length, 0);
  let published = 0;
  let halfwayDone = false;
  for (let wave = 0; wave < waves; wave++) {
    if (wave > 0 && options.stepGapMs > 0) await new Promise((r) => setTimeout(r, options.stepGapMs));
    const now = new Date();
    const due = invoices.filter((i) => wave < i.steps.length);
    const batches: PlannedInvoice[][] = [];
    for (let start = 0; start < due.length; start += INVOICES_PER_TRANSACTION) batches.push(due.slice(start, start + INVOICES_PER_TRANSACTION));
    // A server store takes several transactions at once; the embedded one has a single connection.
    const lanes = db.kind === 'postgres' ? 4 : 1;
    const publishBatch = async (batch: readonly PlannedInvoice[]) => {
      const changes = batch.map((invoice) => {
        const step = invoice.reversed ? invoice.steps.length - 1 - wave : wave;
        const status = invoice.steps[step]!;
        return { invoice, status, occurredAt: invoice.reversed ? new Date(options.startedAt.getTime() + step) : now };
      });
      await db.transaction(async (tx) => {
        await updateInvoiceStatuses.run(tx, {
          ids: changes.map((c) => c.invoice.id),
          statuses: changes.map((c) => c.status),
          paidAmounts: changes.map((c) => paidAmountAt(c.status, c.invoice.amount)),
          at: changes.map((c) => c.occurredAt),
        });
        for (const c of changes) await options.publishOne(tx, c.invoice, c.status, c.occurredAt);
      });
      published += batch.length;
      if (!halfwayDone && published * 2 >= total) {
        halfwayDone = true;
        await options.halfway();
      }
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (next < batches.length) await publishBatch(batches[next++]!);
      }),
    );
    options.progress(`step ${wave + 1}/${waves}: ${due.length} events published (${published}/${total})`);
  }
  return published;
}

/** Waits until no delivery is pending or being sent: every event has been answered or given up on. */
export async function waitForSettled(db: Queryable, timeoutMs: number, onUnsettled?: (n: number) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await unsettledDeliveries.run(db);
    onUnsettled?.(Number(rows[0]?.n ?? 0));
    if (Number(rows[0]?.n ?? 0) === 0) return;
    if (Date.now() > deadline) {
      throw new TekilError('SIMULATION_UNSETTLED', `${rows[0]?.n} deliveries still unsettled after ${Math.round(timeoutMs / 1000)} s`, {
        hint: 'a smaller --time-scale shortens the ladder; is the target answering?',
      });
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Sends a share of the already delivered messages again by hand, as an operator's replay would. It
 * waits until half the deliveries are in, so there are old ones to replay while the rest still flow.
 */
export async function replayOldDeliveries(db: Queryable, rate: number, random: () => number, timeoutMs: number): Promise<number> {
  if (rate <= 0) return 0;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await deliveryProgress.run(db);
    const progress = rows[0]!;
    if (Number(progress.succeeded) * 2 >= Number(progress.total) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const { rows } = await succeededMessages.run(db);
  let replayed = 0;
  for (const { id } of rows) {
    if (random() < rate) {
      await replayMessage(db, id);
      replayed++;
    }
  }
  return replayed;
}

export interface SimulationSummary {
  runId: string;
  /** The event ids the receiver saw: one per delivery, or the message's. */
  eventIds: 'message' | 'delivery';
  invoices: number;
  /** Invoices by the path they took (paid, paid_over, underpaid, topped_up, expired). */
  paths: Record<string, number>;
  /** Invoices by the status the simulator last announced. */
  finalStatuses: Record<string, number>;
  reordered: number;
  eventsPublished: number;
  replayed: number;
  rotatedSecret: string | undefined;
  /** Outbox deliveries by final status, with their HTTP attempts. */
  deliveries: Record<string, { deliveries: number; attempts: number }>;
  proxies: Record<string, FaultCounts>;
  durationMs: number;
}

export async function summarize(
  db: Queryable,
  run: {
    runId: string;
    eventIds: 'message' | 'delivery';
    invoices: readonly PlannedInvoice[];
    published: number;
    replayed: number;
    rotatedSecret: string | undefined;
    proxies: Record<string, FaultCounts>;
    durationMs: number;
  },
): Promise<SimulationSummary> {
  const paths: Record<string, number> = {};
  const finalStatuses: Record<string, number> = {};
  for (const invoice of run.invoices) {
    paths[invoice.path] = (paths[invoice.path] ?? 0) + 1;
    const status = finalStatus(invoice);
    finalStatuses[status] = (finalStatuses[status] ?? 0) + 1;
  }
  const { rows } = await outboxSummary.run(db);
  const deliveries: SimulationSummary['deliveries'] = {};
  for (const r of rows) deliveries[r.status] = { deliveries: Number(r.deliveries), attempts: Number(r.attempts) };
  return {
    runId: run.runId,
    eventIds: run.eventIds,
    invoices: run.invoices.length,
    paths,
    finalStatuses,
    reordered: run.invoices.filter((i) => i.reversed).length,
    eventsPublished: run.published,
    replayed: run.replayed,
    rotatedSecret: run.rotatedSecret,
    deliveries,
    proxies: run.proxies,
    durationMs: run.durationMs,
  };
}
