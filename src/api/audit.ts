import { z } from 'zod';
import { listAudit, MAX_AUDIT_PAGE, type AuditFilter } from '../audit/list.js';
import { auditExportTable } from './audit-export.js';
import type { Context } from '../service.js';
import { send } from './exports.js';
import type { ApiRoutes } from './route-spec.js';
import { someObject } from './answers.js';

const text = z
  .string()
  .min(1)
  .max(1024)
  .refine((s) => !/\p{Cs}/u.test(s), 'must be text without unpaired surrogates');
const time = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const filterFields = {
  actor: text.optional(),
  route: text.optional(),
  method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE', 'GET']).optional(),
  since: time.optional(),
  until: time.optional(),
  outcome: z.enum(['ok', 'refused']).optional(),
};
const listQuery = z
  .object({ ...filterFields, cursor: z.string().min(1).max(4096).optional(), limit: z.coerce.number().int().min(1).max(MAX_AUDIT_PAGE).default(100) })
  .strict();
const exportQuery = z.object(filterFields).strict();

function toFilter(q: z.infer<typeof exportQuery>): AuditFilter {
  return { actor: q.actor, route: q.route, method: q.method, since: q.since, until: q.until, outcome: q.outcome };
}

/**
 * The audit trail, read-only: no route changes or deletes a row (docs/audit.md). Readable by operators
 * and the admin token, not by viewers: it names operators and the addresses they came from.
 */
export function auditRoutes(routes: ApiRoutes, ctx: Context): void {
  const tag = 'audit';
  routes.add(
    {
      method: 'GET',
      url: '/audit',
      tag,
      summary: 'The audit trail, newest first: every change asked of this API, and refused sign-ins',
      response: z.object({ items: z.array(someObject), next_cursor: z.string().nullable() }),
      permission: 'operate',
      query: listQuery,
    },
    async ({ query }) => listAudit(ctx.db, toFilter(query), query.limit, query.cursor),
  );
  const formats = { csv: 'text/csv; charset=utf-8', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' } as const;
  for (const format of ['csv', 'xlsx'] as const) {
    routes.add(
      {
        method: 'GET',
        url: `/audit/export.${format}`,
        tag,
        summary: `Export the audit rows matching the filter as ${format.toUpperCase()}`,
        permission: 'operate',
        query: exportQuery,
        produces: formats[format],
      },
      async ({ query }, _req, reply) => send(reply, ctx, auditExportTable(ctx.db, toFilter(query)), format, 'tekil-audit'),
    );
  }
}
