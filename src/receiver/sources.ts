import type { TekilConfig } from '../config/schema.js';
import { createScheme } from '../signing/index.js';
import type { Acknowledgement, SignatureScheme } from '../signing/types.js';
import { plainLocators } from '../signing/request-fields.js';
import { createExtractor, type Extractor } from './extract.js';
import { createHeaderPicker, locatorHeaders } from './headers.js';
import type { IncomingHeaders } from '../signing/types.js';
import { parsePublicKey, type Ed25519PublicKey } from '../signing/ed25519.js';
import { namedKeyIds } from '../signing/standard.js';
import { JwksKeys } from './jwks.js';

/** Everything the hot path needs about one source, prepared once at start-up. */
export interface ReceiverSource {
  name: string;
  scheme: SignatureScheme;
  secrets: readonly string[];
  namedSecrets: Readonly<Record<string, string>> | undefined;
  toleranceSec: number;
  /** `standard`'s configured Ed25519 public keys (`public_keys`), for `v1a`. */
  publicKeys: readonly Ed25519PublicKey[];
  /** `standard`'s JWKS document (`jwks`), for `v1a`; undefined without one. */
  jwks: JwksKeys | undefined;
  /** The answer to accepted and duplicate deliveries; undefined: the JSON status. */
  ack: Acknowledgement | undefined;
  extract: Extractor;
  pickHeaders(headers: IncomingHeaders): string;
}

export function compileSources(config: TekilConfig): Map<string, ReceiverSource> {
  const out = new Map<string, ReceiverSource>();
  for (const [name, cfg] of Object.entries(config.sources)) {
    const scheme = createScheme(cfg.scheme, cfg.hmac);
    const d = scheme.defaults;
    out.set(name, {
      name,
      scheme,
      secrets: cfg.secrets,
      namedSecrets: cfg.named_secrets,
      toleranceSec: cfg.tolerance,
      publicKeys: (cfg.public_keys ?? []).map(parsePublicKey),
      jwks: cfg.jwks ? new JwksKeys(cfg.jwks, name) : undefined,
      ack: cfg.ack ?? scheme.ack,
      extract: createExtractor(cfg, d),
      pickHeaders: createHeaderPicker(
        locatorHeaders([
          plainLocators(cfg.event_id ?? d.event_id),
          plainLocators(cfg.resource_id ?? d.resource_id),
          cfg.event_type ?? d.event_type,
          cfg.occurred_at ?? d.occurred_at,
          // The ordering guard reads its state from the stored delivery, so a state header is kept too.
          cfg.ordering?.state ? [cfg.ordering.state] : undefined,
        ]),
      ),
    });
  }
  return out;
}

/**
 * The public keys a request to this source is checked with: the configured ones and, with a JWKS,
 * its keys (fetched again first when the request names a key id not among them).
 */
export async function publicKeysFor(source: ReceiverSource, headers: IncomingHeaders): Promise<readonly Ed25519PublicKey[]> {
  if (!source.jwks) return source.publicKeys;
  const fetched = await source.jwks.keysFor(namedKeyIds(headers));
  return source.publicKeys.length === 0 ? fetched : [...source.publicKeys, ...fetched];
}
