import { z } from 'zod';
import type { Queryable } from '../store/db.js';
import {
  cancelUnsentDeliveries,
  deleteEndpointSecrets,
  deleteExpiredSecrets,
  expireLiveSecrets,
  insertEndpointSecret,
  listEndpoints,
  markEndpointDeleted,
  selectEndpoint,
  touchEndpoint,
  insertEndpoint,
  updateEndpointStatement,
  type EndpointRow,
  type EndpointUpdateParams,
  type UpdatableColumn,
} from '../store/sql/outbox/endpoints.js';
import { selectSigningSecrets, selectSigningSecretsMany, type SigningRow } from '../store/sql/outbox/signing-secrets.js';
import { parseSecretKey, type Ed25519SigningKey } from '../signing/ed25519.js';
import type { SendingConfig } from '../config/sending.js';
import { ladderSetting } from '../config/sending.js';
import { durationMs } from '../config/units.js';
import { TekilError } from '../errors.js';
import { scopeTenantId, type Scope } from '../scope.js';
import { parseInput } from '../validation.js';
import type { DestinationGuard } from '../http/destination-guard.js';
import { publicOnlyGuard } from './sender.js';
import { eventIdModes, newEndpointId } from './ids.js';
import { writeInheritedSettings } from '../store/sql/outbox/inherited-settings.js';
import { fileDefaults } from './inherited-settings.js';
import { DEFAULT_TENANT_ID } from './publish.js';
import { ladderGapsMs } from './ladders.js';
import { generateEndpointSecret, type SecretBox } from './secrets.js';
import { ensureSigningKey, signingModes, type SigningMode } from './signing-keys.js';
import { hmacOptionProblems, hmacSchemeOptions, templateSecretNames, type HmacSchemeOptions } from '../signing/index.js';
import { endpointSchemes, type Endpoint } from './types.js';
import { checkBrokerUrl, destinationKinds, kindOfUrl, redactUrl, type DestinationKind } from '../destinations/broker-url.js';

/** Text stored in a text column: Postgres refuses NUL in text, so it is refused here with a clear 400. */
export const storableText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL bytes');

/** Longest endpoint timeout: an attempt holds a request slot and its lease for this long at most. */
export const MAX_ENDPOINT_TIMEOUT_MS = 5 * 60_000;
export const endpointTimeout = durationMs.refine((ms) => ms >= 1 && ms <= MAX_ENDPOINT_TIMEOUT_MS, 'expected a timeout from 1ms to 5m');

/** A rate limit: requests per second, minute or hour (`20/s`, `600/m`, `1000/h`). */
export const rateLimitSetting = z.string().regex(/^[1-9]\d{0,6}\/(s|m|h)$/, 'a rate limit is a count per s, m or h, e.g. 20/s');

/** The gap between two requests a rate limit allows, in milliseconds. */
export function sendIntervalMs(rateLimit: string): number {
  const [count, unit] = rateLimit.split('/') as [string, 's' | 'm' | 'h'];
  return { s: 1_000, m: 60_000, h: 3_600_000 }[unit] / Number(count);
}

const eventTypePattern = z
  .string()
  .regex(/^(\*|[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*(\.\*)?)$/, 'event types are exact (invoice.paid), a prefix pattern (invoice.*) or *');

/** What the API and CLI accept to create an endpoint. Durations take `10s` or a number of seconds. */
export const endpointCreateSchema = z
  .object({
    /** The tenant it belongs to (default: the default tenant). Fixed once created. */
    tenant_id: storableText(64).pipe(z.string().min(1)).optional(),
    /**
     * What the endpoint is: `http` (a URL tekil POSTs to), or a broker tekil publishes to (`rabbitmq`,
     * `nats`, `redis`; docs/destinations.md). Absent: read from the URL's scheme.
     */
    kind: z.enum(destinationKinds).optional(),
    /** The HTTP URL, or the broker's URL (amqp://, nats://, redis://), credentials included: stored encrypted, shown without its password. */
    url: storableText(2048).pipe(z.string().min(1)),
    description: storableText(500).optional(),
    event_types: z.array(eventTypePattern).max(100).optional(),
    ladder: ladderSetting.optional(),
    timeout: endpointTimeout.optional(),
    max_in_flight: z.number().int().positive().max(1000).optional(),
    /** Most requests per second, minute or hour (`20/s`), across every dispatcher; null: no limit. */
    rate_limit: rateLimitSetting.nullable().optional(),
    scheme: z.enum(endpointSchemes).optional(),
    /** For scheme `hmac`: how the signature is made and where it goes, as for an inbound `hmac` source. */
    hmac: hmacSchemeOptions.optional(),
    /** Bring your own secret (moving from another sender); one is generated otherwise. */
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]{24,}={0,2}$/, 'a secret is "whsec_" and at least 18 bytes of base64')
      .optional(),
    enabled: z.boolean().optional(),
    /**
     * The event id its receivers see (webhook-id and the body's event_id): `message` (default) is the
     * message's, the same at every endpoint; `delivery` gives each delivery its own, kept in its retries
     * and replays.
     */
    event_id: z.enum(eventIdModes).optional(),
    /**
     * What its requests carry (scheme `standard` only): `v1` (HMAC with its secret, the default), `v1a`
     * (Ed25519 with its tenant's key, docs/signing.md) or `both`, while its receiver moves from one to the other.
     */
    signing: z.enum(signingModes).optional(),
  })
  .strict();
export type EndpointCreateInput = z.input<typeof endpointCreateSchema>;

/** The settings an endpoint may take from its tenant (else the file) instead of setting them itself. */
export const inheritableSettings = ['ladder', 'timeout', 'max_in_flight', 'rate_limit', 'event_id'] as const;
export type InheritableSetting = (typeof inheritableSettings)[number];

export const endpointUpdateSchema = endpointCreateSchema
  .omit({ secret: true, tenant_id: true })
  .partial()
  .extend({
    /** Settings handed back to the tenant's defaults (else the file's): the endpoint stops setting them itself. */
    inherit: z.array(z.enum(inheritableSettings)).max(inheritableSettings.length).optional(),
  })
  .strict();
export type EndpointUpdateInput = z.input<typeof endpointUpdateSchema>;

/**
 * The `hmac` scheme needs its description and the others take none: checked where the endpoint's
 * scheme is known (a change may give only one of the two). Answers the options to store.
 */
function schemeOptions(scheme: string, hmac: HmacSchemeOptions | null | undefined): HmacSchemeOptions | null {
  if (scheme !== 'hmac') {
    if (hmac) throw new TekilError('VALIDATION_FAILED', `hmac: only for scheme "hmac" (this endpoint signs with "${scheme}")`);
    return null;
  }
  if (!hmac)
    throw new TekilError('VALIDATION_FAILED', 'scheme "hmac" needs hmac: its signature_header, algorithm, encoding, …', {
      hint: 'see docs/sending.md, "Signatures"',
    });
  const problems = hmacOptionProblems(hmac);
  // The dispatcher sends the message's bytes as published and signs in a header, with the endpoint's
  // secret alone: a signature written into the body, or a named secret, would leave requests unsigned.
  if (hmac.signature !== undefined && !hmac.signature.startsWith('header:'))
    problems.push('hmac.signature: an endpoint signs in a header (signature_header or signature: header:<name>)');
  const named = templateSecretNames(hmac.signed_payload);
  if (named.length) problems.push(`hmac.signed_payload: an endpoint has one secret, {secret:key}; {secret:${named[0]}} is for receiving`);
  if (problems.length) throw new TekilError('VALIDATION_FAILED', problems.join('; '));
  return hmac;
}

/** `v1a` is Standard Webhooks' own: another scheme has no slot for an Ed25519 signature. */
function signingMode(scheme: string, signing: SigningMode): SigningMode {
  if (signing !== 'v1' && scheme !== 'standard') {
    throw new TekilError('VALIDATION_FAILED', `signing: "${signing}" is for scheme "standard" (this endpoint signs with "${scheme}")`);
  }
  return signing;
}

export interface EndpointStoreOptions {
  sending: SendingConfig;
  box: SecretBox;
  /** The default tenant's (the operator's) destinations. */
  guard: DestinationGuard;
  /** Every other tenant's destinations (`tenants.allow_networks`); absent: public addresses only. */
  tenantGuard?: DestinationGuard;
}

/** Where an endpoint sends, as stored: its kind, the URL shown (no password) and the sealed broker URL. */
interface StoredDestination {
  kind: DestinationKind;
  url: string;
  destination_enc: string | null;
}

/**
 * Checks a destination (its kind, its URL, the guard's networks) and makes what is stored of it: an
 * HTTP URL as it is; a broker URL shown without its password and kept whole only encrypted.
 */
async function storedDestination(guard: DestinationGuard, box: SecretBox, url: string, kind: DestinationKind | undefined): Promise<StoredDestination> {
  const ofUrl = kindOfUrl(url);
  if (ofUrl === undefined) {
    throw new TekilError('VALIDATION_FAILED', 'url: expected an http(s), amqp, nats or redis URL', { hint: 'see docs/destinations.md' });
  }
  if (kind !== undefined && kind !== ofUrl) {
    throw new TekilError('VALIDATION_FAILED', `kind "${kind}" does not match a ${ofUrl === 'http' ? 'http(s)' : ofUrl} URL`, {
      hint: 'see docs/destinations.md',
    });
  }
  if (ofUrl === 'http') {
    await guard.checkUrl(url);
    return { kind: 'http', url, destination_enc: null };
  }
  await checkBrokerUrl(guard, url);
  return { kind: ofUrl, url: redactUrl(url), destination_enc: box.encrypt(url) };
}

/** An endpoint as stored: its jsonb columns (ladder, hmac) were validated by this module before they were written. */
const asEndpoint = (row: EndpointRow): Endpoint => row as Endpoint;

/** Endpoint storage: create, read, change, rotate secrets. Every function takes the store or a transaction. */
export function endpointStore({ sending, box, guard, tenantGuard = publicOnlyGuard() }: EndpointStoreOptions) {
  const guardOf = (tenantId: string): DestinationGuard => (tenantId === DEFAULT_TENANT_ID ? guard : tenantGuard);

  /** Any tenant's endpoint: for this module's own reads, whose caller already answered for the scope. */
  async function read(db: Queryable, id: string): Promise<Endpoint> {
    const { rows } = await selectEndpoint.run(db, { id });
    if (!rows[0]) throw new TekilError('NOT_FOUND', `no endpoint ${id}`);
    return asEndpoint(rows[0]);
  }

  /** Writes the endpoint's inherited settings; answers it again when that changed any. */
  async function inherit(db: Queryable, id: string): Promise<Endpoint | undefined> {
    const { rows } = await writeInheritedSettings.run(db, {
      endpointId: id,
      tenantId: null,
      ...fileDefaults(sending),
    });
    return rows.length > 0 ? read(db, id) : undefined;
  }

  return {
    /** One endpoint of the scope: another tenant's is answered as one that does not exist. */
    async get(db: Queryable, scope: Scope, id: string): Promise<Endpoint> {
      const endpoint = await read(db, id);
      if (scope.tenantId !== undefined && endpoint.tenant_id !== scope.tenantId) throw new TekilError('NOT_FOUND', `no endpoint ${id}`);
      return endpoint;
    },

    async create(db: Queryable, raw: unknown): Promise<{ endpoint: Endpoint; secret: string }> {
      const input = parseInput(endpointCreateSchema, raw);
      const destination = await storedDestination(guardOf(input.tenant_id ?? DEFAULT_TENANT_ID), box, input.url, input.kind);
      const ladder = input.ladder ?? sending.ladder;
      ladderGapsMs(ladder);
      const scheme = input.scheme ?? 'standard';
      const hmac = schemeOptions(scheme, input.hmac);
      const signing = signingMode(scheme, input.signing ?? 'v1');
      const id = newEndpointId();
      const secret = input.secret ?? generateEndpointSecret();
      const tenantId = input.tenant_id ?? DEFAULT_TENANT_ID;
      const { rows } = await insertEndpoint.run(db, {
        id,
        tenant_id: tenantId,
        ...destination,
        description: input.description ?? null,
        event_types: input.event_types ?? [],
        ladder_json: JSON.stringify(ladder),
        timeout_ms: input.timeout ?? sending.timeout,
        max_in_flight: input.max_in_flight ?? sending.max_in_flight,
        scheme,
        hmac_json: hmac ? JSON.stringify(hmac) : null,
        enabled: input.enabled ?? true,
        rate_limit: input.rate_limit ?? null,
        send_interval_ms: input.rate_limit ? sendIntervalMs(input.rate_limit) : null,
        event_id: input.event_id ?? sending.event_id,
        own_settings: inheritableSettings.filter((s) => input[s] !== undefined),
        signing,
      });
      if (!rows[0]) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${tenantId}`, { hint: 'create it first: POST /api/v1/tenants (tekil tenants create)' });
      await insertEndpointSecret.run(db, { endpointId: id, secretEnc: box.encrypt(secret) });
      if (signing !== 'v1') await ensureSigningKey(db, box, tenantId);
      // What it does not set itself comes from its tenant (the file's defaults above stand where the tenant has none).
      const inherited = await inherit(db, id);
      return { endpoint: inherited ?? asEndpoint(rows[0]), secret };
    },

    /** The scope's live endpoints. */
    async list(db: Queryable, scope: Scope): Promise<Endpoint[]> {
      const { rows } = await listEndpoints.run(db, { tenantId: scopeTenantId(scope) });
      return rows.map(asEndpoint);
    },

    async update(db: Queryable, id: string, raw: unknown): Promise<Endpoint> {
      const input = parseInput(endpointUpdateSchema, raw);
      let destination: StoredDestination | undefined;
      // A form sends the URL back as it was shown: a broker's with *** for its password. The same text
      // again changes nothing (storing it would replace the password with ***).
      const shown = input.url !== undefined || input.kind !== undefined ? await read(db, id) : undefined;
      if (input.url !== undefined && !(shown?.kind !== 'http' && input.url === shown?.url))
        destination = await storedDestination(guardOf(shown!.tenant_id), box, input.url, input.kind);
      else if (input.kind !== undefined && input.kind !== shown!.kind)
        throw new TekilError('VALIDATION_FAILED', `kind: changing to "${input.kind}" needs its url too`, { hint: 'see docs/destinations.md' });
      if (input.ladder !== undefined) ladderGapsMs(input.ladder);
      let hmac: HmacSchemeOptions | null | undefined;
      let signing: SigningMode | undefined;
      if (input.scheme !== undefined || input.signing !== undefined) {
        const current = await read(db, id);
        signing = signingMode(input.scheme ?? current.scheme, input.signing ?? (current.signing as SigningMode));
        if (signing !== 'v1') await ensureSigningKey(db, box, current.tenant_id);
      }
      if (input.scheme !== undefined || input.hmac !== undefined) {
        const current = await read(db, id);
        const scheme = input.scheme ?? current.scheme;
        // Moving to another scheme drops the hmac description; staying on hmac keeps it unless replaced.
        hmac = schemeOptions(scheme, input.hmac ?? (input.scheme === undefined || input.scheme === 'hmac' ? current.hmac : null));
      }
      const columns: UpdatableColumn[] = [];
      const values: EndpointUpdateParams = { id };
      let resetStreak = false;
      const set = (column: UpdatableColumn, value: unknown) => {
        columns.push(column);
        values[column] = value;
      };
      if (destination !== undefined) {
        set('kind', destination.kind);
        set('url', destination.url);
        set('destination_enc', destination.destination_enc);
      }
      if (input.description !== undefined) set('description', input.description);
      if (input.event_types !== undefined) set('event_types', input.event_types);
      if (input.ladder !== undefined) set('ladder', JSON.stringify(input.ladder));
      if (input.timeout !== undefined) set('timeout_ms', input.timeout);
      if (input.max_in_flight !== undefined) set('max_in_flight', input.max_in_flight);
      if (input.scheme !== undefined) set('scheme', input.scheme);
      if (input.rate_limit !== undefined) {
        set('rate_limit', input.rate_limit);
        set('send_interval_ms', input.rate_limit === null ? null : sendIntervalMs(input.rate_limit));
      }
      if (hmac !== undefined) set('scheme_options', hmac ? JSON.stringify(hmac) : null);
      if (input.event_id !== undefined) set('event_id', input.event_id);
      if (signing !== undefined) set('signing', signing);
      if (input.enabled !== undefined) {
        set('enabled', input.enabled);
        if (input.enabled) resetStreak = true;
        else set('disabled_reason', 'disabled by an operator');
      }
      // A setting given becomes the endpoint's own; one handed back (inherit) its tenant's again.
      const given = inheritableSettings.filter((s) => input[s] !== undefined);
      const handedBack = input.inherit ?? [];
      const both = given.filter((s) => handedBack.includes(s));
      if (both.length > 0) throw new TekilError('VALIDATION_FAILED', `${both.join(', ')}: given a value and in inherit at once`);
      if (given.length > 0 || handedBack.length > 0) {
        const own = new Set((await read(db, id)).own_settings);
        for (const s of given) own.add(s);
        for (const s of handedBack) own.delete(s);
        set(
          'own_settings',
          inheritableSettings.filter((s) => own.has(s)),
        );
      }
      if (columns.length === 0) return read(db, id);
      const { rows } = await updateEndpointStatement(columns, resetStreak).run(db, values);
      if (!rows[0]) throw new TekilError('NOT_FOUND', `no endpoint ${id}`);
      if (handedBack.length > 0) return (await inherit(db, id)) ?? asEndpoint(rows[0]);
      return asEndpoint(rows[0]);
    },

    async setEnabled(db: Queryable, id: string, enabled: boolean): Promise<Endpoint> {
      return this.update(db, id, { enabled });
    },

    /** Deletes an endpoint: it stops receiving, its unsent deliveries are cancelled, its history stays. */
    async remove(db: Queryable, id: string): Promise<{ cancelled: number }> {
      const { rows } = await markEndpointDeleted.run(db, { id });
      if (!rows[0]) throw new TekilError('NOT_FOUND', `no endpoint ${id}`);
      await deleteEndpointSecrets.run(db, { endpointId: id });
      const cancelled = await cancelUnsentDeliveries.run(db, { endpointId: id });
      return { cancelled: cancelled.rowCount };
    },

    /**
     * A new secret signs from now on; the previous ones keep signing beside it until the window ends,
     * so receivers can switch without losing a delivery.
     */
    async rotateSecret(db: Queryable, id: string, windowMs = sending.rotation_window): Promise<{ secret: string; previous_expires_at: Date }> {
      await read(db, id);
      const secret = generateEndpointSecret();
      const { rows } = await expireLiveSecrets.run(db, { endpointId: id, windowMs });
      await deleteExpiredSecrets.run(db, { endpointId: id });
      await insertEndpointSecret.run(db, { endpointId: id, secretEnc: box.encrypt(secret) });
      await touchEndpoint.run(db, { id });
      return { secret, previous_expires_at: rows[0]?.expires_at ?? new Date() };
    },
  };
}

export type EndpointStore = ReturnType<typeof endpointStore>;

/**
 * What signs an endpoint's requests now: its secrets (the current one first, then any still inside a
 * rotation window), its signing mode, and for `v1a` / `both` its tenant's live Ed25519 keys (current
 * first). `validUntil`: when the first of them leaves its window (epoch ms; Infinity when none does).
 */
export interface SigningMaterial {
  secrets: string[];
  signing: SigningMode;
  keys: Ed25519SigningKey[];
  validUntil: number;
}

export async function signingSecrets(db: Queryable, box: SecretBox, endpointId: string): Promise<SigningMaterial> {
  return openSecrets(box, await selectSigningSecrets(db, endpointId));
}

function openSecrets(box: SecretBox, rows: readonly SigningRow[]): SigningMaterial {
  const expiries = rows.map((r) => r.expires_at?.getTime()).filter((t): t is number => t !== undefined);
  const material: SigningMaterial = { secrets: [], signing: 'v1', keys: [], validUntil: expiries.length ? Math.min(...expiries) : Infinity };
  for (const row of rows) {
    if (row.signing !== null) material.signing = row.signing as SigningMode;
    if (row.secret_enc === null) continue;
    if (row.signing === null) material.secrets.push(box.decrypt(row.secret_enc));
    else material.keys.push(parseSecretKey(box.decrypt(row.secret_enc)));
  }
  return material;
}

/** signingSecrets for many endpoints in one query; an endpoint without a secret gets none. */
export async function signingSecretsMany(db: Queryable, box: SecretBox, endpointIds: string[]): Promise<Map<string, SigningMaterial>> {
  const byEndpoint = new Map<string, SigningRow[]>(endpointIds.map((id) => [id, []]));
  for (const row of await selectSigningSecretsMany(db, endpointIds)) byEndpoint.get(row.endpoint_id)?.push(row);
  return new Map([...byEndpoint].map(([id, rows]) => [id, openSecrets(box, rows)]));
}
