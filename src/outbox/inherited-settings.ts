import type { SendingConfig } from '../config/sending.js';
import type { Queryable } from '../store/db.js';
import { writeInheritedSettings } from '../store/sql/outbox/inherited-settings.js';

/** The file's defaults, as the inherited-settings statement takes them. */
export function fileDefaults(sending: Pick<SendingConfig, 'ladder' | 'timeout' | 'max_in_flight' | 'event_id'>) {
  return { ladderJson: JSON.stringify(sending.ladder), timeoutMs: sending.timeout, maxInFlight: sending.max_in_flight, eventIdMode: sending.event_id };
}

/** Writes again the inherited settings of one tenant's endpoints (all tenants' with null), after its defaults or the file's changed. */
export async function refreshInheritedSettings(db: Queryable, sending: SendingConfig, tenant: string | null): Promise<number> {
  const { rows } = await writeInheritedSettings.run(db, { endpointId: null, tenantId: tenant, ...fileDefaults(sending) });
  return rows.length;
}
