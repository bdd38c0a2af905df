import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import { TekilError } from '../errors.js';
import { type AuditRow, writeAuditRow } from './write.js';
import type { Context } from '../service.js';
import { addressSignInKey, signInKeys, SignInLimit, tokenSignInKey } from './sign-in-limit.js';
import { summarize } from './summary.js';
import { RefusalCounts } from './refusals.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Mutating routes that are an application's traffic, not an operator's action: publishing a message
 * (the message itself is the lasting record, with its idempotency key). An audit row per publish would
 * add a commit to the publishing hot path. A refused credential on them is still audited.
 */
export const UNAUDITED_ROUTES: ReadonlySet<string> = new Set(['POST /api/v1/messages']);
const SIGN_IN_ROUTE = '/api/v1/session';

declare module 'fastify' {
  interface FastifyRequest {
    /** What a change did, in counts, for its audit row (an erasure's), set by its route; never the data itself. */
    auditCounts?: Record<string, number>;
    /** The token a sign-in presented (POST /session), for the sign-in limit; never stored. */
    presentedToken?: string;
  }
}

function bearerOf(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
}

/** A short, one-way name for a refused token: enough to tell repeated attempts apart, useless to sign in. */
function fingerprint(token: string): string {
  return `sha256:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
}

function errorCodeOf(payload: unknown): string | null {
  if (typeof payload !== 'string') return null;
  try {
    const code = (JSON.parse(payload) as { error?: unknown }).error;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

/** The id a change answered with (a created endpoint, operator, job, message), for the target. */
function answeredId(payload: unknown): string | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return undefined;
  try {
    const id = (JSON.parse(payload) as { id?: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  } catch {
    return undefined;
  }
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0);
}

function targetOf(req: FastifyRequest, payload: unknown, status: number, token: string | undefined): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  if (!isEmpty(req.params)) target.params = summarize(req.params);
  if (!isEmpty(req.query)) target.query = summarize(req.query);
  if (!isEmpty(req.body)) target.body = summarize(req.body);
  const id = status < 400 ? answeredId(payload) : undefined;
  if (id !== undefined) target.id = id;
  if ((status === 401 || status === 429) && token !== undefined) target.token = fingerprint(token);
  // What the change did, in counts (an erasure's): set by the route, never the data it touched.
  if (status < 400 && req.auditCounts) target.counts = req.auditCounts;
  return target;
}

/**
 * The audit trail's hooks on the admin API (docs/audit.md). Every request that may change something
 * (any method but GET, HEAD and OPTIONS) leaves one row in `audit_events` with who, from where, which
 * route and input, and the outcome; refused credentials are counted, one row per key and minute with
 * its count (RefusalCounts).
 *
 * The row is written in `onSend`: after the route's own transaction has committed, before the answer
 * leaves. One transaction shared with every route's own would need each route to run inside it; instead
 * the client is not told of a change whose row was not attempted. If the store fails between the two,
 * the change stands (answering an error would invite a second replay), and the row is written to the
 * log at error level, whole, with `tekil_audit_write_failures_total` counting it, so nothing is lost
 * silently.
 *
 * Refused credentials are also counted by a sign-in limit (per address, an IPv6 /64 as one, and per token
 * prefix). Past it, an address's requests presenting a token are answered 429 SIGN_IN_LIMITED, and audited,
 * before any token is checked; a limited prefix only turns a wrong token's 401 into a 429.
 */
export function registerAuditTrail(app: FastifyInstance, ctx: Context): void {
  const { sign_in } = ctx.config.audit;
  const limit = new SignInLimit({ failures: sign_in.failures, windowMs: sign_in.window });
  const failures =
    (ctx.metrics.getSingleMetric('tekil_audit_write_failures_total') as Counter | undefined) ??
    new Counter({
      name: 'tekil_audit_write_failures_total',
      help: 'Audit rows the store failed to take (each is logged whole at error level).',
      registers: [ctx.metrics],
    });

  const refusals = new RefusalCounts(ctx, failures);
  app.addHook('onClose', async () => refusals.stop());

  const limited = (wait: number) =>
    new TekilError('SIGN_IN_LIMITED', `too many refused sign-ins; retry in ${wait} s`, { hint: 'wait for Retry-After, then use a valid token' });

  // Before authentication: a limited address is refused without checking its token. Not a limited
  // prefix: a token that matches is never refused for the wrong ones that share its first characters.
  app.addHook('onRequest', async (req, reply) => {
    if (bearerOf(req) === undefined && !(req.method === 'POST' && req.routeOptions.url === SIGN_IN_ROUTE)) return;
    const wait = limit.retryAfter([addressSignInKey(req.ip)]);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      throw limited(wait);
    }
  });
  // The sign-in's token is in its body, read only by now.
  app.addHook('preHandler', async (req) => {
    if (req.method !== 'POST' || req.routeOptions.url !== SIGN_IN_ROUTE) return;
    const token = (req.body as { token?: unknown } | undefined)?.token;
    if (typeof token === 'string') req.presentedToken = token;
  });

  app.addHook('onSend', async (req, reply, payloadSent) => {
    let payload = payloadSent;
    let status = reply.statusCode;
    const token = req.presentedToken ?? bearerOf(req);
    if (status === 401 && token !== undefined) {
      // A wrong token whose prefix is past the limit is answered 429, so the guessing shows in the trail.
      const prefix = tokenSignInKey(token);
      const wait = prefix === undefined ? 0 : limit.retryAfter([prefix]);
      limit.recordFailure(signInKeys(req.ip, token));
      if (wait > 0) {
        status = 429;
        reply.code(status).header('retry-after', String(wait));
        payload = JSON.stringify(limited(wait).toJSON());
      }
    }
    const refusedCredential = status === 401 || status === 429;
    if (!refusedCredential && (READS.has(req.method) || UNAUDITED_ROUTES.has(`${req.method} ${req.routeOptions.url}`))) return payload;
    const row: AuditRow = {
      actor: req.caller?.name ?? 'unknown',
      role: req.caller?.role ?? null,
      address: req.ip ?? null,
      method: req.method,
      route: req.routeOptions.url ?? req.url,
      target: targetOf(req, payload, status, token),
      status,
      errorCode: status >= 400 ? errorCodeOf(payload) : null,
      tenantId: req.caller?.tenantId ?? null,
    };
    if (!refusedCredential) {
      if (!(await writeAuditRow(ctx.db, req.log, row))) failures.inc();
      return payload;
    }
    // A refusal is counted into one row per key and minute (a flood must not cost a row a request).
    const stored = { ...row, target: JSON.stringify(row.target) };
    try {
      await refusals.record(stored, token === undefined ? undefined : fingerprint(token));
    } catch (err) {
      failures.inc();
      req.log.error({ err, audit: stored }, 'audit row not written: the store refused it; the row is in this log line');
    }
    return payload;
  });
}
