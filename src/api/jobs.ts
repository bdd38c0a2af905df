import { z } from 'zod';
import { JobRunner } from '../inbox/jobs.js';
import type { Context } from '../service.js';
import { inboxFilterQuery, toFilter } from './inbox.js';
import type { ApiRoutes } from './route-spec.js';
import { someObject } from './answers.js';

const jobKinds = ['inbox.replay', 'inbox.discard'] as const;
const startBody = z
  .object({
    kind: z.enum(jobKinds),
    filter: inboxFilterQuery.default({}),
    /** Replay done deliveries too (inbox.replay only). */
    force: z.boolean().default(false),
  })
  .strict();
const dryRunBody = z.object({ filter: inboxFilterQuery.default({}) }).strict();
const jobParams = z.object({ id: z.string().min(1).max(64) });

/** Bulk replay and discard by filter, as background jobs with a dry-run count, progress and cancel. */
export function jobRoutes(routes: ApiRoutes, ctx: Context): void {
  const runner = new JobRunner(ctx.db, ctx.logger);
  routes.onClose(() => runner.stop());
  const tag = 'jobs';

  routes.add(
    {
      method: 'POST',
      url: '/jobs/dry-run',
      tag,
      summary: 'How many inbound deliveries a filter matches now (what a job would touch)',
      response: z.object({ matching: z.number() }),
      permission: 'view',
      body: dryRunBody,
    },
    async ({ body }) => ({ matching: await runner.dryRun(toFilter(body.filter)) }),
  );
  routes.add(
    {
      method: 'POST',
      url: '/jobs',
      tag,
      summary: 'Start a bulk replay or discard of the inbound deliveries matching a filter',
      response: someObject,
      permission: 'operate',
      body: startBody,
      status: 202,
    },
    async ({ body }, req) => runner.start({ kind: body.kind, filter: toFilter(body.filter), force: body.force, createdBy: req.caller?.name ?? 'unknown' }),
  );
  routes.add(
    {
      method: 'GET',
      url: '/jobs',
      tag,
      summary: 'The latest 50 jobs, newest first',
      response: z.object({ items: z.array(someObject) }),
      permission: 'view',
    },
    async () => ({
      items: await runner.recent(50),
    }),
  );
  routes.add(
    { method: 'GET', url: '/jobs/:id', tag, summary: "A job's status and progress", response: someObject, permission: 'view', params: jobParams },
    async ({ params }) => runner.get(params.id),
  );
  routes.add(
    {
      method: 'POST',
      url: '/jobs/:id/cancel',
      tag,
      summary: 'Cancel a job at its next batch; what it did stays done',
      response: someObject,
      permission: 'operate',
      params: jobParams,
    },
    async ({ params }) => runner.cancel(params.id),
  );
}
