import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { findingKinds } from '../store/sql/reconcile/findings.js';
import { listFindingRows, listRunRows } from '../reconcile/queries.js';
import { reportOf, runReconcile } from '../reconcile/run.js';
import type { Context } from '../service.js';
import { parseInput } from '../validation.js';

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
export async function reconcileRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const { db } = ctx;

  app.get('/reconcile/runs', async (req) => {
    const q = parseInput(runsQuery, req.query ?? {});
    const runs = await listRunRows(db, { source: q.source ?? null, before: q.before ?? null, limit: q.limit });
    return { runs, next_before: runs.length === q.limit ? runs[runs.length - 1]!.id : null };
  });

  app.get('/reconcile/runs/:id', async (req) => {
    const p = parseInput(z.object({ id }).strict(), req.params ?? {});
    return reportOf(db, p.id);
  });

  app.get('/reconcile/findings', async (req) => {
    const q = parseInput(findingsQuery, req.query ?? {});
    const findings = await listFindingRows(db, { source: q.source ?? null, kind: q.kind ?? null, runId: q.run ?? null, before: q.before ?? null, limit: q.limit });
    return { findings, next_before: findings.length === q.limit ? findings[findings.length - 1]!.id : null };
  });

  // Answers when the run has finished: a run over a long window takes as long as the provider's paging.
  app.post('/reconcile/runs', async (req) => {
    const body = parseInput(startBody, req.body ?? {});
    return runReconcile(
      { db, config: ctx.config, logger: ctx.logger },
      { source: body.source, window: { start: body.since, end: body.until ?? null }, apply: body.apply, trigger: 'api' },
    );
  });
}
