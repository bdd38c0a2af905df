import type { Queryable } from '../store/db.js';
import {
  deleteExpiredSigningKeys,
  expireLiveSigningKeys,
  insertSigningKey,
  lockTenantForKeys,
  selectLiveSigningKeys,
  selectPublicKeys,
  touchSigningEndpoints,
} from '../store/sql/outbox/signing-keys.js';
import { TekilError } from '../errors.js';
import { generateKeyPair, jwkOf, type Ed25519Jwk } from '../signing/ed25519.js';
import type { SecretBox } from './secrets.js';

/**
 * A tenant's Ed25519 key pairs (Standard Webhooks `v1a`, docs/signing.md "Ed25519"). One is current;
 * a rotation makes a new one current and lets the previous ones sign beside it for the window, as an
 * endpoint's secrets do. The secret key is sealed with the process's secret box; the public key is
 * public (the tenant's JWKS document lists it).
 */

export const signingModes = ['v1', 'v1a', 'both'] as const;
export type SigningMode = (typeof signingModes)[number];

/** A key as the API shows it: never its secret half. */
export interface SigningKeyView {
  kid: string;
  public_key: string;
  created_at: Date;
  /** null for the current key; set while a rotated-out key still signs. */
  expires_at: Date | null;
}

async function lockTenant(db: Queryable, tenantId: string): Promise<void> {
  const { rows } = await lockTenantForKeys.run(db, { tenantId });
  if (!rows[0]) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${tenantId}`);
}

async function addKey(db: Queryable, box: SecretBox, tenantId: string): Promise<SigningKeyView> {
  const pair = generateKeyPair();
  const { rows } = await insertSigningKey.run(db, { tenantId, kid: pair.kid, publicKey: pair.publicKey, secretKeyEnc: box.encrypt(pair.secretKey) });
  await touchSigningEndpoints.run(db, { tenantId });
  return rows[0] as SigningKeyView;
}

/** The tenant's live keys, current first. */
export async function listSigningKeys(db: Queryable, tenantId: string): Promise<SigningKeyView[]> {
  return (await selectLiveSigningKeys.run(db, { tenantId })).rows;
}

/** The tenant's current key, made when it has none. Call inside a transaction. */
export async function ensureSigningKey(db: Queryable, box: SecretBox, tenantId: string): Promise<SigningKeyView> {
  await lockTenant(db, tenantId);
  const current = (await listSigningKeys(db, tenantId)).find((k) => k.expires_at === null);
  return current ?? addKey(db, box, tenantId);
}

/**
 * A new key pair signs from now on; the live ones keep signing beside it until `windowMs` from now
 * (a key already expiring sooner keeps its own end). Call inside a transaction.
 */
export async function rotateSigningKey(
  db: Queryable,
  box: SecretBox,
  tenantId: string,
  windowMs: number,
): Promise<{ key: SigningKeyView; previous_expires_at: Date | null }> {
  await lockTenant(db, tenantId);
  const { rows } = await expireLiveSigningKeys.run(db, { tenantId, windowMs });
  await deleteExpiredSigningKeys.run(db, { tenantId });
  const key = await addKey(db, box, tenantId);
  return { key, previous_expires_at: rows[0]?.expires_at ?? null };
}

/** A JWKS document (RFC 7517) of the tenant's live public keys; undefined for an unknown tenant. */
export async function tenantJwks(db: Queryable, tenantId: string): Promise<{ keys: Ed25519Jwk[] } | undefined> {
  const { rows } = await selectPublicKeys.run(db, { tenantId });
  if (rows.length === 0) return undefined;
  return { keys: rows.flatMap((r) => (r.public_key === null ? [] : [jwkOf(r.public_key)])) };
}
