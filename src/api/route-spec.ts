import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { parseInput } from '../validation.js';
import type { Caller, Permission } from '../auth/roles.js';
import type { Session } from '../auth/sessions.js';
import type { Scope } from '../scope.js';
import { scopeOf } from '../tenants/scope.js';

// Who may call what is auth's to say (src/auth/roles.ts); a route spec only names the permission.
export type { Permission } from '../auth/roles.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * One admin API route as data: its address, who may call it, and the zod schemas its input is
 * validated with. The same specs register the routes and generate the OpenAPI document, so the
 * document cannot describe input the route does not check.
 */
export interface RouteSpec<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /** Fastify's form, under /api/v1: `/inbox/:source/:event_id`. */
  url: string;
  /** Groups routes in the reference (inbox, outbox, operators, …). */
  tag: string;
  summary: string;
  permission: Permission;
  /**
   * Open to a tenant's caller (a tenant token or a portal session): the handler reads and writes in
   * the request's `scope` (src/tenants/scope.ts). Other routes do not exist for such a caller.
   */
  tenant?: true;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * What a success answers (JSON), as the zod schema of its output: the OpenAPI document, the browser's
   * types and the typed client (`tekil/client`) read it. Required for every JSON route (a test walks them).
   * The handler's return value is typed by its output side, so the schema cannot drift from the rows
   * the handler answers; the document shows its input side, the JSON on the wire (a `jsonTime` is a
   * Date in the handler and an ISO string on the wire: src/api/answers.ts).
   */
  response?: R;
  /** The status of a success (200 unless told). */
  status?: number;
  /** The media type of a success when it is not JSON (CSV, XLSX, PDF, event streams). */
  produces?: string;
}

export interface RouteInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params: z.infer<P>;
  query: z.infer<Q>;
  body: z.infer<B>;
  /** The tenants the caller may read and change, made once per request: one for a tenant's caller, else every one. */
  scope: Scope;
}

type Handler<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType> = (
  input: RouteInput<P, Q, B>,
  req: FastifyRequest,
  reply: FastifyReply,
  // A route that answers a file or a stream sends it on the reply and returns the reply.
) => Promise<z.output<R> | FastifyReply>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every admin API route by `ApiRoutes.add`; read by the authentication hook. */
    permission?: Permission;
    /** The route is open to tenant callers (RouteSpec.tenant). */
    tenant?: boolean;
  }
  interface FastifyRequest {
    /** Who is calling, set by the admin API's authentication hook. */
    caller?: Caller;
    /** The browser session the caller came with, when it came with the cookie. */
    session?: Session;
  }
}

/** Every route the admin API registers, in order, for the OpenAPI document and the role tests. */
export class ApiRoutes {
  readonly specs: RouteSpec[] = [];

  constructor(private readonly app?: FastifyInstance) {}

  /** Runs `fn` when the app closes (a route module's background work stops with it). */
  onClose(fn: () => Promise<void>): void {
    this.app?.addHook('onClose', fn);
  }

  /** Runs `fn` before the server stops accepting: long-lived answers (event streams) end here. */
  onPreClose(fn: () => Promise<void>): void {
    this.app?.addHook('preClose', fn);
  }

  /** Registers a route (when bound to an app) and records its spec. Absent input parses as `{}`. */
  add<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(spec: RouteSpec<P, Q, B, R>, handler: Handler<P, Q, B, R>): void {
    this.specs.push(spec as unknown as RouteSpec);
    if (!this.app) return;
    this.app.route({
      method: spec.method,
      url: spec.url,
      config: { permission: spec.permission, tenant: spec.tenant === true },
      handler: async (req, reply) => {
        const input = {
          params: spec.params ? parseInput(spec.params, req.params ?? {}) : undefined,
          query: spec.query ? parseInput(spec.query, req.query ?? {}) : undefined,
          body: spec.body ? parseInput(spec.body, req.body ?? {}) : undefined,
          scope: scopeOf(req.caller),
        } as RouteInput<P, Q, B>;
        const result = await handler(input, req, reply);
        if (spec.status !== undefined && !reply.sent) reply.code(spec.status);
        return result;
      },
    });
  }
}
