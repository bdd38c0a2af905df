import { z } from 'zod';
import { networkCidr } from './networks.js';
import { durationMs, MAX_RETRY_WAIT_MS, parseDuration, retryWaitMs, sizeBytes } from './units.js';
import { retentionSchema } from './retention.js';

const gap = z
  .string()
  .regex(/^\d+(?:\.\d+)?(ms|s|m|h|d)$/, 'expected a gap like 30s, 2m or 1h')
  .refine((g) => (parseDuration(g) ?? 0) <= MAX_RETRY_WAIT_MS, 'a gap is at most 30d');
/** A ladder preset name, or the list of gaps between attempts. */
export const ladderSetting = z.union([z.string().regex(/^[a-z][a-z0-9_-]*$/), z.array(gap).min(1).max(50)]);

export const dispatcherSchema = z
  .object({
    /** Deliveries claimed by one query. */
    batch_size: z.number().int().positive().default(200),
    /**
     * HTTP requests in flight at once in one dispatcher process (all endpoints together). `auto` sets it
     * by memory (src/outbox/dispatch-capacity.ts): a request waiting for a slow receiver costs a socket,
     * not a slot that others wait for.
     */
    concurrency: z.union([z.literal('auto'), z.number().int().positive()]).default('auto'),
    /** Polling fallback when no notification arrives. */
    poll_interval: durationMs.default(1_000),
    /** Added to an endpoint's timeout to form the claim's lease; after it another dispatcher may retry. */
    lease_margin: durationMs.default(30_000),
  })
  .strict();

/** The API's group commit of `POST /api/v1/messages` (src/outbox/publish-batcher.ts). */
export const publishSchema = z
  .object({
    /** Most messages one publishing transaction carries. */
    batch_max_messages: z.number().int().positive().max(10_000).default(500),
    /** Most payload bytes one publishing transaction carries (a single larger message still goes alone). */
    batch_max_bytes: sizeBytes.default(8 * 1024 * 1024),
    /** Messages that may wait for their transaction before new requests get 503 OVERLOADED. */
    queue_max_messages: z.number().int().positive().default(10_000),
    /** Publishing transactions in flight at once; 1 keeps the store busy while the next batch gathers. */
    max_in_flight: z.number().int().positive().max(16).default(1),
  })
  .strict();

/** The per-endpoint circuit breaker (docs/sending.md, "Gentle sending"). */
export const circuitBreakerSchema = z
  .object({
    /** Failed attempts in a row that open it; 0 turns the breaker off. */
    failures: z.number().int().nonnegative().default(20),
  })
  .strict();

/** The slow lane (docs/sending.md, "Slow endpoints"). */
export const slowLaneSchema = z
  .object({
    /** An endpoint whose recent answers' p90 reaches this is sent to from the slow lane. */
    threshold: durationMs.pipe(z.number().min(1, 'expected at least 1ms')).default(5_000),
    /** Requests the slow lane holds at once in one dispatcher; by default a quarter of `dispatcher.concurrency`. */
    max_in_flight: z.number().int().positive().optional(),
  })
  .strict();

/** The event catalogue's check of published messages (docs/event-types.md). */
const eventTypesSchema = z
  .object({
    /** A message whose `data` does not match its declared type's schema: `refuse` (422) or `warn` (logged, sent). */
    on_mismatch: z.enum(['refuse', 'warn']).default('refuse'),
    /** How long a process uses the catalogue it read before reading it again (changes made by another process). */
    refresh: durationMs.pipe(z.number().min(0).max(3_600_000, 'expected at most 1h')).default(5_000),
  })
  .strict();

export const sendingSchema = z
  .object({
    /** Networks (CIDR) that destinations may resolve to although private, loopback or link-local. */
    allow_networks: z.array(networkCidr).default([]),
    /**
     * An HTTP proxy every delivery goes through (CONNECT tunnels), `http://user:pass@proxy:3128`, so
     * requests leave from the proxy's fixed addresses. The destination guard still judges the final
     * destination; the proxy's own address may be private.
     */
    proxy: z
      .string()
      .url()
      .refine((text) => /^https?:$/.test(new URL(text).protocol), 'expected an http:// or https:// proxy URL')
      .optional(),
    /** Timeout of an endpoint created without one: a deadline for the whole attempt, to the answer's last byte. */
    timeout: durationMs.pipe(z.number().min(1, 'expected at least 1ms').max(300_000, 'expected at most 5m')).default(10_000),
    /** How long a rotated-out secret keeps signing next to the new one. */
    rotation_window: durationMs.pipe(z.number().max(365 * 86_400_000, 'expected at most 365d')).default(24 * 3_600_000),
    /** Concurrent requests per endpoint for an endpoint created without a value. */
    max_in_flight: z.number().int().positive().default(16),
    /**
     * Requests in flight at once for one tenant, across every dispatcher (a tenant's own `max_in_flight`
     * overrides it); 0 for no cap. Claims also go round the tenants with due work, each taking a share
     * by its `weight` (docs/sending.md, "Fairness").
     */
    tenant_max_in_flight: z.number().int().nonnegative().default(1_000),
    /** Endpoints whose recent answers are slow are sent to from a lane of their own. */
    slow_lane: slowLaneSchema.default(slowLaneSchema.parse({})),
    /** Ladder of an endpoint created without one. */
    ladder: ladderSetting.default('standard'),
    /**
     * The event id an endpoint's receivers see when neither the endpoint nor its tenant says:
     * `message` (one id per message, as Standard Webhooks) or `delivery` (each delivery its own, as a
     * provider whose two endpoints of one merchant never share an id). Same values as src/outbox/ids.ts.
     */
    event_id: z.enum(['message', 'delivery']).default('message'),
    /** Disable an endpoint after this many consecutive failed deliveries; 0 never disables. */
    disable_after_failures: z.number().int().nonnegative().default(0),
    /** Stop sending to an endpoint after this many failed attempts in a row, then probe one at a time. */
    circuit_breaker: circuitBreakerSchema.default(circuitBreakerSchema.parse({})),
    /**
     * The rate limit's safety margin: each period's `count` send times are spread over the period plus
     * this, and a paced request that cannot start within this of its send time is given back unsent
     * (pending again, its attempt count unchanged). So no period at the receiver holds more than the
     * limit, provided the way there (network, the receiver's own queue) adds less jitter than this.
     */
    rate_limit_margin: durationMs.pipe(z.number().min(5, 'expected at least 5ms').max(60_000, 'expected at most 1m')).default(50),
    /** A `410 Gone` answer fails the delivery at once, without the rest of its ladder. */
    gone_is_permanent: z.boolean().default(true),
    /** Longest Retry-After honoured; a longer one is cut to this. */
    retry_after_max: retryWaitMs.default(3_600_000),
    /** Multiplies every ladder gap (0.001 turns minutes into tens of milliseconds for tests). */
    time_scale: z.number().positive().max(1000).default(1),
    dispatcher: dispatcherSchema.default(dispatcherSchema.parse({})),
    /** Publishing a type that is not in the event catalogue is refused (EVENT_TYPE_UNDECLARED). */
    require_event_types: z.boolean().default(false),
    event_types: eventTypesSchema.default(eventTypesSchema.parse({})),
    /** Group commit of the API's publishing. */
    publish: publishSchema.default(publishSchema.parse({})),
    /** Trim payloads and answers / delete settled messages after an age; the default keeps everything. */
    retention: retentionSchema.default(retentionSchema.parse({})),
  })
  .strict();

export type SendingConfig = z.infer<typeof sendingSchema>;
