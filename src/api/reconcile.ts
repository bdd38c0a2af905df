import { z } from 'zod';
import { findingKinds } from '../store/sql/reconcile/findings.js';
import { listFindingRows, listRunRows } from '../reconcile/queries.js';
import { reportOf, runReconcile } from '../reconcile/run.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { someObject } from './answers.js';

const text = z
  .string()
  .min(1)
  .max(1024)
  .refine((s) => !s.includes('\u0000') && !/\p{Cs}/u.test(s), 'must be text without NUL bytes or unpaired surrogates');
const id = z.string().regex(/^\d{1,18}$/, 'expected a run or finding id');
const time = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .refine((d) => d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999, 'must fall in the years 1 to 9999 (UTC)');

const runsQuery = z.object({ source: text.optional(), before: id.optional(), limit: z.coerce.number().int().min(1).max(500).default(50) }).strict();
const findingsQuery = z
  .object({
    source: text.optional(),
    kind: z.enum(findingKinds as [string, ...string[]]).optional(),
    run: id.optional(),
    before: id.optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();
const startBody = z.object({ source: text, since: time, until: time.optional(), apply: z.boolean().default(false) }).strict();

/**
 * Reconcile's admin API: stored runs and findings (`before` pages by id, newest first), one run's
 * report, and a run started in this process (the way to reconcile an embedded store while tekil runs).
 */
export function reconcileRoutes(routes: ApiRoutes, ctx: Context): void {
  const { db } = ctx;
  const tag = 'reconcile';

  routes.add(
    {
      method: 'GET',
      url: '/reconcile/runs',
      tag,
      summary: 'List reconcile runs, newest first',
      response: z.object({ runs: z.array(someObject), next_before: z.union([z.string(), z.number()]).nullable() }),
      permission: 'view',
      query: runsQuery,
    },
    async ({ query: q }) => {
      const runs = await listRunRows(db, { source: q.source ?? null, before: q.before ?? null, limit: q.limit });
      return { runs, next_before: runs.length === q.limit ? runs[runs.length - 1]!.id : null };
    },
  );

  routes.add(
    {
      method: 'GET',
      url: '/reconcile/runs/:id',
      tag,
      summary: "Show one run's report: counts per kind and its findings",
      response: someObject,
      permission: 'view',
      params: z.object({ id }).strict(),
    },
    async ({ params: p }) => reportOf(db, p.id),
  );

  routes.add(
    {
      method: 'GET',
      url: '/reconcile/findings',
      tag,
      summary: 'List findings by kind, source and run',
      response: z.object({ findings: z.array(someObject), next_before: z.union([z.string(), z.number()]).nullable() }),
      permission: 'view',
      query: findingsQuery,
    },
    async ({ query: q }) => {
      const findings = await listFindingRows(db, {
        source: q.source ?? null,
        kind: q.kind ?? null,
        runId: q.run ?? null,
        before: q.before ?? null,
        limit: q.limit,
      });
      return { findings, next_before: findings.length === q.limit ? findings[findings.length - 1]!.id : null };
    },
  );

  // Answers when the run has finished: a run over a long window takes as long as the provider's paging.
  routes.add(
    {
      method: 'POST',
      url: '/reconcile/runs',
      tag,
      summary: 'Run reconcile for a source now (with apply: record what is missing)',
      response: someObject,
      permission: 'operate',
      body: startBody,
    },
    async ({ body }) =>
      runReconcile(
        { db, config: ctx.config, logger: ctx.logger },
        { source: body.source, window: { start: body.since, end: body.until ?? null }, apply: body.apply, trigger: 'api' },
      ),
  );
}
