import type { GithubReconcileConfig } from '../config/source.js';
import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { deliveriesByIds, type RecordedDelivery } from '../store/sql/reconcile/compare.js';
import { providerRequest, type ProviderHttpOptions } from './provider-http.js';
import type { ComparedPage, PlannedFinding, ReconcileAdapter, ReconcileWindow } from './types.js';

/** One item of GitHub's "list deliveries for a hook" answer (the fields reconcile reads). */
interface HookDelivery {
  id: number;
  guid: string;
  delivered_at: string;
  status_code: number;
  event?: string;
  action?: string | null;
}

/** The `cursor` of Link's rel="next", GitHub's paging for hook deliveries. */
export function nextCursorFromLink(link: string | string[] | undefined): string | null {
  const text = Array.isArray(link) ? link.join(',') : link;
  if (!text) return null;
  for (const part of text.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="next"/.exec(part);
    if (m) return new URL(m[1]!).searchParams.get('cursor');
  }
  return null;
}

/**
 * GitHub never redelivers on its own: list the hook's deliveries (newest first) back to the window's
 * start, and for every delivery guid GitHub failed to deliver that tekil never recorded, ask GitHub
 * to deliver it again (`POST …/deliveries/{id}/attempts`). tekil's event id for GitHub is the guid
 * (`X-GitHub-Delivery`), which a redelivery keeps.
 */
export function createGithubAdapter(options: { sourceName: string; cfg: GithubReconcileConfig; http: ProviderHttpOptions }): ReconcileAdapter {
  const { sourceName, cfg } = options;
  const hookPath = cfg.repo.startsWith('org:') ? `/orgs/${cfg.repo.slice(4)}/hooks/${cfg.hook_id}` : `/repos/${cfg.repo}/hooks/${cfg.hook_id}`;
  const headers = { authorization: `Bearer ${cfg.api_key}`, 'x-github-api-version': '2022-11-28', accept: 'application/vnd.github+json' };
  /** Guids already delivered (a later success, listed first) or already reported. */
  const settled = new Set<string>();

  return {
    provider: 'github',
    async comparePage(db: Queryable, window: ReconcileWindow, cursor: string | null): Promise<ComparedPage> {
      const url = new URL(`${hookPath}/deliveries`, cfg.api_base);
      url.searchParams.set('per_page', '100');
      if (cursor !== null) url.searchParams.set('cursor', cursor);
      const res = await providerRequest('GET', url.toString(), headers, options.http);
      if (!Array.isArray(res.json)) throw new TekilError('RECONCILE_PROVIDER_FAILED', 'the hook deliveries API did not answer with a list');
      const all = res.json as HookDelivery[];
      const end = window.end?.getTime() ?? Infinity;
      const inWindow = all.filter((d) => {
        const at = Date.parse(d.delivered_at);
        return at >= window.start.getTime() && at <= end;
      });
      for (const d of inWindow) if (d.status_code >= 200 && d.status_code < 300) settled.add(d.guid);
      const failed = inWindow.filter((d) => !settled.has(d.guid));
      const recorded = await deliveriesByIds.run(db, { source: sourceName, eventIds: [...new Set(failed.map((d) => d.guid))] });
      const byId = new Map(recorded.rows.map((r) => [r.event_id, r]));
      const findings: PlannedFinding[] = [];
      for (const d of failed) {
        if (settled.has(d.guid)) continue;
        settled.add(d.guid);
        const have = byId.get(d.guid);
        const state = d.action ? `${d.event}.${d.action}` : (d.event ?? null);
        if (have && (have.status === 'pending' || have.status === 'dead')) {
          findings.push({
            kind: 'unprocessed',
            resourceId: have.resource_id,
            eventId: d.guid,
            providerState: state,
            tekilState: have.status,
            detail: `tekil inbox replay ${sourceName} ${d.guid}`,
          });
        } else if (!have) {
          findings.push({
            kind: 'missing',
            resourceId: null,
            eventId: d.guid,
            providerState: state,
            tekilState: null,
            detail: `GitHub delivery ${d.id} answered ${d.status_code}`,
            redeliver: async () => {
              await providerRequest('POST', new URL(`${hookPath}/deliveries/${d.id}/attempts`, cfg.api_base).toString(), headers, options.http);
            },
          });
        }
      }
      // Newest first: once a page reaches back past the window's start, older pages cannot matter.
      const oldest = all[all.length - 1];
      const reachedStart = oldest !== undefined && Date.parse(oldest.delivered_at) < window.start.getTime();
      return { count: all.length, nextCursor: reachedStart ? null : nextCursorFromLink(res.headers.link), findings };
    },
  };
}
