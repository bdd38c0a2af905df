import { z } from 'zod';
import { durationMs } from './units.js';

/** The body shapes an alert destination can take: tekil's envelope, or a chat tool's incoming webhook. */
export const alertFormats = ['slack', 'teams', 'discord'] as const;
export type AlertFormat = (typeof alertFormats)[number];

const onOff = { enabled: z.boolean().default(true) };
const stallAfter = durationMs.pipe(z.number().min(10_000, 'expected at least 10s')).default(900_000);

/** Each rule can be tuned or turned off; the defaults are what docs/alerts.md lists. */
const rulesSchema = z
  .object({
    /**
     * An endpoint whose last `failures` attempts failed in a row, or whose attempts over `window` (at
     * least `min_attempts` of them) succeeded less than `success_below` percent; recovered at its next
     * successful attempt.
     */
    endpoint_failing: z
      .object({
        ...onOff,
        failures: z.number().int().min(1).default(5),
        window: durationMs.pipe(z.number().min(60_000, 'expected at least 1m')).default(900_000),
        success_below: z.number().min(0).max(100).default(50),
        min_attempts: z.number().int().min(1).default(20),
      })
      .strict()
      .prefault({}),
    /** A source whose review queue (dead deliveries) holds at least `size`; recovered below it. */
    review_queue: z
      .object({ ...onOff, size: z.number().int().min(1).default(1) })
      .strict()
      .prefault({}),
    /** A source whose requests failed the signature check at least `failures` times over `window`; recovered below it. */
    signature_failures: z
      .object({
        ...onOff,
        failures: z.number().int().min(1).default(10),
        window: durationMs.pipe(z.number().min(60_000, 'expected at least 1m')).default(900_000),
      })
      .strict()
      .prefault({}),
    /** A source whose latest completed reconcile run recorded findings; recovered by a run with none. */
    reconcile_findings: z
      .object({ ...onOff })
      .strict()
      .prefault({}),
    /**
     * The store was unreachable: processes count its failures in memory and report each outage once it
     * answers again; the incident opens then and closes once no outage ended within `quiet_for`.
     */
    store_unreachable: z
      .object({ ...onOff, quiet_for: durationMs.pipe(z.number().min(1_000, 'expected at least 1s')).default(300_000) })
      .strict()
      .prefault({}),
    /** A due delivery of an enabled endpoint waiting longer than `after` (the dispatcher is stalled or far behind). */
    dispatcher_stalled: z
      .object({ ...onOff, after: stallAfter })
      .strict()
      .prefault({}),
    /** A received delivery due for processing waiting longer than `after` (the workers are stalled or far behind). */
    worker_stalled: z
      .object({ ...onOff, after: stallAfter })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});

/**
 * `alerts:` in the configuration. Off unless enabled: incidents are published as events, and an
 * endpoint subscribed to every event type (none listed, or `*`) would start receiving them.
 */
export const alertsSchema = z
  .object({
    enabled: z.boolean().default(false),
    /** How often the evaluator looks (worker role; one process at a time). */
    interval: durationMs.pipe(z.number().min(1_000, 'expected at least 1s')).default(30_000),
    /** Chat formats to publish each incident in too, as `alert.slack`, `alert.teams`, `alert.discord`. */
    formats: z.array(z.enum(alertFormats)).default([]),
    rules: rulesSchema,
  })
  .strict();
export type AlertsConfig = z.infer<typeof alertsSchema>;
