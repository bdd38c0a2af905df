import type { Queryable } from '../../db.js';

/** The sealed secrets that sign now: the current one first, then any still inside a rotation window. */
const SIGNING_SECRETS = `
SELECT secret_enc, expires_at FROM endpoint_secrets
WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now())
ORDER BY expires_at DESC NULLS FIRST, id DESC`;

export async function selectSigningSecrets(db: Queryable, endpointId: string): Promise<Array<{ secret_enc: string; expires_at: Date | null }>> {
  const { rows } = await db.query<{ secret_enc: string; expires_at: Date | null }>(SIGNING_SECRETS, [endpointId], { name: 'tekil_outbox_signing_secrets' });
  return rows;
}
