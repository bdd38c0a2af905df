import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

/** The sealed secrets that sign now: the current one first, then any still inside a rotation window. */
const signingSecrets = defineStatement<{ endpointId: string }, { secret_enc: string; expires_at: Date | null }>(
  'tekil_outbox_signing_secrets',
  `
SELECT secret_enc, expires_at FROM endpoint_secrets
WHERE endpoint_id = $endpointId AND (expires_at IS NULL OR expires_at > now())
ORDER BY expires_at DESC NULLS FIRST, id DESC`,
  'prepared',
);

export async function selectSigningSecrets(db: Queryable, endpointId: string): Promise<Array<{ secret_enc: string; expires_at: Date | null }>> {
  return (await signingSecrets.run(db, { endpointId })).rows;
}

/**
 * The same for many endpoints at once: the dispatcher asks for every endpoint of a claim whose secrets
 * it has not cached, in one round trip (with 40,000 endpoints, one query per endpoint was more Postgres
 * time per delivery than the claim; bench:tenants).
 */
const signingSecretsMany = defineStatement<{ endpointIds: string[] }, { endpoint_id: string; secret_enc: string; expires_at: Date | null }>(
  'tekil_outbox_signing_secrets_many',
  `
SELECT endpoint_id, secret_enc, expires_at FROM endpoint_secrets
WHERE endpoint_id = ANY ($endpointIds::text[]) AND (expires_at IS NULL OR expires_at > now())
ORDER BY endpoint_id, expires_at DESC NULLS FIRST, id DESC`,
  'prepared',
);

export async function selectSigningSecretsMany(
  db: Queryable,
  endpointIds: string[],
): Promise<Array<{ endpoint_id: string; secret_enc: string; expires_at: Date | null }>> {
  return (await signingSecretsMany.run(db, { endpointIds })).rows;
}
