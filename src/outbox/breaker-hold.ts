import type { Queryable } from '../store/db.js';
import { takeHeldDeliveries, writeHeldDeliveries, type HeldRow } from '../store/sql/outbox/breaker-hold.js';
import { newEventId } from './ids.js';
import { nextAttemptDelay } from './ladders.js';

/** The error a delivery fails with when its last attempt's time came while the breaker held it. */
export const HELD_AT_LAST_ATTEMPT = 'not sent: the circuit breaker was open when its last attempt was due (docs/sending.md, "The circuit breaker")';

/** Rows one hold takes at most; a longer backlog is taken by the next rounds. */
const HOLD_BATCH = 1000;

export interface HeldStep {
  /** Rungs passed unsent. */
  rungs: number;
  fail: boolean;
  /** The next attempt's time (epoch ms), when not failed. */
  nextMs: number;
}

/**
 * Where a held delivery goes: each rung whose time has passed is passed unsent (its attempt is not
 * counted), its next time following the ladder from the time that rung was due, until one lies in the
 * future; a passed rung that was the last attempt fails the delivery. An unreadable ladder fails it, as
 * the dispatcher does after an attempt.
 */
export function heldStep(
  row: Pick<HeldRow, 'attempts' | 'ladder_base' | 'due_ms' | 'now_ms'>,
  gapsMs: readonly number[] | undefined,
  timeScale: number,
): HeldStep {
  if (gapsMs === undefined) return { rungs: 1, fail: true, nextMs: row.due_ms };
  let at = row.due_ms;
  let rungs = 0;
  for (;;) {
    rungs++;
    // The rung passed was attempt (attempts - ladder_base + rungs) of the ladder; the gap after it:
    const delay = nextAttemptDelay({ gapsMs, attemptsOnLadder: row.attempts - row.ladder_base + rungs, timeScale, retryAfterMaxMs: 0 });
    if (delay === undefined) return { rungs, fail: true, nextMs: at };
    at += delay;
    if (at > row.now_ms) return { rungs, fail: false, nextMs: at };
  }
}

/**
 * One round of the breaker's hold (src/store/sql/outbox/breaker-hold.ts): takes the due deliveries of
 * endpoints whose breaker waits for its next probe, and moves each along its own ladder. Answers how
 * many were held.
 */
export async function holdBreakerDeliveries(
  db: Queryable,
  options: {
    breakerFailures: number;
    timeScale: number;
    ladder(json: string): readonly number[] | undefined;
    /** Publish `message.attempts_exhausted` for each delivery failed here (alerts turned on). */
    announceExhausted?: boolean;
  },
): Promise<number> {
  if (options.breakerFailures <= 0) return 0;
  const { rows } = await takeHeldDeliveries.run(db, { breaker_failures: options.breakerFailures, limit: HOLD_BATCH });
  if (rows.length === 0) return 0;
  const steps = rows.map((r) => heldStep(r, options.ladder(r.ladder_json), options.timeScale));
  await writeHeldDeliveries.run(db, {
    tenant_ids: rows.map((r) => r.tenant_id),
    ids: rows.map((r) => Number(r.id)),
    rungs: steps.map((s) => s.rungs),
    fail: steps.map((s) => s.fail),
    next_ms: steps.map((s) => s.nextMs),
    fail_error: HELD_AT_LAST_ATTEMPT,
    announce: options.announceExhausted ?? false,
    event_ids: steps.map((s) => (s.fail ? newEventId() : '')),
  });
  return rows.length;
}
