import { createScheme, type SignatureScheme } from '../signing/index.js';
import type { Queryable } from '../store/db.js';
import { signingSecrets } from './endpoints.js';
import { ladderGapsMs } from './ladders.js';
import type { SecretBox } from './secrets.js';
import type { EndpointScheme } from './types.js';

/** Secrets are cached briefly: a rotation changes the endpoint's updated_at, which invalidates them. */
const SECRET_CACHE_MS = 60_000;

interface CachedSecrets {
  updatedAt: number;
  expiresAt: number;
  secrets: Promise<string[]>;
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

  scheme(name: string): SignatureScheme {
    let scheme = this.schemes.get(name);
    if (!scheme) {
      scheme = createScheme(name as EndpointScheme);
      this.schemes.set(name, scheme);
    }
    return scheme;
  }

  /** The ladder's gaps, parsed once per distinct ladder; undefined when the stored ladder is unreadable. */
  ladder(json: string): number[] | undefined {
    if (this.ladders.has(json)) return this.ladders.get(json);
    let gaps: number[] | undefined;
    try {
      gaps = ladderGapsMs(JSON.parse(json) as string | string[]);
    } catch {
      gaps = undefined; // an unreadable ladder cannot schedule anything: the delivery fails
    }
    if (this.ladders.size >= 1_000) this.ladders.clear();
    this.ladders.set(json, gaps);
    return gaps;
  }

  /** The endpoint's signing secrets; a rotation (a new updated_at) or the end of a window refetches them. */
  secretsFor(endpointId: string, updatedAtMs: number): Promise<string[]> {
    const now = Date.now();
    const cached = this.secrets.get(endpointId);
    if (cached && cached.updatedAt === updatedAtMs && cached.expiresAt > now) return cached.secrets;
    const entry: CachedSecrets = { updatedAt: updatedAtMs, expiresAt: now + SECRET_CACHE_MS, secrets: Promise.resolve([]) };
    entry.secrets = signingSecrets(this.sql, this.box, endpointId).then(
      ({ secrets, validUntil }) => {
        // A secret leaving its rotation window must stop signing on time.
        entry.expiresAt = Math.min(entry.expiresAt, validUntil);
        return secrets;
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
