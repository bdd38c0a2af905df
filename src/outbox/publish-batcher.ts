import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { Context } from '../service.js';
import type { Db } from '../store/db.js';
import { TekilError, isTekilError } from '../errors.js';
import { GroupCommitQueue, type Queued } from '../store/group-commit.js';
import { isStoreUnavailable } from '../pg-error.js';
import { publishMessages, type PublishMessagesParams } from '../store/sql/outbox/publish-message.js';
import { packBytes } from '../store/sql/statement.js';
import {
  prepareMessage,
  publishFailure,
  publishPrepared,
  storeTraceparents,
  tracedPublish,
  type PreparedMessage,
  type PublishInput,
  type PublishResult,
} from './publish.js';
import { tracing } from '../telemetry/tracing.js';

/** The API publishing's metrics, named like the receiver's batch metrics; one set per registry. */
export class PublishBatchMetrics {
  readonly batchMessages: Histogram;
  readonly flushErrors: Counter;

  constructor(registry: Registry) {
    this.batchMessages = new Histogram({
      name: 'tekil_outbox_publish_batch_messages',
      help: 'Messages per group-commit publishing transaction of POST /api/v1/messages.',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
      registers: [registry],
    });
    this.flushErrors = new Counter({
      name: 'tekil_outbox_publish_flush_errors_total',
      help: 'Group-commit publishing transactions that failed (each then fell back to one transaction per message, or answered 503).',
      registers: [registry],
    });
  }
}

const byRegistry = new WeakMap<Registry, PublishBatchMetrics>();

export function publishBatchMetrics(registry: Registry): PublishBatchMetrics {
  let m = byRegistry.get(registry);
  if (!m) {
    m = new PublishBatchMetrics(registry);
    byRegistry.set(registry, m);
  }
  return m;
}

export interface PublishBatcherOptions {
  maxMessages: number;
  maxBytes: number;
  queueMaxMessages: number;
  /** Publishing transactions in flight at once. */
  maxInFlight?: number;
  /** See GroupCommitOptions.gatherTurn: on for the embedded store. */
  gatherTurn?: boolean;
  metrics?: PublishBatchMetrics;
  logger?: Logger;
}

interface Pending extends Queued {
  message: PreparedMessage;
  resolve(result: PublishResult): void;
}

/**
 * Group commit for `POST /api/v1/messages` (src/store/group-commit.ts): messages that arrive while a
 * publishing transaction is in flight wait and go together in the next one, one statement and one
 * commit, and each caller is answered after that commit. Each caller gets the answer it would have got
 * publishing alone:
 * - the same idempotency key twice in one batch, for one tenant, makes one message; the later callers get its id as a
 *   repeat, as they would have one after the other;
 * - a batch the store refuses (an extra destination naming no endpoint fails the whole statement) is
 *   published again one message per transaction, so only the bad message fails;
 * - an unreachable store fails the batch at once with STORE_UNAVAILABLE.
 * `publish(tx)` inside a caller's own transaction does not come here: that transaction is the caller's.
 */
export class PublishBatcher {
  private readonly queue: GroupCommitQueue<Pending>;

  constructor(
    private readonly db: Db,
    private readonly options: PublishBatcherOptions,
  ) {
    this.queue = new GroupCommitQueue<Pending>(
      {
        maxItems: options.maxMessages,
        maxBytes: options.maxBytes,
        queueMaxItems: options.queueMaxMessages,
        maxInFlight: options.maxInFlight,
        gatherTurn: options.gatherTurn,
        noun: 'messages',
      },
      (batch) => this.flush(batch),
    );
  }

  /** Refuses new messages, then resolves once every queued one has been committed or failed. */
  stop(): Promise<void> {
    return this.queue.stop();
  }

  /** Resolves once the message is committed (or found published before under its idempotency key). */
  async publish(input: PublishInput): Promise<PublishResult> {
    // Validation and the envelope happen here, in the caller's turn: a bad input never joins a batch.
    const t = tracing();
    if (t) return tracedPublish(t, input, (message) => this.enqueue(message));
    return this.enqueue(prepareMessage(input));
  }

  private enqueue(message: PreparedMessage): Promise<PublishResult> {
    return new Promise<PublishResult>((resolve, reject) => this.queue.add({ message, bytes: message.params.payload.length, resolve, reject }));
  }

  private async flush(batch: Pending[]): Promise<() => void> {
    this.options.metrics?.batchMessages.observe(batch.length);
    if (batch.length === 1) {
      const p = batch[0]!;
      // Alone: the single-message statement, exactly publish() on the pool (in a transaction with its
      // traceparent when tracing is on).
      const published = p.message.traceparent ? this.db.transaction((tx) => publishPrepared(tx, p.message)) : publishPrepared(this.db, p.message);
      return published.then(
        (result) => () => p.resolve(result),
        (err: unknown) => () => p.reject(asTekilError(err, p.message)),
      );
    }
    // Copies of one idempotency key: the first goes to the store, the others repeat its answer.
    const leaders: Pending[] = [];
    const followers = new Map<string, Pending[]>();
    for (const p of batch) {
      const key = tenantKey(p.message.params.tenant_id, p.message.params.idempotency_key);
      if (key === null) leaders.push(p);
      else if (followers.has(key)) followers.get(key)!.push(p);
      else {
        followers.set(key, []);
        leaders.push(p);
      }
    }
    let answers: Map<Pending, PublishResult>;
    try {
      answers = await this.publishMany(leaders);
    } catch (err) {
      this.options.metrics?.flushErrors.inc();
      if (isStoreUnavailable(err)) {
        this.options.logger?.warn({ messages: batch.length, err: { message: (err as Error).message } }, 'publishing batch failed: the store is unavailable');
        return () => {
          for (const p of batch) p.reject(publishFailure(err, p.message.type));
        };
      }
      this.options.logger?.warn(
        { messages: batch.length, err: { message: (err as Error).message } },
        'publishing batch failed; publishing its messages one by one',
      );
      await this.fallback(batch);
      return () => {};
    }
    return () => {
      for (const p of leaders) {
        const key = tenantKey(p.message.params.tenant_id, p.message.params.idempotency_key);
        const copies = key === null ? [] : followers.get(key)!;
        const result = answers.get(p);
        if (!result) {
          const failure = new TekilError('INTERNAL', 'idempotency key conflict without a stored message');
          for (const q of [p, ...copies]) q.reject(failure);
          continue;
        }
        p.resolve(result);
        for (const copy of copies) copy.resolve({ id: result.id, deliveries: 0, duplicate: true });
      }
    };
  }

  /** One statement (one transaction) for the leaders, whose idempotency keys are distinct; each one's answer. */
  private async publishMany(leaders: Pending[]): Promise<Map<Pending, PublishResult>> {
    // Keyed messages in key order: two batches (two processes) holding overlapping keys in opposite
    // orders would deadlock, and Postgres would abort one of them.
    const ordered = [...leaders].sort((a, b) =>
      compareKeys(
        tenantKey(a.message.params.tenant_id, a.message.params.idempotency_key),
        tenantKey(b.message.params.tenant_id, b.message.params.idempotency_key),
      ),
    );
    const n = ordered.length;
    const payloads = new Array<Buffer>(n);
    const params: PublishMessagesParams = {
      tenant_ids: new Array<string>(n),
      ids: new Array<string>(n),
      event_types: new Array<string>(n),
      resource_ids: new Array<string | null>(n),
      payloads: Buffer.alloc(0),
      payload_starts: [],
      payload_lengths: [],
      idempotency_keys: new Array<string | null>(n),
      extra_ns: [],
      extra_endpoint_ids: [],
      extra_urls: [],
    };
    for (let i = 0; i < n; i++) {
      const m = ordered[i]!.message.params;
      params.tenant_ids[i] = m.tenant_id;
      params.ids[i] = m.id;
      params.event_types[i] = m.event_type;
      params.resource_ids[i] = m.resource_id;
      payloads[i] = m.payload;
      params.idempotency_keys[i] = m.idempotency_key;
      for (let j = 0; j < m.extra_endpoint_ids.length; j++) {
        params.extra_ns.push(i + 1);
        params.extra_endpoint_ids.push(m.extra_endpoint_ids[j]!);
        params.extra_urls.push(m.extra_urls[j]!);
      }
    }
    ({ bytes: params.payloads, starts: params.payload_starts, lengths: params.payload_lengths } = packBytes(payloads));
    const traced = ordered.filter((p) => p.message.traceparent !== undefined);
    const res =
      traced.length === 0
        ? await publishMessages.run(this.db, params)
        : await this.db.transaction(async (tx) => {
            const published = await publishMessages.run(tx, params);
            const fresh = new Set(published.rows.filter((r) => !r.duplicate).map((r) => r.id));
            const mine = traced.filter((p) => fresh.has(p.message.params.id));
            await storeTraceparents(
              tx,
              {
                tenantIds: mine.map((p) => p.message.params.tenant_id),
                ids: mine.map((p) => p.message.params.id),
                traceparents: mine.map((p) => p.message.traceparent!),
              },
              `${mine.length} messages`,
            );
            return published;
          });
    const answers = new Map<Pending, PublishResult>();
    for (const row of res.rows) answers.set(ordered[row.n - 1]!, { id: row.id, deliveries: Number(row.deliveries), duplicate: row.duplicate });
    return answers;
  }

  /** One transaction per message, in arrival order, after the batch failed: each gets its own answer. */
  private async fallback(batch: Pending[]): Promise<void> {
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      try {
        p.resolve(await (p.message.traceparent ? this.db.transaction((tx) => publishPrepared(tx, p.message)) : publishPrepared(this.db, p.message)));
      } catch (err) {
        const failure = asTekilError(err, p.message);
        if (failure.code === 'STORE_UNAVAILABLE') {
          // The store went away mid-fallback: fail the rest now instead of one timeout each.
          for (let j = i; j < batch.length; j++) batch[j]!.reject(publishFailure(failure.cause ?? failure, batch[j]!.message.type));
          return;
        }
        p.reject(failure);
      }
    }
  }
}

/**
 * An idempotency key is its tenant's (migration 025: unique on (tenant_id, idempotency_key)): two
 * tenants' messages under one key are two messages. NUL never occurs in either part (publish refuses it
 * in a key; tenant ids are validated), so it separates them.
 */
function tenantKey(tenantId: string, key: string | null): string | null {
  return key === null ? null : `${tenantId}\u0000${key}`;
}

function compareKeys(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

/** publishPrepared throws coded errors, but its repeat lookup may throw the store's own. */
function asTekilError(err: unknown, message: PreparedMessage): TekilError {
  return isTekilError(err) ? err : publishFailure(err, message.type);
}

/** The batcher configured from `sending.publish` settings, with the process's metrics and logger. */
export function createPublishBatcher(ctx: Context): PublishBatcher {
  const p = ctx.config.sending.publish;
  return new PublishBatcher(ctx.db, {
    maxMessages: p.batch_max_messages,
    maxBytes: p.batch_max_bytes,
    queueMaxMessages: p.queue_max_messages,
    maxInFlight: p.max_in_flight,
    gatherTurn: ctx.db.kind === 'pglite',
    metrics: publishBatchMetrics(ctx.metrics),
    logger: ctx.logger.child({ service: 'publish-batcher' }),
  });
}
