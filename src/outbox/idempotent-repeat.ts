import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { publishedRequest } from '../store/sql/outbox/idempotent-request.js';
import type { ExtraDestination } from './publish.js';

/** A publishing request over HTTP, as far as it decides what is sent. */
export interface PublishRequest {
  tenantId: string;
  type: string;
  resourceId: string | null;
  data: unknown;
  extraDestinations: readonly ExtraDestination[];
}

/**
 * A repeated Idempotency-Key must come with the same request: the same type, resource id, `data`
 * (compared as JSON, key order aside) and extra destinations. A different one is a client mistake,
 * and answering it with the first message would hide it (as Stripe does, it is refused with 422
 * IDEMPOTENCY_KEY_REUSED). The message's stored envelope is the record of its request; once retention
 * has trimmed it, only the type, resource id and extra destinations are compared. A key is its tenant's
 * (migration 025): the first message is looked up under the request's tenant, so the tenant always matches.
 */
export async function checkIdempotentRepeat(db: Queryable, messageId: string, key: string, request: PublishRequest): Promise<void> {
  const row = (await publishedRequest.run(db, { tenantId: request.tenantId, id: messageId })).rows[0];
  if (!row) return; // deleted by retention meanwhile: nothing left to differ from
  const differs: string[] = [];
  if (row.event_type !== request.type) differs.push('type');
  if (row.resource_id !== request.resourceId) differs.push('resource_id');
  const stored = row.trimmed ? undefined : storedData(row.payload);
  if (stored !== undefined && canonicalJson(stored.data) !== canonicalJson(request.data)) differs.push('data');
  if (destinationSet(row.extras.map(([endpointId, url]) => ({ endpointId, url }))) !== destinationSet(request.extraDestinations))
    differs.push('extra_destinations');
  if (differs.length === 0) return;
  throw new TekilError('IDEMPOTENCY_KEY_REUSED', `Idempotency-Key "${key}" was first used for message ${messageId} with another ${differs.join(', ')}`, {
    hint: 'send the same request again to get that message back, or use a new Idempotency-Key for a new message',
  });
}

/** The envelope's `data`, or undefined when the stored bytes are not tekil's envelope (a library caller's own body). */
function storedData(payload: Uint8Array): { data: unknown } | undefined {
  try {
    // The embedded store answers a Uint8Array, Postgres a Buffer.
    const envelope = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8')) as unknown;
    return envelope !== null && typeof envelope === 'object' && 'data' in envelope ? { data: (envelope as { data: unknown }).data } : undefined;
  } catch {
    return undefined;
  }
}

/** JSON with object keys sorted, so two renderings of one value compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Extra destinations as a set (the store keeps one delivery per endpoint and URL). */
function destinationSet(extras: readonly ExtraDestination[]): string {
  return JSON.stringify([...new Set(extras.map((x) => JSON.stringify([x.endpointId, x.url])))].sort());
}
