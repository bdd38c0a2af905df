import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

/**
 * What signs an endpoint's requests now, sealed: its secrets (kid NULL), the current one first, then
 * any still inside a rotation window; and, for an endpoint that signs `v1a` or `both` (`signing`), its
 * tenant's live Ed25519 keys (kid set; one row with kid and key NULL when the tenant has none yet). One
 * round trip either way: this runs on every cache miss of the dispatcher.
 */
export interface SigningRow {
  secret_enc: string | null;
  expires_at: Date | null;
  kid: string | null;
  signing: string | null;
}

const KEYS_OF = (endpoints: string) => `
SELECT e.id AS endpoint_id, k.secret_key_enc AS secret_enc, k.expires_at, k.kid, e.signing, 0::bigint AS rank
FROM endpoints e LEFT JOIN tenant_signing_keys k ON k.tenant_id = e.tenant_id AND (k.expires_at IS NULL OR k.expires_at > now())
WHERE ${endpoints} AND e.signing <> 'v1'`;

const signingSecrets = defineStatement<{ endpointId: string }, SigningRow>(
  'tekil_outbox_signing_secrets',
  `
SELECT endpoint_id, secret_enc, expires_at, NULL::text AS kid, NULL::text AS signing, id AS rank FROM endpoint_secrets
WHERE endpoint_id = $endpointId AND (expires_at IS NULL OR expires_at > now())
UNION ALL ${KEYS_OF('e.id = $endpointId')}
ORDER BY expires_at DESC NULLS FIRST, rank DESC`,
  'prepared',
);

export async function selectSigningSecrets(db: Queryable, endpointId: string): Promise<SigningRow[]> {
  return (await signingSecrets.run(db, { endpointId })).rows;
}

/**
 * The same for many endpoints at once: the dispatcher asks for every endpoint of a claim whose secrets
 * it has not cached, in one round trip (with 40,000 endpoints, one query per endpoint was more Postgres
 * time per delivery than the claim; bench:tenants).
 */
const signingSecretsMany = defineStatement<{ endpointIds: string[] }, SigningRow & { endpoint_id: string }>(
  'tekil_outbox_signing_secrets_many',
  `
SELECT endpoint_id, secret_enc, expires_at, NULL::text AS kid, NULL::text AS signing, id AS rank FROM endpoint_secrets
WHERE endpoint_id = ANY ($endpointIds::text[]) AND (expires_at IS NULL OR expires_at > now())
UNION ALL ${KEYS_OF('e.id = ANY ($endpointIds::text[])')}
ORDER BY endpoint_id, expires_at DESC NULLS FIRST, rank DESC`,
  'prepared',
);

export async function selectSigningSecretsMany(db: Queryable, endpointIds: string[]): Promise<Array<SigningRow & { endpoint_id: string }>> {
  return (await signingSecretsMany.run(db, { endpointIds })).rows;
}
