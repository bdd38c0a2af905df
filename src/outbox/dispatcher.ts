import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { SendingConfig } from '../config/sending.js';
import type { Logger } from '../logger.js';
import type { Service } from '../service.js';
import type { Db, Queryable } from '../store/db.js';
import { WakeLoop, Wakeup } from '../store/wake-loop.js';
import { CLAIM_QUANTUM, claimDeliveriesAfter } from '../store/sql/outbox/claim-deliveries.js';
import { recordAbandoned } from '../store/sql/outbox/record-abandoned.js';
import { releaseUnstarted } from '../store/sql/outbox/release-unstarted.js';
import { writeEndpointSlow } from '../store/sql/outbox/endpoint-slow.js';
import type { DestinationGuard } from '../http/destination-guard.js';
import { runAttempt, type AttemptDeps } from './attempt.js';
import { CompletionWriter } from './completion-writer.js';
import { type Capacity, resolveCapacity } from './dispatch-capacity.js';
import { DispatcherCaches } from './dispatcher-caches.js';
import { dispatcherMetrics, type DispatcherMetrics } from './dispatcher-metrics.js';
import { OUTBOX_CHANNEL } from './publish.js';
import type { SecretBox } from './secrets.js';
import { type Claimed, PacedDeliveries } from './paced-deliveries.js';
import { publicOnlyGuard, Sender } from './sender.js';
import { SlowLane } from './slow-lane.js';
import { BrokerSender } from './broker-send.js';
import { refreshInheritedSettings } from './inherited-settings.js';
import { holdBreakerDeliveries } from './breaker-hold.js';
import type { OutboxClaimedDelivery } from './types.js';

export { FLUSH_GROUP } from './completion-writer.js';

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
/**
 * Deliveries a claim may take beyond the free request slots (at most 3 per slot): they keep the slots
 * busy while the database round trips of claiming and recording run, and bigger claims are fewer. They
 * wait for a slot only when every one of `concurrency` requests is open: with the memory-sized default
 * (thousands), never behind a few slow receivers.
 */
const CLAIM_AHEAD_MAX = 256;
/** Tenants whose last-claimed endpoint this dispatcher remembers (the walk inside a tenant starts after it). */
const TENANT_CURSORS = 256;
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
 * Claims due deliveries, signs and posts them, and records every attempt. A request waiting for its
 * answer costs a socket, not a slot others wait for: up to `dispatcher.concurrency` run at once (by
 * default as many as memory allows, thousands), and a claim takes no more than can start at once, so a
 * claimed delivery never waits behind requests held by a slow receiver. The claim shares out the work:
 * round the tenants with due work by weight, within each tenant's cap on requests in flight, then round
 * the tenant's endpoints; slow endpoints only within the slow lane's requests (docs/sending.md,
 * "Fairness"). Finished attempts are written in groups (completion-writer.ts). Wake-ups come from NOTIFY
 * on publish, a timer for the earliest retry this process scheduled, and a polling fallback.
 */
export class Dispatcher implements Service {
  readonly name = 'dispatcher';
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly sender: Sender;
  private readonly brokers: BrokerSender;
  /** Where the dispatcher's statements run: its own pool from the store (the store itself on PGlite). */
  private readonly sql: Queryable & { close(): Promise<void> };
  private readonly attemptDeps: AttemptDeps;
  private readonly writer: CompletionWriter;
  private readonly metrics: DispatcherMetrics;
  private readonly capacity: Capacity;
  private readonly slowLane: SlowLane;
  private running = false;
  private inFlight = 0;
  /** Requests in flight to endpoints in the slow lane. */
  private slowInFlight = 0;
  /** Claimed deliveries waiting for a request slot (at most CLAIM_AHEAD_MAX beyond the free ones). */
  private readonly queue: Claimed[] = [];
  /** Claimed deliveries whose send time (the endpoint's rate limit) has not come yet; queued when it has. */
  private readonly paced = new PacedDeliveries((claimed) => {
    this.queue.unshift(claimed);
    this.pump();
  });
  /** The claim loop: woken by NOTIFY on publish, by kick(), and by polling. */
  private readonly claims: WakeLoop;
  /** Wakes stop() while it waits for the last attempts and writes: each of them ends in kick(). */
  private readonly settled = new Wakeup();
  private claimSeq = 0;
  /** Where the next claim's round robin over tenants starts: the last tenant claimed from. */
  private claimAfter = '';
  /** Per tenant, the endpoint last claimed from (least recently claimed first): its next walk starts after it. */
  private readonly tenantCursors = new Map<string, string>();
  /** Rows a tenant of weight 1 may take from the next claim (see CLAIM_QUANTUM). */
  private quantum: number;
  private pumpScheduled = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  private followUpTimer: NodeJS.Timeout | undefined;
  private lastNotifyAt = 0;
  private wakeAt = Infinity;
  /** The circuit breaker's hold: a round every poll interval (at most a second), while the breaker is on. */
  private holdTimer: NodeJS.Timeout | undefined;
  private holding: Promise<void> | undefined;

  constructor(private readonly options: DispatcherOptions) {
    const { sending } = options;
    const guards = { operator: options.guard, tenants: options.tenantGuard ?? publicOnlyGuard() };
    this.sender = new Sender(guards, sending.proxy);
    this.sql = options.db.openPool({ applicationName: 'tekil-dispatcher', max: DISPATCHER_CONNECTIONS });
    this.brokers = new BrokerSender(this.sql, options.box, guards);
    this.attemptDeps = { sender: this.sender, brokers: this.brokers, caches: new DispatcherCaches(this.sql, options.box), sending };
    this.metrics = dispatcherMetrics(options.metrics);
    this.quantum = sending.dispatcher.batch_size;
    this.capacity = resolveCapacity(sending.dispatcher.concurrency, sending.slow_lane.max_in_flight);
    this.slowLane = new SlowLane(sending.slow_lane.threshold, (id, p90) => {
      void writeEndpointSlow(this.sql, id, p90).catch((err: unknown) =>
        options.logger.warn({ err, endpointId: id }, "dispatcher: recording an endpoint's lane failed; the next answers try again"),
      );
    });
    this.writer = new CompletionWriter({
      sql: this.sql,
      logger: options.logger,
      record: {
        dispatcher: this.id,
        disableAfter: sending.disable_after_failures,
        breakerFailures: sending.circuit_breaker.failures,
        announceExhausted: options.announceExhausted ?? false,
      },
      retryMs: sending.dispatcher.poll_interval,
      running: () => this.running,
      onRetryScheduled: (ms) => this.wakeIn(ms),
      onWritten: () => this.kick(),
    });
    this.claims = new WakeLoop(options.db, {
      channel: OUTBOX_CHANNEL,
      pollIntervalMs: sending.dispatcher.poll_interval,
      run: () => this.claimRound(),
      onNotify: () => this.onNotify(),
      onListenFailed: (err, retryInMs) => options.logger.warn({ err, retryInMs }, 'dispatcher: LISTEN failed; polling until it is set up'),
    });
  }

  async start(): Promise<void> {
    // Endpoints that take a setting from the file (neither their own nor their tenant's) follow the file
    // this process was started with (docs/tenants.md). Writes only what changed: usually nothing.
    await refreshInheritedSettings(this.sql, this.options.sending, null).catch((err: unknown) =>
      this.options.logger.warn({ err }, "dispatcher: writing the file's defaults into endpoints that inherit them failed"),
    );
    this.running = true;
    // The loop's first round claims at once.
    await this.claims.start();
    if (this.options.sending.circuit_breaker.failures > 0) this.scheduleHold();
  }

  /**
   * Every poll interval (at most a second), the deliveries an open breaker holds pass their rung or fail
   * on schedule (src/outbox/breaker-hold.ts): a held delivery is at most that late on its own ladder.
   */
  private scheduleHold(): void {
    this.holdTimer = setTimeout(
      () => {
        this.holding = holdBreakerDeliveries(this.sql, {
          breakerFailures: this.options.sending.circuit_breaker.failures,
          timeScale: this.options.sending.time_scale,
          ladder: (json) => this.attemptDeps.caches.ladder(json),
          announceExhausted: this.options.announceExhausted ?? false,
        })
          .then(
            () => undefined,
            (err: unknown) => {
              if (this.running) this.options.logger.warn({ err }, "dispatcher: the circuit breaker's hold failed; trying again at the next round");
            },
          )
          .finally(() => {
            this.holding = undefined;
            if (this.running) this.scheduleHold();
          });
      },
      Math.min(this.options.sending.dispatcher.poll_interval, 1_000),
    );
    this.holdTimer.unref();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.wakeTimer);
    clearTimeout(this.followUpTimer);
    this.writer.cancelTimer();
    clearTimeout(this.holdTimer);
    await this.holding;
    const deadline = Date.now() + STOP_GRACE_MS;
    // A claim in flight finishes its round; stop() looks again when it has.
    void this.claims.stop().finally(() => this.settled.notify());
    await this.releaseQueued();
    let unwritten = false;
    while ((this.inFlight > 0 || this.claims.busy || this.writer.busy) && Date.now() < deadline) {
      if (this.writer.idleWithWork) {
        // The first time, the write whose timer was cleared above; after that, a write that failed
        // (the writer does not retry while stopping): tried again a poll interval later, or sooner if
        // another attempt finishes meanwhile.
        if (unwritten) await this.settled.wait(Math.min(this.options.sending.dispatcher.poll_interval, deadline - Date.now()));
        unwritten = true;
        this.writer.flush();
      }
      await this.settled.wait(deadline - Date.now());
    }
    // A claim that was in flight when stop() began has queued its rows since: release them too.
    await this.releaseQueued();
    // Requests still running after the grace period are cut; their leases run out and another
    // dispatcher (or the next start) records the lost attempt and retries.
    await this.sender.close(this.inFlight > 0).catch(() => {});
    await this.brokers.close().catch(() => {});
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

  /** Requests in flight to endpoints in the slow lane, in this process. */
  get slowInFlightCount(): number {
    return this.slowInFlight;
  }

  /** One round of the claim loop: claims while there is room to start the claimed deliveries. */
  private async claimRound(): Promise<boolean> {
    const { batch_size, lease_margin } = this.options.sending.dispatcher;
    while (this.running) {
      // The free slots and a little ahead (CLAIM_AHEAD_MAX). Paced deliveries wait for their send time,
      // not for a slot; they count, so a paced backlog cannot grow unbounded.
      const { requests } = this.capacity;
      const ahead = Math.min(3 * requests, CLAIM_AHEAD_MAX);
      const limit = Math.min(requests + ahead - this.inFlight - this.queue.length - this.paced.size, batch_size);
      if (limit <= 0) break;
      // A claim costs about the same for a few rows as for many: while the queue still holds a round of
      // work, wait until there is room for a full batch (pump kicks when it runs low).
      if (limit < Math.min(batch_size, 2 * requests) && this.queue.length >= Math.min(requests, ahead)) break;
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
          cursors: this.tenantCursors,
          quantum: this.quantum,
          tenantCap: this.options.sending.tenant_max_in_flight,
          slowFree: Math.max(0, this.capacity.slow - this.slowInFlight),
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
      this.attemptDeps.caches.prefetchSecrets(rows);
      const tenants = new Set<string>();
      for (const row of rows) {
        tenants.add(row.tenant_id);
        this.rememberCursor(row.tenant_id, row.endpoint_id);
        if (row.send_at_ms > 0) this.paced.hold(row, lease);
        else this.queue.push({ row, lease });
      }
      // The next claim's quantum: the batch shared among the tenants this one served.
      if (rows.length > 0) this.quantum = Math.max(CLAIM_QUANTUM, Math.ceil(batch_size / tenants.size));
      this.pump();
      if (rows.length < limit) break;
    }
    return false;
  }

  private rememberCursor(tenantId: string, endpointId: string): void {
    this.tenantCursors.delete(tenantId);
    this.tenantCursors.set(tenantId, endpointId);
    if (this.tenantCursors.size > TENANT_CURSORS) this.tenantCursors.delete(this.tenantCursors.keys().next().value as string);
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

  /** Starts claimed attempts while requests may start; asks for the next claim when there is room. */
  private pump(): void {
    let launched = false;
    while (this.running && this.inFlight < this.capacity.requests && this.queue.length > 0) {
      const next = this.queue.shift()!;
      this.launch(next.row, next.lease);
      launched = true;
    }
    // The queue running low asks for the next claim (a claim in progress continues by itself).
    if (launched && !this.claims.busy && this.queue.length < Math.min(this.capacity.requests, CLAIM_AHEAD_MAX)) this.kick();
  }
  /** On shutdown, claimed deliveries that never started go back to pending at once. */
  private async releaseQueued(): Promise<void> {
    const queued = [...this.paced.drain(), ...this.queue.splice(0)];
    if (queued.length === 0) return;
    await releaseUnstarted(
      this.sql,
      queued.map((q) => ({ tenantId: q.row.tenant_id, id: q.row.id, lease: q.lease })),
    ).catch((err: unknown) => this.options.logger.warn({ err }, 'dispatcher: releasing unstarted deliveries failed; their leases will expire'));
  }

  private launch(row: OutboxClaimedDelivery, lease: string): void {
    this.inFlight++;
    const slow = row.slow_p90_ms !== null;
    if (slow) this.slowInFlight++;
    const sendAt = this.paced.takeSendAt(row.id);
    void runAttempt(this.attemptDeps, row, lease, sendAt).then((completion) => {
      this.inFlight--;
      if (slow) this.slowInFlight--;
      this.pumpAtEndOfTurn();
      if (completion === undefined) {
        // Given back unsent (too late for its send time): pending again, its attempt count as it was.
        void releaseUnstarted(this.sql, [{ tenantId: row.tenant_id, id: row.id, lease }])
          .catch((err: unknown) => this.options.logger.warn({ err }, 'dispatcher: giving back a late paced delivery failed; its lease will expire'))
          .finally(() => this.kick());
        return;
      }
      this.slowLane.observe(row.endpoint_id, row.slow_p90_ms, completion.durationMs);
      this.metrics.attempt(completion.succeeded, completion.durationMs);
      this.writer.push(completion);
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
