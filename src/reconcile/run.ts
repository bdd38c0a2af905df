import type { TekilConfig } from '../config/schema.js';
import type { ReconcileConfig } from '../config/source.js';
import { TekilError, isTekilError } from '../errors.js';
import { recordLocalAction } from '../audit/local-action.js';
import type { Logger } from '../logger.js';
import type { Db, Queryable } from '../store/db.js';
import { insertDelivery } from '../store/sql/inbox/insert-deliveries.js';
import { findingKinds, insertFindings, listFindings, type FindingAction, type FindingKind, type FindingRow } from '../store/sql/reconcile/findings.js';
import { advanceRun, finishRun, insertRun, lastRunOfSource, resumeRun, runById, type ReconcileRunRow } from '../store/sql/reconcile/runs.js';
import { lockSourceRunStart } from '../store/sql/reconcile/source-lock.js';
import { createGenericAdapter } from './generic.js';
import { createGithubAdapter } from './github.js';
import { createLookupAdapter } from './lookup.js';
import type { ProviderHttpOptions } from './provider-http.js';
import { createStripeAdapter } from './stripe.js';
import type { PlannedFinding, ReconcileAdapter, ReconcileWindow } from './types.js';

export interface ReconcileRequest {
  source: string;
  window: ReconcileWindow;
  apply: boolean;
  trigger: 'cli' | 'schedule' | 'api';
}

export interface ReconcileReport {
  run: ReconcileRunRow;
  counts: Record<FindingKind, number>;
  /** Every finding of the run, a resumed run's earlier pages included. */
  findings: FindingRow[];
}

export interface ReconcileDeps {
  db: Db;
  config: TekilConfig;
  logger: Logger;
  /** Told about each finding stored (the metric). */
  onFindings?: (source: string, kinds: readonly FindingKind[]) => void;
  /** Told after each provider page is stored (the CLI's progress line). */
  onPage?: (page: { pages: number; items: number; cursor: string | null }) => void;
  /** When aborted, the run stops after the page in hand is stored and ends `failed` (`interrupted`), resumable from its cursor. */
  signal?: AbortSignal;
}

/** A run left `running` this long without a page finished is taken as dead and resumed. */
const ABANDONED_AFTER_MS = 10 * 60_000;

export function reconcileConfigOf(config: TekilConfig, source: string): ReconcileConfig {
  const cfg = config.sources[source]?.reconcile;
  if (!cfg) {
    throw new TekilError(
      'RECONCILE_NOT_CONFIGURED',
      config.sources[source] ? `source "${source}" has no reconcile block` : `no source "${source}" is configured`,
      {
        hint: 'add reconcile: { provider: stripe | generic | github | paytr | iyzico, … } to the source (docs/reconcile.md)',
      },
    );
  }
  return cfg;
}

function createAdapter(config: TekilConfig, sourceName: string, runId: string, http: ProviderHttpOptions): ReconcileAdapter {
  const source = config.sources[sourceName]!;
  const cfg = reconcileConfigOf(config, sourceName);
  switch (cfg.provider) {
    case 'stripe':
      return createStripeAdapter({ sourceName, source, cfg, runId, http });
    case 'generic':
      return createGenericAdapter({ sourceName, source, cfg, runId, http });
    case 'github':
      return createGithubAdapter({ sourceName, cfg, http });
    case 'paytr':
    case 'iyzico':
      return createLookupAdapter({ sourceName, source, cfg, runId });
  }
}

const sameTime = (a: Date | null, b: Date | null) => (a === null ? b === null : b !== null && a.getTime() === b.getTime());

/**
 * Starts a run, or continues the source's last one when it failed (or was abandoned mid-way) over the
 * same window: a scheduled run continues it whatever its window, so an outage's window is finished
 * before a new one starts.
 */
async function openRun(db: Db, request: ReconcileRequest, provider: string): Promise<{ run: ReconcileRunRow; resumed: boolean }> {
  return db.transaction(async (tx) => {
    // One run per source at a time, whoever starts it (CLI, API, schedule, any process): two runs over
    // one window would each store every finding, twice.
    await lockSourceRunStart.run(tx, { source: request.source });
    const last = (await lastRunOfSource.run(tx, { source: request.source })).rows[0];
    const abandoned = last?.status === 'running' && Date.now() - last.updated_at.getTime() > ABANDONED_AFTER_MS;
    if (last?.status === 'running' && !abandoned) {
      throw new TekilError(
        'RECONCILE_RUNNING',
        `reconcile run ${last.id} of source "${request.source}" is in progress (started ${last.started_at.toISOString()})`,
        {
          hint: `wait for it to finish (tekil reconcile --runs --source ${request.source}); a run that makes no progress for ${ABANDONED_AFTER_MS / 60_000} minutes is taken as abandoned and the next run resumes it`,
        },
      );
    }
    const unfinished = last && (last.status === 'failed' || abandoned);
    const sameWindow = last && sameTime(last.window_start, request.window.start) && sameTime(last.window_end, request.window.end);
    if (last && unfinished && last.provider === provider && (sameWindow || request.trigger === 'schedule')) {
      const row = (await resumeRun.run(tx, { id: last.id, apply: request.apply, trigger: request.trigger })).rows[0]!;
      return { run: row, resumed: true };
    }
    const row = (
      await insertRun.run(tx, {
        source: request.source,
        provider,
        windowStart: request.window.start,
        windowEnd: request.window.end,
        apply: request.apply,
        trigger: request.trigger,
      })
    ).rows[0]!;
    return { run: row, resumed: false };
  });
}

/**
 * Stores one page's findings and, with --apply, does what each calls for, in one transaction with the
 * run's new cursor: a crash leaves either the whole page (findings, deliveries, cursor) or none of it.
 * A delivery is only ever recorded together with its finding row.
 */
async function storePage(
  tx: Queryable,
  run: ReconcileRunRow,
  planned: PlannedFinding[],
  apply: boolean,
  redelivered: ReadonlySet<PlannedFinding>,
): Promise<void> {
  const actions: FindingAction[] = [];
  const details: Array<string | null> = [];
  for (const f of planned) {
    let action: FindingAction = 'none';
    let detail = f.detail;
    if (apply && f.record) {
      action = (await insertDelivery(tx, f.record)) ? 'recorded' : 'none';
      if (action === 'none') detail = 'already recorded by an earlier run or a webhook meanwhile';
    } else if (apply && f.redeliver) {
      action = redelivered.has(f) ? 'redelivered' : 'none';
    } else if (apply && f.kind === 'unprocessed') {
      action = 'listed';
    }
    actions.push(action);
    details.push(detail);
  }
  if (planned.length === 0) return;
  await insertFindings.run(tx, {
    runId: run.id,
    source: run.source,
    kinds: planned.map((f) => f.kind),
    resourceIds: planned.map((f) => f.resourceId),
    eventIds: planned.map((f) => f.eventId),
    providerStates: planned.map((f) => f.providerState),
    tekilStates: planned.map((f) => f.tekilState),
    actions,
    details,
  });
}

/** Runs reconcile for one source over a window: lists, compares, stores every difference, applies with --apply. */
export async function runReconcile(deps: ReconcileDeps, request: ReconcileRequest): Promise<ReconcileReport> {
  const cfg = reconcileConfigOf(deps.config, request.source);
  const { db, logger } = deps;
  const { run, resumed } = await openRun(db, request, cfg.provider);
  const log = logger.child({ reconcile_run: run.id, source: request.source });
  const http: ProviderHttpOptions = {
    maxRetries: cfg.max_retries,
    maxWaitMs: cfg.max_wait,
    timeoutMs: cfg.timeout,
    onWait: (w) => log.info(w, 'reconcile: waiting before asking the provider again'),
  };
  const adapter = createAdapter(deps.config, request.source, run.id, http);
  // A resumed run keeps its own window: its cursor only means something there.
  const window: ReconcileWindow = resumed ? { start: run.window_start, end: run.window_end } : request.window;
  const listingStarted = new Date();
  let cursor = run.cursor;
  const fromFirstPage = cursor === null;
  log.info({ resumed, cursor, apply: request.apply }, 'reconcile run started');
  let pages = 0;
  let items = Number(run.items);
  try {
    for (;;) {
      const page = await adapter.comparePage(db, window, cursor);
      const redelivered = new Set<PlannedFinding>();
      if (request.apply) {
        // Outside the transaction: an HTTP call must not hold it. A crash after it leaves no finding,
        // and the next run sees the redelivered webhook instead.
        for (const f of page.findings) {
          if (f.redeliver) {
            await f.redeliver();
            redelivered.add(f);
          }
        }
      }
      await db.transaction(async (tx) => {
        await storePage(tx, run, page.findings, request.apply, redelivered);
        await advanceRun.run(tx, { id: run.id, cursor: page.nextCursor ?? cursor, items: page.count });
      });
      deps.onFindings?.(
        request.source,
        page.findings.map((f) => f.kind),
      );
      pages++;
      items += page.count;
      deps.onPage?.({ pages, items, cursor: page.nextCursor });
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
      if (deps.signal?.aborted) {
        await finishRun.run(db, { id: run.id, status: 'failed', error: 'interrupted' });
        log.info({ cursor }, 'reconcile run interrupted; a run over the same window resumes from its cursor');
        return reportOf(db, run.id);
      }
      if (cfg.page_interval > 0) await new Promise((resolve) => setTimeout(resolve, cfg.page_interval));
    }
    // `extra` needs the whole listing in this process; a resumed run cannot tell.
    if (fromFirstPage && adapter.extras) {
      const extras = await adapter.extras(db, window, listingStarted);
      await db.transaction((tx) => storePage(tx, run, extras, request.apply, new Set()));
      deps.onFindings?.(
        request.source,
        extras.map((f) => f.kind),
      );
    }
    await finishRun.run(db, { id: run.id, status: 'completed', error: null });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await finishRun
      .run(db, { id: run.id, status: 'failed', error: message.slice(0, 1000) })
      .catch((e: unknown) => log.error({ err: e }, 'could not mark the run failed'));
    log.warn({ err }, 'reconcile run failed; the next run resumes from its cursor');
    await auditLocalApply(deps, request, run.id, err);
    throw err;
  }
  await auditLocalApply(deps, request, run.id);
  return reportOf(db, run.id);
}

/** `tekil reconcile --apply` on the store itself changes the inbox with no API call to audit it: recorded here. */
async function auditLocalApply(deps: ReconcileDeps, request: ReconcileRequest, runId: string, err?: unknown): Promise<void> {
  if (request.trigger !== 'cli' || !request.apply) return;
  const code = err === undefined ? undefined : isTekilError(err) ? err.code : 'INTERNAL';
  await recordLocalAction(deps.db, deps.logger, {
    command: 'tekil reconcile --apply',
    target: { source: request.source, run: runId, since: request.window.start.toISOString(), until: request.window.end?.toISOString() ?? null },
    error: code === undefined ? undefined : { code },
  });
}

/** A run's stored state, counts and findings. */
export async function reportOf(db: Queryable, runId: string): Promise<ReconcileReport> {
  const runRow = (await runById.run(db, { id: runId })).rows[0];
  if (!runRow) throw new TekilError('NOT_FOUND', `no reconcile run ${runId}`);
  const findings = (await listFindings.run(db, { source: null, kind: null, runId, beforeId: null, limit: 1_000_000 })).rows.reverse();
  const counts = Object.fromEntries(findingKinds.map((k) => [k, 0])) as Record<FindingKind, number>;
  for (const f of findings) counts[f.kind]++;
  return { run: runRow, counts, findings };
}
