import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { SendingConfig } from '../config/sending.js';
import type { Logger } from '../logger.js';
import type { Service } from '../service.js';
import type { Db, Queryable } from '../store/db.js';
import { WakeLoop, Wakeup } from '../store/wake-loop.js';
import { claimDeliveriesAfter } from '../store/sql/outbox/claim-deliveries.js';
import { recordAbandoned } from '../store/sql/outbox/record-abandoned.js';
import { releaseUnstarted } from '../store/sql/outbox/release-unstarted.js';
import { nextStep, probeDelay, type AttemptOutcome } from './attempt-decision.js';
import type { DestinationGuard } from '../http/destination-guard.js';
import { publicOnlyGuard, Sender } from './sender.js';
import { DispatcherCaches, schemeExtraHeaders, secretsThatSign } from './dispatcher-caches.js';
import { dispatcherMetrics, type DispatcherMetrics } from './dispatcher-metrics.js';
import { deliveryEventId, withEventId } from './ids.js';
import { OUTBOX_CHANNEL } from './publish.js';
import { CompletionsNotRecorded, recordCompletions } from './record-completions.js';
import type { SecretBox } from './secrets.js';
import { endDispatchSpan, startDispatchSpan } from './dispatch-span.js';
import { traceparentOf, tracing } from '../telemetry/tracing.js';
import type { Span } from '@opentelemetry/api';
import type { OutboxClaimedDelivery, OutboxCompletion } from './types.js';

export interface DispatcherOptions {
  /** The store; the dispatcher opens its own small pool through it (same settings, own connections). */
  db: Db;
  sending: SendingConfig;
  box: SecretBox;
  /** The default tenant's endpoints' guard (`sending.allow_networks`). */
  guard: DestinationGuard;
  /** Every other tenant's endpoints' guard (`tenants.allow_networks`); absent: public addresses only. */
  tenantGuard?: DestinationGuard | undefined;
  logger: Logger;
  metrics?: Registry | undefined;
  /** Publish `message.attempts_exhausted` to the tenant for each delivery given up (alerts turned on). */
  announceExhausted?: boolean | undefined;
}

/**
 * Connections of the dispatcher's own pool: one claim, two completion writers and a secret lookup at
 * once, so a busy dispatcher never waits for connections the API and the receiver need, nor they for its.
 */
const DISPATCHER_CONNECTIONS = 4;
/** Completion writers that may run at once (each on its own connection). */
const FLUSH_WRITERS = 2;
/**
 * Finished attempts are written in groups of about this many, or after FLUSH_DELAY_MS: each statement
 * costs Postgres a commit and a fixed overhead, which a group of a few rows repeats for every few
 * deliveries.
 */
export const FLUSH_GROUP = 100;
const FLUSH_DELAY_MS = 5;
/** Deliveries claimed per request slot: the ones running plus those queued behind them. */
const CLAIM_AHEAD = 4;
/** After a NOTIFY the dispatcher claims again every 50 ms for a second (publishers share one NOTIFY). */
const NOTIFY_FOLLOW_UP_MS = 50;
const NOTIFY_FOLLOW_UP_WINDOW_MS = 1_000;
/**
 * The default of `sending.rate_limit_margin`: a paced request (rate limit) that cannot start within it
 * of its send time is not sent but given back: sent late, it would crowd the next send times, its own
 * and other dispatchers'. The claim spreads each period's send times over the period plus this margin,
 * so requests up to this late still leave every period within the limit.
 */
export const PACE_LATE_MS = 50;
/** Longest wait for in-flight requests on shutdown; unfinished ones are retried after their lease. */
const STOP_GRACE_MS = 5_000;

/**
 * Claims due deliveries, signs and posts them, and records every attempt. Requests run concurrently up
 * to `dispatcher.concurrency`; finished attempts are written in groups (one statement per group), and
 * each freed slot takes the next claimed delivery at the end of the event-loop turn. Wake-ups come
 * from NOTIFY on publish, a timer for the earliest retry this process scheduled, and a polling fallback.
 */
export class Dispatcher implements Service {
  readonly name = 'dispatcher';
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly sender: Sender;
  /** Where the dispatcher's statements run: its own pool from the store (the store itself on PGlite). */
  private readonly sql: Queryable & { close(): Promise<void> };
  private readonly caches: DispatcherCaches;
  private readonly completions: OutboxCompletion[] = [];
  private readonly metrics: DispatcherMetrics;
  private running = false;
  private inFlight = 0;
  /** Claimed deliveries waiting for a free request slot (at most one `concurrency` worth). */
  private readonly queue: Array<{ row: OutboxClaimedDelivery; lease: string }> = [];
  /** Claimed deliveries whose send time (the endpoint's rate limit) has not come yet; queued when it has. */
  private readonly paced = new Map<number, { row: OutboxClaimedDelivery; lease: string; timer: NodeJS.Timeout }>();
  /** The latest send time this process gave each rate-limited endpoint (epoch ms). */
  private readonly lastPacedSend = new Map<string, number>();
  /** Send times of paced deliveries claimed and not yet started (epoch ms), by delivery id. */
  private readonly sendAt = new Map<number, number>();
  /** The claim loop: woken by NOTIFY on publish, by kick(), and by polling. */
  private readonly claims: WakeLoop;
  /** Wakes stop() while it waits for the last attempts and writes: each of them ends in kick(). */
  private readonly settled = new Wakeup();
  private claimSeq = 0;
  /** Where the next claim's round robin over endpoints starts: the last endpoint claimed from. */
  private claimAfter = '';
  private pumpScheduled = false;
  /** Completion writers running; two overlap so recording never waits a full round trip. */
  private flushing = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private followUpTimer: NodeJS.Timeout | undefined;
  private lastNotifyAt = 0;
  private wakeAt = Infinity;

  constructor(private readonly options: DispatcherOptions) {
    this.sender = new Sender({ operator: options.guard, tenants: options.tenantGuard ?? publicOnlyGuard() }, options.sending.proxy);
    this.sql = options.db.openPool({ applicationName: 'tekil-dispatcher', max: DISPATCHER_CONNECTIONS });
    this.caches = new DispatcherCaches(this.sql, options.box);
    this.metrics = dispatcherMetrics(options.metrics);
    this.claims = new WakeLoop(options.db, {
      channel: OUTBOX_CHANNEL,
      pollIntervalMs: options.sending.dispatcher.poll_interval,
      run: () => this.claimRound(),
      onNotify: () => this.onNotify(),
      onListenFailed: (err, retryInMs) => options.logger.warn({ err, retryInMs }, 'dispatcher: LISTEN failed; polling until it is set up'),
    });
  }

  async start(): Promise<void> {
    this.running = true;
    // The loop's first round claims at once.
    await this.claims.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.wakeTimer);
    clearTimeout(this.followUpTimer);
    clearTimeout(this.flushTimer);
    const deadline = Date.now() + STOP_GRACE_MS;
    // A claim in flight finishes its round; stop() looks again when it has.
    void this.claims.stop().finally(() => this.settled.notify());
    await this.releaseQueued();
    let unwritten = false;
    while ((this.inFlight > 0 || this.claims.busy || this.flushing > 0 || this.completions.length > 0) && Date.now() < deadline) {
      if (this.flushing === 0 && this.completions.length > 0) {
        // The first time, the write whose timer was cleared above; after that, a write that failed
        // (flush() does not retry while stopping): tried again a poll interval later, or sooner if
        // another attempt finishes meanwhile.
        if (unwritten) await this.settled.wait(Math.min(this.options.sending.dispatcher.poll_interval, deadline - Date.now()));
        unwritten = true;
        this.flush();
      }
      await this.settled.wait(deadline - Date.now());
    }
    // A claim that was in flight when stop() began has queued its rows since: release them too.
    await this.releaseQueued();
    // Requests still running after the grace period are cut; their leases run out and another
    // dispatcher (or the next start) records the lost attempt and retries.
    await this.sender.close(this.inFlight > 0).catch(() => {});
    await this.sql.close().catch(() => {});
  }

  /**
   * A publish committed. Concurrent publishers share one NOTIFY (see publish-message.ts): messages of
   * transactions that commit after the notifying one are found by claiming every NOTIFY_FOLLOW_UP_MS
   * for NOTIFY_FOLLOW_UP_WINDOW_MS after each NOTIFY (then polling remains the backstop).
   */
  private onNotify(): void {
    this.lastNotifyAt = Date.now();
    this.kick();
    if (!this.followUpTimer) this.followUp();
  }

  private followUp(): void {
    this.followUpTimer = setTimeout(() => {
      this.followUpTimer = undefined;
      this.kick();
      if (this.running && Date.now() - this.lastNotifyAt < NOTIFY_FOLLOW_UP_WINDOW_MS) this.followUp();
    }, NOTIFY_FOLLOW_UP_MS);
    this.followUpTimer.unref();
  }

  /** Asks for a claim soon; several asks while one claim runs collapse into one more. */
  kick(): void {
    // While stopping, every finished attempt and every write ends here: stop() looks again.
    if (!this.running) return this.settled.notify();
    this.claims.wake();
  }

  /** Number of requests in flight in this process. */
  get inFlightCount(): number {
    return this.inFlight;
  }

  /** One round of the claim loop: claims while there is room for the claimed deliveries. */
  private async claimRound(): Promise<boolean> {
    const { concurrency, batch_size, lease_margin } = this.options.sending.dispatcher;
    while (this.running) {
      // Claiming ahead keeps request slots busy while the database round trips of claiming and
      // recording run; bigger claims also mean fewer of them.
      const limit = Math.min(CLAIM_AHEAD * concurrency - this.inFlight - this.queue.length - this.paced.size, batch_size);
      if (limit <= 0) break;
      // A claim costs about the same for a few rows as for many: while the queue still holds a
      // round of work, wait until there is room for a full batch (pump kicks when it runs low).
      if (limit < Math.min(batch_size, 2 * concurrency) && this.queue.length >= concurrency) break;
      const lease = `${this.id}:${++this.claimSeq}`;
      let rows: OutboxClaimedDelivery[];
      try {
        const claim = await claimDeliveriesAfter(this.sql, {
          limit,
          lease,
          leaseMarginMs: lease_margin,
          breakerFailures: this.options.sending.circuit_breaker.failures,
          paceMarginMs: this.options.sending.rate_limit_margin,
          after: this.claimAfter,
        });
        rows = claim.rows;
        this.claimAfter = claim.nextAfter;
      } catch (err) {
        this.options.logger.warn({ err }, 'dispatcher: claim failed; retrying at the next poll');
        return false;
      }
      const abandoned = rows.filter((r) => r.previous_status === 'sending');
      if (abandoned.length > 0) {
        this.options.logger.warn({ deliveries: abandoned.length }, 'dispatcher: retrying deliveries whose dispatcher stopped mid-attempt');
        await recordAbandoned(
          this.sql,
          abandoned.map((r) => ({ ...r, attempt: r.attempt - 1, startedAt: r.previous_attempt_at ?? new Date() })),
        ).catch((err: unknown) => this.options.logger.warn({ err }, 'dispatcher: recording abandoned attempts failed'));
      }
      this.caches.prefetchSecrets(rows);
      for (const row of rows) {
        if (row.send_at_ms > 0) this.pace(row, lease);
        else this.queue.push({ row, lease });
      }
      this.pump();
      if (rows.length < limit) break;
    }
    return false;
  }

  /**
   * Slots freed by finished attempts are refilled together, at the end of the event loop's turn (its
   * check phase), not each as its answer is read. Node reads each connection's answer in its own callback;
   * a new request written there, between two reads, wakes the receiver for that one request, and on
   * loopback and virtual machines that wake-up costs more CPU than the request. Written back to back
   * after the turn's reads, the turn's requests share the receiver's wake-ups. In alternating runs of
   * `BENCH_SIDES=bare,tekil npm run bench:dispatch` the dispatcher spent 8–13% less CPU per delivery
   * in each of four pairs (docs/performance.md). A slot waits at most for the rest of the turn.
   */
  private pumpAtEndOfTurn(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Starts queued attempts while request slots are free. */
  private pump(): void {
    const { concurrency } = this.options.sending.dispatcher;
    let launched = false;
    while (this.running && this.inFlight < concurrency && this.queue.length > 0) {
      const next = this.queue.shift()!;
      this.launch(next.row, next.lease);
      launched = true;
    }
    // The queue running low asks for the next claim (a claim in progress continues by itself).
    if (launched && !this.claims.busy && this.queue.length < concurrency) this.kick();
  }

  /**
   * Holds a delivery until the send time its claim gave it (the endpoint's rate limit), out of the
   * request slots, so a paced endpoint does not keep other endpoints' deliveries waiting.
   */
  private pace(row: OutboxClaimedDelivery, lease: string): void {
    // The send time is on the database's clock, shared by every dispatcher: a wait counted from this
    // claim's answer would add the claim's own round trip, which differs between claims and processes,
    // and bunch requests. (Dispatchers' clocks are expected in step with the database's, as NTP keeps
    // them; the wait never exceeds the one the claim gave, plus its round trip.) Within this process,
    // requests to the endpoint also keep the interval between them, so a late timer cannot bunch them.
    const last = this.lastPacedSend.get(row.endpoint_id) ?? 0;
    const at = Math.max(row.send_at_ms, last + (row.send_interval_ms ?? 0));
    this.lastPacedSend.set(row.endpoint_id, at);
    this.sendAt.set(row.id, at);
    const timer = setTimeout(
      () => {
        this.paced.delete(row.id);
        this.queue.unshift({ row, lease });
        this.pump();
      },
      Math.min(Math.max(0, at - Date.now()), row.wait_ms + 1_000),
    );
    this.paced.set(row.id, { row, lease, timer });
  }

  /** On shutdown, claimed deliveries that never started go back to pending at once. */
  private async releaseQueued(): Promise<void> {
    for (const p of this.paced.values()) clearTimeout(p.timer);
    this.sendAt.clear();
    const queued = [...this.paced.values(), ...this.queue.splice(0)];
    this.paced.clear();
    if (queued.length === 0) return;
    await releaseUnstarted(
      this.sql,
      queued.map((q) => ({ tenantId: q.row.tenant_id, id: q.row.id, lease: q.lease })),
    ).catch((err: unknown) => this.options.logger.warn({ err }, 'dispatcher: releasing unstarted deliveries failed; their leases will expire'));
  }

  private launch(row: OutboxClaimedDelivery, lease: string): void {
    this.inFlight++;
    void this.attempt(row, lease).then((completion) => {
      this.inFlight--;
      this.pumpAtEndOfTurn();
      if (completion === undefined) {
        // Given back unsent (too late for its send time): pending again, its attempt count as it was.
        void releaseUnstarted(this.sql, [{ tenantId: row.tenant_id, id: row.id, lease }])
          .catch((err: unknown) => this.options.logger.warn({ err }, 'dispatcher: giving back a late paced delivery failed; its lease will expire'))
          .finally(() => this.kick());
        return;
      }
      this.completions.push(completion);
      this.metrics.attempt(completion.succeeded, completion.durationMs);
      this.scheduleFlush();
    });
  }

  /**
   * One attempt; never throws: whatever goes wrong is recorded as the attempt's error. Answers
   * undefined, sending nothing, for a paced delivery that could not start in time.
   */
  private async attempt(row: OutboxClaimedDelivery, lease: string): Promise<OutboxCompletion | undefined> {
    const sendAt = this.sendAt.get(row.id);
    this.sendAt.delete(row.id);
    const stored = Buffer.from(row.payload.buffer, row.payload.byteOffset, row.payload.byteLength);
    // An endpoint with `event_id: delivery` sees this delivery's own id, in the headers and the body.
    const eventId = row.event_id_mode === 'delivery' ? deliveryEventId(row.message_id, row.id) : row.message_id;
    const body = eventId === row.message_id ? stored : withEventId(stored, row.message_id, eventId);
    const t = tracing();
    let outcome: AttemptOutcome;
    let span: Span | undefined;
    try {
      const secrets = await this.caches.secretsFor(row.endpoint_id, row.endpoint_updated_ms);
      const headers = this.caches.scheme(row.scheme, row.scheme_options_json).sign({ body, secrets: secretsThatSign(row.scheme, secrets), id: eventId });
      Object.assign(headers, schemeExtraHeaders({ scheme: row.scheme, event_type: row.event_type, message_id: eventId }));
      // Checked last before the request is written, so that nothing in between adds to its lateness.
      if (sendAt !== undefined && Date.now() - sendAt > this.options.sending.rate_limit_margin) return undefined;
      if (t) {
        // Started here, so a paced delivery that waited is not counted; its traceparent goes with the request.
        span = startDispatchSpan(t, row);
        headers.traceparent = traceparentOf(span);
      }
      outcome = await this.sender.send({ url: row.url, body, headers, timeoutMs: row.timeout_ms, tenantId: row.tenant_id });
    } catch (err) {
      outcome = {
        startedAt: new Date(),
        durationMs: 0,
        succeeded: false,
        statusCode: null,
        error: `not sent: ${(err as Error).message}`,
        responseBody: null,
        retryAfterMs: undefined,
        unsendable: false,
      };
    }
    if (t && span) endDispatchSpan(t, span, outcome);
    const { next, delayMs } = nextStep({
      outcome,
      gapsMs: outcome.succeeded ? [] : this.caches.ladder(row.ladder_json),
      attemptsOnLadder: row.attempt - row.ladder_base,
      timeScale: this.options.sending.time_scale,
      retryAfterMaxMs: this.options.sending.retry_after_max,
      goneIsPermanent: this.options.sending.gone_is_permanent,
    });
    return {
      tenantId: row.tenant_id,
      deliveryId: Number(row.id),
      lease,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      attempt: row.attempt,
      url: row.url,
      endpointHadFailures: row.consecutive_failures > 0 || row.failed_attempts_in_row > 0,
      probeDelayMs: outcome.succeeded
        ? 0
        : probeDelay(
            this.caches.ladder(row.ladder_json),
            row.failed_attempts_in_row + 1,
            this.options.sending.circuit_breaker.failures,
            this.options.sending.time_scale,
          ),
      startedAt: outcome.startedAt,
      durationMs: outcome.durationMs,
      succeeded: outcome.succeeded,
      statusCode: outcome.statusCode,
      error: outcome.error,
      responseBody: outcome.responseBody,
      next,
      delayMs,
    };
  }

  /** Writes at once when a full group is waiting, else shortly, so more finished attempts share it. */
  private scheduleFlush(): void {
    if (this.completions.length >= FLUSH_GROUP || !this.running) {
      this.flush();
    } else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.flush();
      }, FLUSH_DELAY_MS);
    }
  }

  private flush(): void {
    if (this.flushing >= FLUSH_WRITERS || this.completions.length === 0) return;
    this.flushing++;
    let abandoned = false;
    void (async () => {
      while (this.completions.length > 0) {
        const batch = this.completions.splice(0, 1000);
        let recorded: OutboxCompletion[];
        try {
          recorded = await recordCompletions(this.sql, batch, {
            dispatcher: this.id,
            disableAfter: this.options.sending.disable_after_failures,
            breakerFailures: this.options.sending.circuit_breaker.failures,
            announceExhausted: this.options.announceExhausted ?? false,
            onRefused: (c, err) =>
              this.options.logger.error(
                { err, deliveryId: c.deliveryId, endpointId: c.endpointId },
                'dispatcher: the store refused an attempt; its delivery is recorded as failed',
              ),
          });
        } catch (err) {
          const unwritten = err instanceof CompletionsNotRecorded ? err.unwritten : batch;
          this.options.logger.warn({ err, attempts: unwritten.length }, 'dispatcher: recording attempts failed; retrying');
          this.completions.unshift(...unwritten);
          if (!this.running) {
            // Stopping (the pool may be closed already): no retry, or this would loop for ever.
            // The leases run out and the deliveries are retried elsewhere.
            abandoned = true;
            return;
          }
          await new Promise((r) => setTimeout(r, this.options.sending.dispatcher.poll_interval));
          continue;
        }
        for (const c of recorded) if (c.next === 'pending') this.wakeIn(c.delayMs);
        // The written rows freed their endpoints' slots: refill them while the next group is written.
        this.kick();
        if (this.running && this.completions.length < FLUSH_GROUP) break; // a small rest waits for company
      }
    })().finally(() => {
      this.flushing--;
      if (this.completions.length > 0 && !abandoned) this.scheduleFlush();
      this.kick();
    });
  }

  /** Wakes the claim loop when this process's earliest scheduled retry is due. */
  private wakeIn(ms: number): void {
    if (!this.running) return;
    const at = Date.now() + ms + 5; // a little late rather than early: the row is due by the database's clock
    if (at >= this.wakeAt) return;
    clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeAt = Infinity;
      this.kick();
    }, at - Date.now());
    this.wakeTimer.unref();
  }
}
