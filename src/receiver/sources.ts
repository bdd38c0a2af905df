import type { TekilConfig } from '../config/schema.js';
import { createScheme } from '../signing/index.js';
import type { SignatureScheme } from '../signing/types.js';
import { createExtractor, type Extractor } from './extract.js';
import { createHeaderPicker, locatorHeaders } from './headers.js';
import type { IncomingHeaders } from '../signing/types.js';

/** Everything the hot path needs about one source, prepared once at start-up. */
export interface ReceiverSource {
  name: string;
  scheme: SignatureScheme;
  secrets: readonly string[];
  toleranceSec: number;
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
      toleranceSec: cfg.tolerance,
      extract: createExtractor(cfg, d),
      pickHeaders: createHeaderPicker(
        locatorHeaders([cfg.event_id ?? d.event_id, cfg.resource_id ?? d.resource_id, cfg.event_type ?? d.event_type, cfg.occurred_at ?? d.occurred_at]),
      ),
    });
  }
  return out;
}
