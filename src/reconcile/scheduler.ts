import type { Context, Service } from '../service.js';
import { tryAdvisoryLock } from '../store/sql/advisory-lock.js';
import { lastRunTimes } from '../store/sql/reconcile/runs.js';
import type { Queryable } from '../store/db.js';
import { runReconcile } from './run.js';

/** The advisory lock key of the scheduler: one process runs scheduled reconciles at a time. */
const SCHEDULER_LOCK = 7_340_001;
/** How often the scheduler wakes to see whether a source is due. */
const TICK_MS = 30_000;

/**
 * Runs each source's scheduled reconcile (`reconcile.every`) inside `tekil start`, in the worker role.
 * Every tick, one transaction tries the scheduler's advisory lock; the holder runs every due source
 * while holding it (so two processes never run the same window at once) and the others skip the tick.
 * A source is due when its last run started more than `every` ago; a failed run is due again after a
 * tenth of `every` and resumes from its cursor.
 */
export function createReconcileScheduler(ctx: Context, options: { tickMs?: number } = {}): Service {
  const scheduled = Object.entries(ctx.config.sources).filter(([, s]) => s.reconcile?.every !== undefined);
  const log = ctx.logger.child({ service: 'reconcile' });
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let stopped = false;

  async function dueSources(db: Queryable): Promise<string[]> {
    const due: string[] = [];
    for (const [name, source] of scheduled) {
      const every = source.reconcile!.every!;
      const last = (await lastRunTimes.run(db, { source: name })).rows[0];
      const since = last ? Date.now() - (last.status === 'failed' ? last.updated_at.getTime() : last.started_at.getTime()) : Infinity;
      if (since >= (last?.status === 'failed' ? every / 10 : every)) due.push(name);
    }
    return due;
  }

  async function runDue(db: Queryable): Promise<void> {
    for (const name of await dueSources(db)) {
      if (stopped) return;
      const cfg = ctx.config.sources[name]!.reconcile!;
      const now = Date.now();
      await runReconcile(
        { db: ctx.db, config: ctx.config, logger: log },
        { source: name, window: { start: new Date(now - cfg.lookback), end: new Date(now) }, apply: cfg.apply, trigger: 'schedule' },
      ).catch((err: unknown) => log.warn({ err, source: name }, 'scheduled reconcile failed; it is retried later'));
    }
  }

  async function tick(): Promise<void> {
    // The embedded store is one process's alone, and its one connection could not serve a run while
    // a transaction holds it: no lock needed, none taken.
    if (ctx.db.kind === 'pglite') return runDue(ctx.db);
    // On Postgres the lock's transaction holds one pooled connection for the whole run; the run's own
    // statements use the others.
    await ctx.db.transaction(async (tx) => {
      if ((await tryAdvisoryLock.run(tx, { key: SCHEDULER_LOCK })).rows[0]!.locked) await runDue(tx);
    });
  }

  function schedule(delay: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      current = tick()
        .catch((err: unknown) => log.warn({ err }, 'reconcile scheduler tick failed'))
        .finally(() => schedule(options.tickMs ?? TICK_MS));
    }, delay);
    timer.unref();
  }

  return {
    name: 'reconcile-scheduler',
    async start() {
      if (scheduled.length > 0) schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
