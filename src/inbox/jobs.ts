import { randomBytes } from 'node:crypto';
import { isTekilError, TekilError } from '../errors.js';
import { applyToMatching, BULK_BATCH } from './bulk.js';
import type { InboxFilter } from './filter.js';
import { countInboxMatching } from './list.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import { finishJob, insertJob, recordProgress, requestCancel, selectJob, selectJobs, type JobRow } from '../store/sql/inbox/jobs.js';

export type JobKind = JobRow['kind'];
export type Job = JobRow;

export interface StartJob {
  kind: JobKind;
  filter: InboxFilter;
  /** Replay done deliveries too (replay only). */
  force: boolean;
  createdBy: string;
}

/**
 * Runs bulk replays and discards in the background of the api role, through the one bulk path
 * (src/inbox/bulk.ts): a delivery that changed meanwhile, or whose body retention trimmed, is counted as
 * skipped.
 */
export class JobRunner {
  private readonly running = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly batchSize = BULK_BATCH,
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
      const { stopped } = await applyToMatching(this.db, input.kind, input.filter, input.force, {
        batchSize: this.batchSize,
        afterBatch: async (batch) => (await recordProgress(this.db, id, batch)) || this.stopping,
      });
      await finishJob(this.db, id, stopped ? 'cancelled' : 'done', null);
    } catch (err) {
      this.logger.error({ err, job: id }, 'bulk job failed');
      // A coded error's message is the operator's; anything else stays in the log (it may quote the store).
      await finishJob(this.db, id, 'failed', isTekilError(err) ? err.message : 'internal error (see the log)').catch((e: unknown) =>
        this.logger.error({ err: e, job: id }, 'cannot record the failed job'),
      );
    }
  }
}
