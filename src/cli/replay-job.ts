import { setTimeout as sleep } from 'node:timers/promises';
import { TekilError } from '../errors.js';
import type { JobRow } from '../store/sql/inbox/jobs.js';
import { callApi, type ApiTarget } from './api-client.js';
import { handleInterrupt, Progress } from './progress.js';

/** The job as the admin API sends it (times as text). */
export type JobAnswer = Omit<JobRow, 'created_at' | 'heartbeat_at' | 'finished_at'> & { created_at: string; heartbeat_at: string; finished_at: string | null };

const POLL_MS = 250;

/**
 * `tekil inbox replay-bulk`: the replay runs as a bulk job inside tekil (POST /api/v1/jobs), the same
 * one the panel starts, so it survives this process and reports its progress; the CLI follows it.
 * Ctrl-C cancels the job at its next batch (what it did stays done) and says how to go on.
 */
export async function replayInJob(target: ApiTarget, filter: Record<string, string>, force: boolean, json: boolean): Promise<JobAnswer> {
  let job = await callApi<JobAnswer>(target, 'POST', '/api/v1/jobs', { kind: 'inbox.replay', filter, force });
  const progress = new Progress('replay-bulk', { quiet: json });
  let interrupted = false;
  const release = handleInterrupt(() => {
    interrupted = true;
  });
  try {
    let cancelAsked = false;
    while (job.status === 'running') {
      progress.update({ done: job.processed, total: job.total, at: job.id });
      if (interrupted && !cancelAsked) {
        cancelAsked = true;
        job = await callApi<JobAnswer>(target, 'POST', `/api/v1/jobs/${encodeURIComponent(job.id)}/cancel`);
        continue;
      }
      await sleep(POLL_MS);
      job = await callApi<JobAnswer>(target, 'GET', `/api/v1/jobs/${encodeURIComponent(job.id)}`);
    }
  } finally {
    release();
    progress.clear();
  }
  if (job.status === 'failed')
    throw new TekilError('INTERNAL', `replay job ${job.id} failed after ${job.processed} of ${job.total}: ${job.error ?? 'no reason recorded'}`);
  if (interrupted && job.status === 'cancelled') {
    process.stderr.write(
      `interrupted: job ${job.id} cancelled after ${job.processed} of ${job.total} (${job.changed} queued again; what it did stays done).\n` +
        `to resume, run the same command again: the deliveries already queued no longer match the filter${force ? ' (with --force on done deliveries, narrow it with --since/--until)' : ''}.\n`,
    );
    process.exit(130);
  }
  return job;
}
