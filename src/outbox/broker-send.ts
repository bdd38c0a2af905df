import { BrokerPool } from '../destinations/pool.js';
import type { BrokerMessage } from '../destinations/publisher.js';
import type { DestinationGuard } from '../http/destination-guard.js';
import { selectEndpointDestination } from '../store/sql/outbox/endpoints.js';
import type { Queryable } from '../store/db.js';
import type { AttemptOutcome } from './attempt-decision.js';
import { DEFAULT_TENANT_ID } from './publish.js';
import type { SecretBox } from './secrets.js';
import type { SenderGuards } from './sender.js';

/** Answers kept in the history: the broker's confirm, ack or entry id is short. */
const DETAIL_KEEP_CHARS = 4096;

interface CachedDestination {
  updatedAt: number;
  url: Promise<string>;
}

/**
 * The dispatcher's side of broker endpoints (docs/destinations.md): the endpoint's sealed URL, opened
 * once per change of the endpoint (its updated_at), and the pooled connections publishes share. An
 * attempt's outcome is recorded like an HTTP one: no status code, the broker's answer as the response,
 * or its error. A destination the guard refuses is retried on the ladder, as an HTTP one is (the
 * operator may open its network meanwhile).
 */
export class BrokerSender {
  private readonly pool = new BrokerPool();
  private readonly destinations = new Map<string, CachedDestination>();

  constructor(
    private readonly sql: Queryable,
    private readonly box: SecretBox,
    private readonly guards: SenderGuards,
  ) {}

  private destinationOf(endpointId: string, updatedAtMs: number): Promise<string> {
    const cached = this.destinations.get(endpointId);
    if (cached && cached.updatedAt === updatedAtMs) return cached.url;
    const url = selectEndpointDestination.run(this.sql, { id: endpointId }).then(({ rows }) => {
      const sealed = rows[0]?.destination_enc;
      if (!sealed) throw new Error('the endpoint has no broker URL stored');
      return this.box.decrypt(sealed);
    });
    url.catch(() => {
      if (this.destinations.get(endpointId)?.url === url) this.destinations.delete(endpointId);
    });
    if (this.destinations.size >= 10_000) this.destinations.clear();
    this.destinations.set(endpointId, { updatedAt: updatedAtMs, url });
    return url;
  }

  async send(target: { endpointId: string; updatedAtMs: number; tenantId: string; timeoutMs: number }, message: BrokerMessage): Promise<AttemptOutcome> {
    const url = await this.destinationOf(target.endpointId, target.updatedAtMs);
    const guard: DestinationGuard = target.tenantId === DEFAULT_TENANT_ID ? this.guards.operator : this.guards.tenants;
    const result = await this.pool.publish(url, guard, message, target.timeoutMs);
    return {
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      succeeded: result.ok,
      statusCode: null,
      error: result.ok ? null : result.error,
      responseBody: result.ok ? result.detail.slice(0, DETAIL_KEEP_CHARS) : null,
      retryAfterMs: undefined,
      unsendable: result.unusable === true,
    };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
