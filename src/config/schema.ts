import { z } from 'zod';
import { durationMs, retryWaitMs, sizeBytes } from './units.js';
import { sourceSchema } from './source.js';
import { sendingSchema } from './sending.js';
import { retentionSweepSchema } from './retention.js';
import { alertsSchema } from './alerts.js';
import { telemetrySchema } from './telemetry.js';
import { auditSchema } from './audit.js';
import { portalSchema } from './portal.js';
import { tenantsSchema } from './tenants.js';
import { proxyAddress } from './networks.js';

export const serverSchema = z
  .object({
    host: z.string().default('0.0.0.0'),
    port: z.number().int().min(0).max(65535).default(8787),
    /**
     * When set, /metrics is served on this port only (same host), not on the public port that
     * providers post webhooks to; 0 picks a free port. Unset: /metrics on the main port.
     */
    metrics_port: z.number().int().min(0).max(65535).optional(),
    body_limit: sizeBytes.default(1024 * 1024),
    /** Longest a client may take to send a whole request, body included (0 disables; do not). */
    request_timeout: durationMs.default(30_000),
    /** Longest a client may take to send the request's headers (0 disables; do not). */
    headers_timeout: durationMs.default(5_000),
    /** How long an idle keep-alive connection stays open; above a load balancer's idle timeout. */
    keep_alive_timeout: durationMs.default(72_000),
    /** Open connections at most; past it the idlest is closed, or (all busy) the new one is answered 503 with Retry-After. */
    max_connections: z.number().int().positive().default(500),
    /** Open connections at most from one client address (an IPv6 /64 counts as one). Unset: a tenth of max_connections. */
    max_connections_per_address: z.number().int().positive().optional(),
    /**
     * The reverse proxies (addresses or CIDR networks) whose X-Forwarded-Proto, -Host and -For are
     * believed: a request through one is https when the proxy says so (the session cookie is then
     * Secure, portal links say https) and is audited and limited by its client's address. Empty:
     * the headers are ignored, since any client could send them.
     */
    trust_proxy: z.array(proxyAddress).max(50).default([]),
  })
  .strict()
  .superRefine((s, ctx) => {
    // Node refuses a headers timeout longer than the request timeout (the latter covers the headers too).
    if (s.request_timeout > 0 && s.headers_timeout > s.request_timeout) {
      ctx.addIssue({ code: 'custom', path: ['headers_timeout'], message: 'headers_timeout must not be longer than request_timeout' });
    }
  });

export const receiverSchema = z
  .object({
    /** Most rows one group-commit INSERT carries. */
    batch_max_rows: z.number().int().positive().default(500),
    /** Most body bytes one group-commit INSERT carries. */
    batch_max_bytes: sizeBytes.default(8 * 1024 * 1024),
    /** Rows that may wait for a flush before new requests get 503. */
    queue_max_rows: z.number().int().positive().default(10_000),
    /** Body bytes that may wait for a flush before new requests get 503 (bounds memory). */
    queue_max_bytes: sizeBytes.default(64 * 1024 * 1024),
    /**
     * Webhook body bytes one process holds at once, being received or waiting for their commit;
     * past it new webhooks get 503 OVERLOADED (bodies are read before their signature is checked).
     */
    in_flight_max_bytes: sizeBytes.default(64 * 1024 * 1024),
    /**
     * Of those, the bytes one client address may hold (an IPv6 /64 counts as one; behind a trusted
     * proxy, the forwarded client's). Unset: a quarter of in_flight_max_bytes, at least server.body_limit.
     */
    in_flight_max_bytes_per_address: sizeBytes.optional(),
    /**
     * Bytes a second a webhook body must keep arriving at, checked every body_rate_window; a body
     * slower than this is cut with 408 (it holds memory nobody else can use). 0 turns the check off.
     */
    body_min_rate: z.union([z.literal(0), sizeBytes]).default(1024),
    body_rate_window: durationMs.pipe(z.number().min(100, 'expected at least 100ms')).default(5_000),
    /**
     * Longest a webhook waits for its commit, from its body being received (the upload is bounded by
     * server.request_timeout instead). Providers give up after about 10 s and retry; past this
     * the request is answered 503 with Retry-After (the row may still commit: the retry is then a duplicate).
     */
    ack_deadline: durationMs.default(8_000),
    /** Seconds sent in Retry-After with a 503. */
    retry_after: z.number().int().positive().default(5),
    /**
     * Group-commit INSERTs in flight at once. Unset: 1 on Postgres (keeps the server busy while the
     * next batch gathers), 2 on the embedded store (see receiverInFlight).
     */
    max_in_flight: z.number().int().positive().max(16).optional(),
  })
  .strict();

export const storeSchema = z
  .object({
    /** Postgres connection string; DATABASE_URL wins when set. Empty means the embedded store. */
    url: z.string().optional(),
    data_dir: z.string().optional(),
    pool_size: z.number().int().positive().default(10),
    /** Named prepared statements for the worker's hot queries; off behind a pooler that cannot keep them. */
    prepared_statements: z.boolean().default(true),
    /** Sends `jit = off` as a startup option; off behind a pooler that rejects startup options. */
    disable_jit: z.boolean().default(true),
  })
  .strict();

export const workerSchema = z
  .object({
    /** Deliveries claimed (and committed) together; per delivery, larger batches cost fewer statements and commits. */
    batch_size: z.number().int().positive().default(500),
    /** Claim loops run side by side, each with its own connection. */
    concurrency: z.number().int().positive().default(2),
    /** How long a claim holds a delivery before another worker may take it back. */
    lease: durationMs.default(60_000),
    /** Polling fallback when no notification arrives. */
    poll_interval: durationMs.default(1_000),
    /** Forwarded requests in flight at once within one batch. */
    forward_concurrency: z.number().int().positive().default(16),
    /**
     * How long an in-process handler may run before its attempt fails as transient (retried later)
     * and the batch moves on without it. Default: 20s, or half the lease when that is shorter. A batch
     * starts handlers until half its lease has passed, so a handler must end within the other half.
     */
    handler_timeout: durationMs.optional(),
    /** Longest Retry-After a forward target's 429 is honoured for; a longer one is cut to this. */
    retry_after_max: retryWaitMs.default(3_600_000),
  })
  .strict()
  .superRefine((w, ctx) => {
    if (w.handler_timeout !== undefined && (w.handler_timeout <= 0 || w.handler_timeout > w.lease / 2)) {
      ctx.addIssue({
        code: 'custom',
        path: ['handler_timeout'],
        message: `must be above 0 and at most half the lease (${w.lease / 2} ms): a batch starts handlers until half its lease has passed`,
      });
    }
  })
  .transform((w) => ({ ...w, handler_timeout: w.handler_timeout ?? Math.min(20_000, Math.floor(w.lease / 2)) }));

export const configSchema = z
  .object({
    server: serverSchema.default(serverSchema.parse({})),
    store: storeSchema.default(storeSchema.parse({})),
    receiver: receiverSchema.default(receiverSchema.parse({})),
    worker: workerSchema.default(workerSchema.parse({})),
    sending: sendingSchema.default(sendingSchema.parse({})),
    retention: retentionSweepSchema.default(retentionSweepSchema.parse({})),
    alerts: alertsSchema.default(alertsSchema.parse({})),
    audit: auditSchema.default(auditSchema.parse({})),
    telemetry: telemetrySchema.default(telemetrySchema.parse({})),
    portal: portalSchema.default(portalSchema.parse({})),
    /** Tenants: their networks, what their own callers may set, their quotas, their event streams (docs/tenants.md). */
    tenants: tenantsSchema.default(tenantsSchema.parse({})),
    sources: z.record(z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, 'source names use letters, digits, _ . -'), sourceSchema).default({}),
    shutdown_timeout: durationMs.default(10_000),
  })
  .strict();

export type TekilConfig = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
