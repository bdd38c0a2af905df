import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isTekilError, TekilError } from '../errors.js';
import type { InboxFilter } from '../inbox/filter.js';
import { countInboxMatching, listInbox } from '../inbox/list.js';
import { discardDelivery, replayDelivery } from '../inbox/replay.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import { finishJob, insertJob, recordProgress, requestCancel, selectJob, selectJobs, type JobRow } from '../store/sql/dashboard/jobs.js';

export type JobKind = JobRow['kind'];
export type Job = JobRow;

/** Deliveries per batch: progress is written, and a cancel noticed, between batches. */
export const JOB_BATCH = 100;

export interface StartJob {
  kind: JobKind;
  filter: InboxFilter;
  /** Replay done deliveries too (replay only). */
  force: boolean;
  createdBy: string;
}

/**
 * Runs bulk replays and discards in the background of the api role. Each delivery is replayed or
 * discarded with the same statement as a single one from the API, so a bulk job can never do what one
 * call would refuse; a delivery that changed meanwhile (a conflict) is counted as skipped.
 */
export class JobRunner {
  private readonly running = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly batchSize = JOB_BATCH,
  ) {}

  /** How many deliveries a job with this filter would touch now. */
  dryRun(filter: InboxFilter): Promise<number> {
    return countInboxMatching(this.db, filter);
  }

  async start(input: StartJob): Promise<Job> {
    if (this.stopping) throw new TekilError('SHUTTING_DOWN');
    const total = await countInboxMatching(this.db, input.filter);
    const id = `job_${randomBytes(8).toString('hex')}`;
    const job = await insertJob(this.db, { id, kind: input.kind, filter: { ...input.filter, force: input.force }, total, createdBy: input.createdBy });
    const run = this.run(id, input).finally(() => this.running.delete(run));
    this.running.add(run);
    return job;
  }

  async cancel(id: string): Promise<Job> {
    const job = await requestCancel(this.db, id);
    if (!job) throw new TekilError('NOT_FOUND', `no job ${id}`);
    return job;
  }

  async get(id: string): Promise<Job> {
    const job = await selectJob(this.db, id);
    if (!job) throw new TekilError('NOT_FOUND', `no job ${id}`);
    return job;
  }

  recent(limit: number): Promise<Job[]> {
    return selectJobs(this.db, limit);
  }

  /** Stops at the next batch boundary: running jobs end as cancelled, their progress kept. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.running]);
  }

  private async run(id: string, input: StartJob): Promise<void> {
    try {
      let cursor: string | undefined;
      do {
        const page = await listInbox(this.db, input.filter, { limit: this.batchSize, cursor });
        let changed = 0;
        let skipped = 0;
        for (const item of page.items) {
          try {
            if (input.kind === 'inbox.replay') await replayDelivery(this.db, item.source, item.event_id, input.force);
            else await discardDelivery(this.db, item.source, item.event_id);
            changed++;
          } catch (err) {
            if (!isTekilError(err, 'CONFLICT')) throw err;
            skipped++;
          }
          // A store that answers in microtasks (PGlite in-process) would let a job hold the whole
          // process, HTTP included, until it ends: a turn of the event loop between deliveries.
          await nextTurn();
        }
        const cancelRequested = await recordProgress(this.db, id, { processed: page.items.length, changed, skipped });
        if (cancelRequested || this.stopping) {
          await finishJob(this.db, id, 'cancelled', null);
          return;
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      await finishJob(this.db, id, 'done', null);
    } catch (err) {
      this.logger.error({ err, job: id }, 'bulk job failed');
      // A coded error's message is the operator's; anything else stays in the log (it may quote the store).
      await finishJob(this.db, id, 'failed', isTekilError(err) ? err.message : 'internal error (see the log)').catch((e: unknown) => this.logger.error({ err: e, job: id }, 'cannot record the failed job'));
    }
  }
}
