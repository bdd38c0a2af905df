import { Agent, request } from 'undici';
import type { JwksConfig } from '../config/source.js';
import { TekilError } from '../errors.js';
import { DestinationGuard } from '../http/destination-guard.js';
import { keyId, publicKeyFromRaw, type Ed25519PublicKey } from '../signing/ed25519.js';

/** A JWKS document larger than this is not a provider's handful of keys. */
const MAX_DOCUMENT_BYTES = 64 * 1024;

/**
 * A source's JWKS document (`jwks:`), fetched and kept for the receiver's `v1a` checks. It is fetched
 * when first needed, again once `max_age` has passed, and early when a request names a key id
 * (`webhook-key-id`) it does not hold: a provider's new key is trusted as soon as it is published.
 * Fetches are at most one per `min_refresh_interval` and one at a time, so requests naming made-up
 * key ids cost the provider nothing. The URL goes through a destination guard like every other
 * outbound request: public addresses only, unless `jwks.allow_networks` opens more.
 */
export class JwksKeys {
  private keys: Ed25519PublicKey[] = [];
  private fetchedAt: number | undefined;
  private lastAttemptAt: number | undefined;
  private lastError: unknown;
  private inFlight: Promise<void> | undefined;
  private readonly guard: DestinationGuard;
  private readonly agent: Agent;

  constructor(
    private readonly config: JwksConfig,
    private readonly source: string,
    private readonly now: () => number = Date.now,
  ) {
    this.guard = new DestinationGuard(config.allow_networks, { setting: ['sources', source, 'jwks', 'allow_networks'] });
    this.agent = new Agent({ connect: { lookup: this.guard.lookup }, connections: 2 });
  }

  /** How many times the document was fetched (tests and metrics). */
  fetches = 0;

  /**
   * The keys to check a request with. Throws JWKS_UNAVAILABLE (a 503, so the provider retries) while
   * no document has ever been fetched.
   */
  async keysFor(namedKids: readonly string[]): Promise<readonly Ed25519PublicKey[]> {
    const now = this.now();
    const stale = this.fetchedAt === undefined || now - this.fetchedAt >= this.config.max_age;
    const unknown = namedKids.some((kid) => !this.keys.some((k) => k.kid === kid));
    const mayFetch = this.lastAttemptAt === undefined || now - this.lastAttemptAt >= this.config.min_refresh_interval;
    if ((stale || unknown) && mayFetch) await this.refresh();
    else if (this.inFlight) await this.inFlight;
    if (this.fetchedAt === undefined) {
      throw new TekilError(
        'JWKS_UNAVAILABLE',
        `the JWKS document of source "${this.source}" cannot be fetched: ${(this.lastError as Error | undefined)?.message ?? 'not yet fetched'}`,
        {
          cause: this.lastError,
        },
      );
    }
    return this.keys;
  }

  private refresh(): Promise<void> {
    this.inFlight ??= this.fetchOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async fetchOnce(): Promise<void> {
    this.lastAttemptAt = this.now();
    this.fetches++;
    try {
      this.keys = await this.download();
      this.fetchedAt = this.now();
      this.lastError = undefined;
    } catch (err) {
      // The keys fetched before stay in use: a provider's brief outage must not refuse every delivery.
      this.lastError = err;
    }
  }

  private async download(): Promise<Ed25519PublicKey[]> {
    const url = new URL(this.config.url);
    this.guard.checkLiteral(url);
    const answer = await request(url, {
      method: 'GET',
      dispatcher: this.agent,
      headers: { accept: 'application/jwk-set+json, application/json', 'user-agent': 'tekil' },
      signal: AbortSignal.timeout(this.config.timeout),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_DOCUMENT_BYTES) {
        answer.body.destroy();
        throw new TekilError('JWKS_UNAVAILABLE', `the JWKS document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    if (answer.statusCode !== 200) throw new TekilError('JWKS_UNAVAILABLE', `the JWKS URL answered ${answer.statusCode}`);
    return parseJwks(Buffer.concat(chunks).toString('utf8'));
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * The Ed25519 keys of a JWKS document (RFC 7517, RFC 8037): `kty: OKP`, `crv: Ed25519`, `x`. Other
 * keys (RSA, EC) are skipped; a key without a `kid` gets its RFC 7638 thumbprint, the id tekil's own
 * documents use.
 */
export function parseJwks(text: string): Ed25519PublicKey[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new TekilError('JWKS_UNAVAILABLE', 'the JWKS document is not JSON', { cause: err });
  }
  const keys = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) throw new TekilError('JWKS_UNAVAILABLE', 'the JWKS document has no "keys" list');
  const out: Ed25519PublicKey[] = [];
  for (const entry of keys as Array<Record<string, unknown>>) {
    if (entry?.kty !== 'OKP' || entry.crv !== 'Ed25519' || typeof entry.x !== 'string') continue;
    if (entry.use !== undefined && entry.use !== 'sig') continue;
    const raw = Buffer.from(entry.x, 'base64url');
    if (raw.length !== 32) continue;
    try {
      out.push({ kid: typeof entry.kid === 'string' ? entry.kid : keyId(raw), key: publicKeyFromRaw(raw) });
    } catch {
      // not a point on the curve: skipped like a key of another type
    }
  }
  return out;
}
