import { z } from 'zod';
import { listIncidentPage } from '../alerts/list.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { incidentAnswer } from './tenant-answers.js';

const incidentsQuery = z
  .object({
    state: z.enum(['open', 'closed']).optional(),
    before: z
      .string()
      .regex(/^\d{1,18}$/, 'expected an incident id')
      .optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();

/** Alerts' incidents (docs/alerts.md), newest first; `before` pages by id. */
export function incidentRoutes(routes: ApiRoutes, ctx: Context): void {
  routes.add(
    {
      method: 'GET',
      url: '/incidents',
      tag: 'alerts',
      summary: 'List incidents (open and closed), newest first',
      response: z.object({ incidents: z.array(incidentAnswer), next_before: z.string().nullable() }),
      permission: 'view',
      query: incidentsQuery,
    },
    async ({ query: q }) => {
      const incidents = await listIncidentPage(ctx.db, { state: q.state ?? null, before: q.before ?? null, limit: q.limit });
      return { incidents, next_before: incidents.length === q.limit ? incidents[incidents.length - 1]!.id : null };
    },
  );
}
