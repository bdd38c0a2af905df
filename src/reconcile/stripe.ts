import type { SourceConfig, StripeReconcileConfig } from '../config/source.js';
import { TekilError } from '../errors.js';
import { createExtractor } from '../receiver/extract.js';
import { createScheme } from '../signing/index.js';
import type { Queryable } from '../store/db.js';
import { deliveriesByIds, doneInWindow, type RecordedDelivery } from '../store/sql/reconcile/compare.js';
import { providerRequest, type ProviderHttpOptions } from './provider-http.js';
import { syntheticHeaders } from './synthetic.js';
import type { ComparedPage, PlannedFinding, ReconcileAdapter, ReconcileWindow } from './types.js';

interface StripeEvent {
  id: string;
  type?: string;
}

/**
 * Stripe: `GET /v1/events` lists the very bodies the webhooks carry, under their own `evt_…` ids. A
 * missing one is recorded under that id, so the dedupe is exact: the late webhook is a duplicate.
 */
export function createStripeAdapter(options: {
  sourceName: string;
  source: SourceConfig;
  cfg: StripeReconcileConfig;
  runId: string;
  http: ProviderHttpOptions;
}): ReconcileAdapter {
  const { sourceName, source, cfg, runId } = options;
  const extract = createExtractor(source, createScheme(source.scheme, source.hmac).defaults);
  const listedIds = new Set<string>();

  function pageUrl(window: ReconcileWindow, cursor: string | null): string {
    const url = new URL('/v1/events', cfg.api_base);
    url.searchParams.set('limit', '100');
    url.searchParams.set('created[gte]', String(Math.floor(window.start.getTime() / 1000)));
    if (window.end) url.searchParams.set('created[lte]', String(Math.floor(window.end.getTime() / 1000)));
    for (const t of cfg.types ?? []) url.searchParams.append('types[]', t);
    if (cursor !== null) url.searchParams.set('starting_after', cursor);
    return url.toString();
  }

  return {
    provider: 'stripe',
    async comparePage(db: Queryable, window: ReconcileWindow, cursor: string | null): Promise<ComparedPage> {
      const res = await providerRequest('GET', pageUrl(window, cursor), { authorization: `Bearer ${cfg.api_key}` }, options.http);
      const page = res.json as { object?: unknown; data?: unknown; has_more?: unknown };
      if (page?.object !== 'list' || !Array.isArray(page.data)) {
        throw new TekilError('RECONCILE_PROVIDER_FAILED', 'the events API did not answer with a list', { hint: 'check reconcile.api_base' });
      }
      const events = page.data as StripeEvent[];
      for (const e of events) {
        if (typeof e?.id !== 'string') throw new TekilError('RECONCILE_PROVIDER_FAILED', 'an event of the list has no id');
        listedIds.add(e.id);
      }
      const recorded = await deliveriesByIds.run(db, { source: sourceName, eventIds: events.map((e) => e.id) });
      const byId = new Map(recorded.rows.map((r) => [r.event_id, r]));
      const findings: PlannedFinding[] = [];
      for (const e of events) {
        const have = byId.get(e.id);
        if (have && (have.status === 'pending' || have.status === 'dead')) {
          findings.push({
            kind: 'unprocessed',
            resourceId: have.resource_id,
            eventId: e.id,
            providerState: e.type ?? null,
            tekilState: have.status,
            detail: `tekil inbox replay ${sourceName} ${e.id}`,
          });
        } else if (!have) {
          // The listed event is the webhook's body: recorded as the webhook would have been.
          const body = Buffer.from(JSON.stringify(e));
          const fields = extract({ body, headers: {} });
          findings.push({
            kind: 'missing',
            resourceId: fields.resourceId,
            eventId: e.id,
            providerState: e.type ?? null,
            tekilState: null,
            detail: null,
            record: {
              source: sourceName,
              eventId: e.id,
              resourceId: fields.resourceId,
              eventType: fields.eventType ?? e.type ?? null,
              occurredAt: fields.occurredAt,
              body,
              contentType: 'application/json',
              headers: syntheticHeaders(runId),
            },
          });
        }
      }
      const last = events[events.length - 1];
      return { count: events.length, nextCursor: page.has_more === true && last ? last.id : null, findings };
    },
    async extras(db: Queryable, window: ReconcileWindow, listedUntil: Date): Promise<PlannedFinding[]> {
      const done = await doneInWindow.run(db, {
        source: sourceName,
        types: cfg.types ?? null,
        windowStart: window.start,
        windowEnd: window.end ?? listedUntil,
      });
      return done.rows
        .filter((d) => !listedIds.has(d.event_id) && !d.event_id.startsWith('reconcile:'))
        .map((d) => ({
          kind: 'extra' as const,
          resourceId: d.resource_id,
          eventId: d.event_id,
          providerState: null,
          tekilState: d.event_type,
          detail: 'tekil processed an event Stripe does not list: check the source and the event',
        }));
    },
  };
}
