import { z } from 'zod';
import { createOperator, listOperators, revoke } from '../auth/operators.js';
import { operatorRoles } from '../auth/roles.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { operatorAnswer } from './tenant-answers.js';

const createBody = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/, 'a name is letters, digits and . _ @ -, up to 100, starting with a letter or digit'),
    role: z.enum(operatorRoles),
  })
  .strict();
const listQuery = z.object({ revoked: z.enum(['true', 'false']).default('false') }).strict();
const operatorParams = z.object({ id: z.string().min(1).max(100) });

/** Operator tokens: made, listed and revoked by the admin token only. */
export function operatorRoutes(routes: ApiRoutes, ctx: Context): void {
  const tag = 'operators';
  routes.add(
    {
      method: 'POST',
      url: '/operators',
      tag,
      summary: 'Make a named operator token with a role; the token is in this answer only',
      response: operatorAnswer.extend({ token: z.string() }),
      permission: 'admin',
      body: createBody,
      status: 201,
    },
    async ({ body }) => {
      const { operator, token } = await createOperator(ctx.db, body.name, body.role);
      return { ...operator, token };
    },
  );
  routes.add(
    {
      method: 'GET',
      url: '/operators',
      tag,
      summary: 'List operators (revoked ones with revoked=true)',
      response: z.object({ items: z.array(operatorAnswer) }),
      permission: 'admin',
      query: listQuery,
    },
    async ({ query }) => ({
      items: await listOperators(ctx.db, query.revoked === 'true'),
    }),
  );
  routes.add(
    {
      method: 'POST',
      url: '/operators/:id/revoke',
      tag,
      summary: 'Revoke an operator (by id or name) and end its sessions',
      response: operatorAnswer,
      permission: 'admin',
      params: operatorParams,
    },
    async ({ params }) => revoke(ctx.db, params.id),
  );
}
