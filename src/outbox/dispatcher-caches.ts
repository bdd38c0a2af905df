import { TekilError } from '../errors.js';
import { createScheme, hmacSchemeOptions, type SignatureScheme } from '../signing/index.js';
import type { Queryable } from '../store/db.js';
import { signingSecrets, signingSecretsMany, type SigningMaterial } from './endpoints.js';
import { ladderGapsMs } from './ladders.js';
import type { SecretBox } from './secrets.js';
import type { EndpointScheme, OutboxClaimedDelivery } from './types.js';

const NO_MATERIAL: SigningMaterial = { secrets: [], signing: 'v1', keys: [], validUntil: Infinity };

/** Secrets are cached briefly: a rotation changes the endpoint's updated_at, which invalidates them. */
const SECRET_CACHE_MS = 60_000;

interface CachedSecrets {
  updatedAt: number;
  expiresAt: number;
  secrets: Promise<SigningMaterial>;
}

/**
 * What the dispatcher looks up for every attempt and rarely changes: signature schemes, parsed ladders
 * and decrypted endpoint secrets. Kept per dispatcher, small, and keyed so a change is never missed.
 */
export class DispatcherCaches {
  private readonly schemes = new Map<string, SignatureScheme>();
  private readonly ladders = new Map<string, number[] | undefined>();
  private readonly secrets = new Map<string, CachedSecrets>();

  constructor(
    private readonly sql: Queryable,
    private readonly box: SecretBox,
  ) {}

  /** The signer for a scheme; `hmac` ones are keyed by their stored options, so a change is seen at once. */
  scheme(name: string, optionsJson: string | null): SignatureScheme {
    const key = optionsJson === null ? name : `${name} ${optionsJson}`;
    let scheme = this.schemes.get(key);
    if (!scheme) {
      const options = optionsJson === null ? undefined : hmacSchemeOptions.parse(JSON.parse(optionsJson));
      scheme = createScheme(name as EndpointScheme, options);
      if (this.schemes.size >= 1_000) this.schemes.clear();
      this.schemes.set(key, scheme);
    }
    return scheme;
  }

  /** The ladder's gaps, parsed once per distinct ladder; undefined when the stored ladder is unreadable. */
  ladder(json: string): number[] | undefined {
    if (this.ladders.has(json)) return this.ladders.get(json);
    let gaps: number[] | undefined;
    try {
      gaps = ladderGapsMs(JSON.parse(json) as string | string[], { bounded: false });
    } catch {
      gaps = undefined; // an unreadable ladder cannot schedule anything: the delivery fails
    }
    if (this.ladders.size >= 1_000) this.ladders.clear();
    this.ladders.set(json, gaps);
    return gaps;
  }

  /**
   * Fetches, in one query, the secrets of every endpoint of a claim that misses the cache, so a claim
   * over many endpoints (one per merchant) costs one round trip, not one per endpoint. secretsFor then
   * finds them cached. One missing endpoint is left to secretsFor's own query.
   */
  prefetchSecrets(rows: ReadonlyArray<Pick<OutboxClaimedDelivery, 'endpoint_id' | 'endpoint_updated_ms'>>): void {
    const now = Date.now();
    const missing = new Map<string, number>();
    for (const { endpoint_id: id, endpoint_updated_ms: updatedAt } of rows) {
      if (missing.has(id)) continue;
      const cached = this.secrets.get(id);
      if (cached && cached.updatedAt === updatedAt && cached.expiresAt > now) continue;
      missing.set(id, updatedAt);
    }
    if (missing.size < 2) return;
    const fetched = signingSecretsMany(this.sql, this.box, [...missing.keys()]);
    for (const [id, updatedAt] of missing) {
      const entry: CachedSecrets = { updatedAt, expiresAt: now + SECRET_CACHE_MS, secrets: Promise.resolve(NO_MATERIAL) };
      entry.secrets = fetched.then(
        (all) => {
          const material = all.get(id) ?? NO_MATERIAL;
          entry.expiresAt = Math.min(entry.expiresAt, material.validUntil);
          return material;
        },
        (err: unknown) => {
          if (this.secrets.get(id) === entry) this.secrets.delete(id);
          throw err;
        },
      );
      // Each claimed row's attempt awaits its entry; one never attempted (a stop) must not go unhandled.
      entry.secrets.catch(() => {});
      this.secrets.set(id, entry);
    }
  }

  /** The endpoint's signing secrets and keys; a rotation (a new updated_at) or the end of a window refetches them. */
  secretsFor(endpointId: string, updatedAtMs: number): Promise<SigningMaterial> {
    const now = Date.now();
    const cached = this.secrets.get(endpointId);
    if (cached && cached.updatedAt === updatedAtMs && cached.expiresAt > now) return cached.secrets;
    const entry: CachedSecrets = { updatedAt: updatedAtMs, expiresAt: now + SECRET_CACHE_MS, secrets: Promise.resolve(NO_MATERIAL) };
    entry.secrets = signingSecrets(this.sql, this.box, endpointId).then(
      (material) => {
        // A secret or key leaving its rotation window must stop signing on time.
        entry.expiresAt = Math.min(entry.expiresAt, material.validUntil);
        return material;
      },
      (err: unknown) => {
        this.secrets.delete(endpointId);
        throw err;
      },
    );
    this.secrets.set(endpointId, entry);
    return entry.secrets;
  }
}

/**
 * Headers a scheme's provider sends beside the signature, which its receivers route on: GitHub's and
 * Shopify's name the event type (`X-GitHub-Event`, `X-Shopify-Topic`); Stripe's body carries the id,
 * so `X-Webhook-Id` gives it to receivers that deduplicate on a header.
 */
export function schemeExtraHeaders(row: Pick<OutboxClaimedDelivery, 'scheme' | 'event_type' | 'message_id'>): Record<string, string> {
  switch (row.scheme) {
    case 'stripe':
      return { 'X-Webhook-Id': row.message_id };
    case 'github':
      return { 'X-GitHub-Event': row.event_type };
    case 'shopify':
      return { 'X-Shopify-Topic': row.event_type };
    default:
      return {};
  }
}

/**
 * GitHub's and Shopify's official verifiers compare one signature (`@octokit/webhooks-methods`
 * refuses a header with two), so those endpoints sign with the current secret only, as their
 * providers do: a rotation takes effect at once. The other schemes carry one signature per secret
 * inside the rotation window (the `hmac` scheme only when it has a separator).
 */
export function secretsThatSign(scheme: string, secrets: readonly string[]): readonly string[] {
  return scheme === 'github' || scheme === 'shopify' ? secrets.slice(0, 1) : secrets;
}

/**
 * What one request is signed with, by the endpoint's `signing`: its secrets (`v1`), its tenant's
 * Ed25519 keys (`v1a`), or both side by side while its receiver moves over. An endpoint set to `v1a`
 * whose tenant has no key is not sent unsigned: the attempt fails, naming why.
 */
export function signingInput(scheme: string, material: SigningMaterial): { secrets: readonly string[]; signingKeys: SigningMaterial['keys'] } {
  const secrets = material.signing === 'v1a' ? [] : secretsThatSign(scheme, material.secrets);
  const signingKeys = material.signing === 'v1' ? [] : material.keys;
  if (material.signing !== 'v1' && signingKeys.length === 0) {
    throw new TekilError('CONFLICT', `the endpoint signs ${material.signing} and its tenant has no Ed25519 key (tekil tenants rotate-key)`);
  }
  return { secrets, signingKeys };
}
