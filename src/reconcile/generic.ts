import type { GenericReconcileConfig, SourceConfig } from '../config/source.js';
import { TekilError } from '../errors.js';
import { parsePath, readPath } from '../json-path.js';
import { asTime } from '../receiver/extract.js';
import { createScheme } from '../signing/index.js';
import type { Queryable } from '../store/db.js';
import { deliveriesOfResources, doneInWindow, resourceStates, type RecordedDelivery } from '../store/sql/reconcile/compare.js';
import { providerRequest, type ProviderHttpOptions } from './provider-http.js';
import { syntheticBody, syntheticEventId, syntheticHeaders } from './synthetic.js';
import type { ComparedPage, PlannedFinding, ReconcileAdapter, ReconcileWindow } from './types.js';

interface ListedResource {
  id: string;
  status: string;
  updatedAt: Date | null;
  raw: unknown;
}

const OPEN_STATUSES = new Set(['pending', 'dead']);

/** The auth headers of one request; a signature covers the path and query, with the source's scheme. */
function authHeaders(cfg: GenericReconcileConfig, source: SourceConfig, url: URL): Record<string, string> {
  switch (cfg.auth.kind) {
    case 'bearer':
      return { authorization: `Bearer ${cfg.auth.token}` };
    case 'header':
      return { [cfg.auth.name.toLowerCase()]: cfg.auth.value };
    case 'signature': {
      const scheme = createScheme(source.scheme, source.hmac);
      return scheme.sign({ body: Buffer.from(url.pathname + url.search), secrets: [source.secrets[0]!], id: `reconcile-${Date.now()}` });
    }
  }
}

/**
 * A provider that lists resources with a cursor (Paymos, MercanPay, most payment gateways). A listed
 * resource whose state tekil has not processed becomes a synthetic delivery
 * `reconcile:<resource id>:<status>`, in the source's envelope, processed like a webhook.
 */
export function createGenericAdapter(options: {
  sourceName: string;
  source: SourceConfig;
  cfg: GenericReconcileConfig;
  runId: string;
  http: ProviderHttpOptions;
}): ReconcileAdapter {
  const { sourceName, source, cfg, runId } = options;
  const paths = {
    items: parsePath(cfg.paths.items),
    nextCursor: parsePath(cfg.paths.next_cursor),
    id: parsePath(cfg.paths.id),
    status: parsePath(cfg.paths.status),
    updatedAt: parsePath(cfg.paths.updated_at),
  };
  const typeOf = (status: string) => cfg.event_types[status] ?? `${cfg.type_prefix}.${status}`;
  /** Resource id → the states the provider listed for it, for `extras`. */
  const listed = new Map<string, Set<string>>();

  /**
   * Where a listing is. With one status per call the statuses are listed in turn, and the run's cursor
   * says which one and where in it: `<status index>:<the provider's cursor>` (empty: its first page).
   */
  function readCursor(cursor: string | null): { index: number; provider: string | null } {
    if (!cfg.one_status_per_call || cursor === null) return { index: 0, provider: cursor };
    const colon = cursor.indexOf(':');
    const index = Number(cursor.slice(0, colon));
    if (colon < 1 || !Number.isInteger(index) || index < 0 || index >= cfg.statuses.length) {
      throw new TekilError('RECONCILE_PROVIDER_FAILED', `the run's cursor "${cursor}" does not name one of the ${cfg.statuses.length} statuses`, {
        hint: 'the statuses changed since the run began: start a new run with another window',
      });
    }
    const provider = cursor.slice(colon + 1);
    return { index, provider: provider === '' ? null : provider };
  }

  function nextCursor(index: number, providerNext: string | null): string | null {
    if (!cfg.one_status_per_call) return providerNext;
    if (providerNext !== null) return `${index}:${providerNext}`;
    return index + 1 < cfg.statuses.length ? `${index + 1}:` : null;
  }

  function pageUrl(window: ReconcileWindow, index: number, cursor: string | null): URL {
    const url = new URL(cfg.url);
    const statuses = cfg.one_status_per_call ? [cfg.statuses[index]!] : cfg.statuses;
    for (const s of statuses) url.searchParams.append(cfg.params.status, s);
    url.searchParams.set(cfg.params.limit, String(cfg.page_size));
    if (cfg.params.since !== null) url.searchParams.set(cfg.params.since, window.start.toISOString());
    if (window.end && cfg.params.until !== null) url.searchParams.set(cfg.params.until, window.end.toISOString());
    if (cursor !== null) url.searchParams.set(cfg.params.cursor, cursor);
    return url;
  }

  function readItems(json: unknown): { items: ListedResource[]; nextCursor: string | null } {
    const rawItems = readPath(json, paths.items);
    if (!Array.isArray(rawItems))
      throw new TekilError('RECONCILE_PROVIDER_FAILED', `the answer has no list at "${cfg.paths.items}"`, { hint: 'check reconcile.paths.items' });
    const items = rawItems.map((raw, i): ListedResource => {
      const id = readPath(raw, paths.id);
      const status = readPath(raw, paths.status);
      if ((typeof id !== 'string' && typeof id !== 'number') || typeof status !== 'string') {
        throw new TekilError('RECONCILE_PROVIDER_FAILED', `item ${i} has no id at "${cfg.paths.id}" or no status at "${cfg.paths.status}"`);
      }
      return { id: String(id), status, updatedAt: asTime(readPath(raw, paths.updatedAt)), raw };
    });
    const next = readPath(json, paths.nextCursor);
    return { items, nextCursor: typeof next === 'string' && next !== '' ? next : typeof next === 'number' ? String(next) : null };
  }

  function compareOne(item: ListedResource, deliveries: RecordedDelivery[], tekilState: string | undefined): PlannedFinding | undefined {
    const type = typeOf(item.status);
    const matching = deliveries.filter((d) => d.event_type === type);
    if (matching.some((d) => d.status === 'done')) return undefined;
    const open = matching.find((d) => OPEN_STATUSES.has(d.status));
    const base = { resourceId: item.id, providerState: item.status };
    if (open) {
      return { ...base, kind: 'unprocessed', eventId: open.event_id, tekilState: open.status, detail: `tekil inbox replay ${sourceName} ${open.event_id}` };
    }
    const eventId = syntheticEventId(item.id, item.status);
    const occurredAt = item.updatedAt ?? new Date();
    const record = {
      source: sourceName,
      eventId,
      resourceId: item.id,
      eventType: type,
      occurredAt,
      body: syntheticBody(cfg.envelope, { eventId, eventType: type, occurredAt, resource: item.raw }),
      contentType: 'application/json',
      headers: syntheticHeaders(runId),
    };
    if (deliveries.length === 0) return { ...base, kind: 'missing', eventId, tekilState: null, detail: null, record };
    const last = tekilState ?? deliveries[deliveries.length - 1]!.event_type;
    if (matching.length > 0) {
      // Received but not applied (stale or discarded): recording it again would only repeat that verdict.
      return { ...base, kind: 'state', eventId: matching[0]!.event_id, tekilState: last, detail: `tekil's delivery of this state is ${matching[0]!.status}` };
    }
    return { ...base, kind: 'state', eventId, tekilState: last, detail: null, record };
  }

  return {
    provider: 'generic',
    async comparePage(db: Queryable, window: ReconcileWindow, cursor: string | null): Promise<ComparedPage> {
      const at = readCursor(cursor);
      const url = pageUrl(window, at.index, at.provider);
      const res = await providerRequest('GET', url.toString(), authHeaders(cfg, source, url), options.http);
      const { items, nextCursor: providerNext } = readItems(res.json);
      const ids = [...new Set(items.map((i) => i.id))];
      const [deliveries, states] = await Promise.all([
        deliveriesOfResources.run(db, { source: sourceName, resourceIds: ids }),
        resourceStates.run(db, { source: sourceName, resourceIds: ids }),
      ]);
      const byResource = new Map<string, RecordedDelivery[]>();
      for (const d of deliveries.rows) {
        const list = byResource.get(d.resource_id!) ?? [];
        list.push(d);
        byResource.set(d.resource_id!, list);
      }
      const stateOf = new Map(states.rows.map((r) => [r.resource_id, r.state ?? undefined]));
      const findings: PlannedFinding[] = [];
      for (const item of items) {
        const seen = listed.get(item.id) ?? new Set<string>();
        seen.add(item.status);
        listed.set(item.id, seen);
        const finding = compareOne(item, byResource.get(item.id) ?? [], stateOf.get(item.id));
        if (finding) findings.push(finding);
      }
      return { count: items.length, nextCursor: nextCursor(at.index, providerNext), findings };
    },
    async extras(db: Queryable, window: ReconcileWindow, listedUntil: Date): Promise<PlannedFinding[]> {
      const typeToStatus = new Map(cfg.statuses.map((s) => [typeOf(s), s]));
      const done = await doneInWindow.run(db, {
        source: sourceName,
        types: [...typeToStatus.keys()],
        windowStart: window.start,
        windowEnd: window.end ?? listedUntil,
      });
      const out: PlannedFinding[] = [];
      for (const d of done.rows) {
        const status = typeToStatus.get(d.event_type ?? '')!;
        if (d.resource_id === null || listed.get(d.resource_id)?.has(status)) continue;
        out.push({
          kind: 'extra',
          resourceId: d.resource_id,
          eventId: d.event_id,
          providerState: [...(listed.get(d.resource_id) ?? [])].join(',') || null,
          tekilState: status,
          detail: 'tekil applied a state the provider does not list: check the source and the event',
        });
      }
      return out;
    },
  };
}
