import type { IyzicoReconcileConfig, PaytrReconcileConfig, SourceConfig } from '../config/source.js';
import { lookupPayment, paymentLookupOf, providerTitle, type ProviderPayment } from '../lookup/index.js';
import { parseAmount } from '../lookup/amount.js';
import { RequestFields } from '../signing/request-fields.js';
import type { Queryable } from '../store/db.js';
import { deliveryBodiesOfResources, resourcesInWindow } from '../store/sql/reconcile/compare.js';
import { syntheticEventId, syntheticHeaders } from './synthetic.js';
import type { ComparedPage, PlannedFinding, ReconcileAdapter, ReconcileWindow } from './types.js';

type LookupReconcileConfig = PaytrReconcileConfig | IyzicoReconcileConfig;

/** How each provider's notification says a payment's status, and which status is a paid one. */
const NOTIFIED = {
  paytr: { status: 'form:status', paid: 'success' },
  iyzico: { status: 'body:status', paid: 'SUCCESS' },
} as const;

const OPEN_STATUSES = new Set(['pending', 'dead']);

interface Notified {
  eventId: string;
  eventType: string | null;
  status: string;
  /** The status the notification said (`success`, `SUCCESS`…); undefined when it says none. */
  said: string | undefined;
}

/**
 * PayTR and iyzico list no payments, so reconcile walks the other way: every resource of the source
 * tekil received a delivery for in the window is read back from the provider (PayTR's status query by
 * `merchant_oid`, iyzico's payment retrieve by `paymentConversationId`), a page of resources at a time
 * in id order (the run's cursor is the last id). A payment the provider reports paid that tekil has
 * not applied is a `state` finding (or `unprocessed` when its delivery waits or is dead); with
 * --apply a synthetic delivery `reconcile:<id>:<status>` in the provider's notification shape is
 * recorded for it. A paid payment tekil applied that the provider does not report paid is `extra`.
 * A payment tekil never heard of cannot be found this way: no listing names it.
 */
export function createLookupAdapter(options: { sourceName: string; source: SourceConfig; cfg: LookupReconcileConfig; runId: string }): ReconcileAdapter {
  const { sourceName, source, cfg, runId } = options;
  const lookup = paymentLookupOf(source, cfg);
  const title = providerTitle[cfg.provider];
  const notified = NOTIFIED[cfg.provider];
  const isPaid = (status: string | undefined) => status !== undefined && status.toLowerCase() === notified.paid.toLowerCase();

  function syntheticBody(resourceId: string, payment: ProviderPayment, eventType: string | null): { body: Buffer; contentType: string } {
    if (cfg.provider === 'paytr') {
      // PayTR's own notification form (its amounts in kuruş), unsigned: it never passes the receiver.
      const amount = payment.amount === null ? undefined : parseAmount(payment.amount);
      const kurus = amount === undefined ? undefined : (amount.units * 10n ** BigInt(2)) / 10n ** BigInt(amount.scale);
      const form = new URLSearchParams({ merchant_oid: resourceId, status: payment.status });
      if (kurus !== undefined) form.set('total_amount', kurus.toString());
      if (payment.currency !== null) form.set('currency', payment.currency);
      return { body: Buffer.from(form.toString()), contentType: 'application/x-www-form-urlencoded' };
    }
    const body = {
      iyziEventType: eventType ?? 'RECONCILE',
      iyziEventTime: Date.now(),
      paymentConversationId: resourceId,
      ...(payment.id !== null ? { paymentId: payment.id } : {}),
      status: payment.status,
    };
    return { body: Buffer.from(JSON.stringify(body)), contentType: 'application/json' };
  }

  function compareOne(resourceId: string, payment: ProviderPayment, deliveries: Notified[]): PlannedFinding | undefined {
    const last = deliveries[deliveries.length - 1];
    const base = { resourceId, providerState: payment.status, tekilState: last?.said ?? last?.status ?? null };
    const paidOnes = deliveries.filter((d) => isPaid(d.said));
    if (isPaid(payment.status)) {
      if (paidOnes.some((d) => d.status === 'done')) return undefined;
      const open = paidOnes.find((d) => OPEN_STATUSES.has(d.status));
      if (open)
        return { ...base, kind: 'unprocessed', eventId: open.eventId, tekilState: open.status, detail: `tekil inbox replay ${sourceName} ${open.eventId}` };
      if (paidOnes.length > 0) {
        return { ...base, kind: 'state', eventId: paidOnes[0]!.eventId, detail: `tekil's delivery of this payment is ${paidOnes[0]!.status}` };
      }
      const eventId = syntheticEventId(resourceId, payment.status);
      const { body, contentType } = syntheticBody(resourceId, payment, last?.eventType ?? null);
      const eventType = cfg.provider === 'paytr' ? payment.status : (last?.eventType ?? null);
      return {
        ...base,
        kind: 'state',
        eventId,
        detail: `${title} reports the payment paid`,
        record: { source: sourceName, eventId, resourceId, eventType, occurredAt: new Date(), body, contentType, headers: syntheticHeaders(runId) },
      };
    }
    const applied = paidOnes.find((d) => d.status === 'done');
    if (applied) {
      return {
        ...base,
        kind: 'extra',
        eventId: applied.eventId,
        tekilState: applied.said ?? null,
        detail: `tekil applied a paid notification; ${title} reports ${payment.status}`,
      };
    }
    return undefined;
  }

  return {
    provider: cfg.provider,
    async comparePage(db: Queryable, window: ReconcileWindow, cursor: string | null): Promise<ComparedPage> {
      const page = await resourcesInWindow.run(db, {
        source: sourceName,
        windowStart: window.start,
        windowEnd: window.end,
        after: cursor,
        limit: cfg.page_size,
      });
      const ids = page.rows.map((r) => r.resource_id);
      if (ids.length === 0) return { count: 0, nextCursor: null, findings: [] };
      const recorded = await deliveryBodiesOfResources.run(db, { source: sourceName, resourceIds: ids });
      const byResource = new Map<string, Notified[]>();
      for (const d of recorded.rows) {
        const fields = new RequestFields(Buffer.from(d.body), d.headers);
        const list = byResource.get(d.resource_id!) ?? [];
        list.push({ eventId: d.event_id, eventType: d.event_type, status: d.status, said: fields.read(notified.status) });
        byResource.set(d.resource_id!, list);
      }
      const findings: PlannedFinding[] = [];
      for (const id of ids) {
        // One at a time: a provider's rate limit is per merchant, and page_interval spaces the pages.
        const payment = await lookupPayment(lookup, id, cfg.timeout, true);
        const finding = compareOne(id, payment, byResource.get(id) ?? []);
        if (finding) findings.push(finding);
      }
      return { count: ids.length, nextCursor: ids.length < cfg.page_size ? null : ids[ids.length - 1]!, findings };
    },
  };
}
