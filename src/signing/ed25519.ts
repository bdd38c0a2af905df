import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { TekilError } from '../errors.js';
/** One part of a signed payload: text (as UTF-8) or raw bytes (common.ts's PayloadPart; not imported, types.ts imports this file). */
type PayloadPart = string | Buffer;

/**
 * Standard Webhooks' asymmetric keys (`v1a`): Ed25519, a secret key shown as `whsk_<base64>` and a
 * public key as `whpk_<base64>`, each the base64 of the raw 32-byte key. A secret key given in
 * libsodium's 64-byte form (seed then public key) is read too, when its two halves agree.
 */

export const PUBLIC_KEY_PREFIX = 'whpk_';
export const SECRET_KEY_PREFIX = 'whsk_';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): Node imports a private key from DER or JWK only.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A key pair as tekil keeps it: the key id, the public key (`whpk_…`) and the secret key (`whsk_…`). */
export interface Ed25519KeyPair {
  kid: string;
  publicKey: string;
  secretKey: string;
}

/** A public key ready to verify with, and its id. */
export interface Ed25519PublicKey {
  kid: string;
  key: KeyObject;
}

/** A secret key ready to sign with, and the id of its public key. */
export interface Ed25519SigningKey {
  kid: string;
  key: KeyObject;
}

function decodeKey(text: string, prefix: string, what: string): Buffer {
  const encoded = text.startsWith(prefix) ? text.slice(prefix.length) : undefined;
  if (encoded === undefined || encoded === '' || !BASE64.test(encoded)) {
    throw new TekilError('CONFIG_INVALID', `an Ed25519 ${what} must be "${prefix}" followed by base64`);
  }
  return Buffer.from(encoded, 'base64');
}

function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url');
}

/**
 * The key id: the RFC 7638 thumbprint of the key's JWK (base64url SHA-256). Anyone holding the public
 * key computes the same id, so a receiver configured with a `whpk_` key knows its id without asking.
 */
export function keyId(rawPublic: Buffer): string {
  const canonical = `{"crv":"Ed25519","kty":"OKP","x":"${rawPublic.toString('base64url')}"}`;
  return createHash('sha256').update(canonical, 'utf8').digest('base64url');
}

export function parsePublicKey(text: string): Ed25519PublicKey {
  const raw = decodeKey(text.trim(), PUBLIC_KEY_PREFIX, 'public key');
  if (raw.length !== 32) throw new TekilError('CONFIG_INVALID', `an Ed25519 public key is 32 bytes, "${PUBLIC_KEY_PREFIX}…" holds ${raw.length}`);
  return { kid: keyId(raw), key: publicKeyFromRaw(raw) };
}

/** A public key from its 32 raw bytes (a JWK's `x`). */
export function publicKeyFromRaw(raw: Buffer): KeyObject {
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  } catch (err) {
    throw new TekilError('CONFIG_INVALID', 'not an Ed25519 public key', { cause: err });
  }
}

export function parseSecretKey(text: string): Ed25519SigningKey {
  const raw = decodeKey(text.trim(), SECRET_KEY_PREFIX, 'secret key');
  if (raw.length !== 32 && raw.length !== 64) {
    throw new TekilError('CONFIG_INVALID', `an Ed25519 secret key is 32 bytes (or 64, seed and public key), "${SECRET_KEY_PREFIX}…" holds ${raw.length}`);
  }
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, raw.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
  const publicRaw = rawPublicKey(createPublicKey(key));
  if (raw.length === 64 && !raw.subarray(32).equals(publicRaw)) {
    throw new TekilError('CONFIG_INVALID', `the 64-byte "${SECRET_KEY_PREFIX}…" key's second half is not the public key of its first`);
  }
  return { kid: keyId(publicRaw), key };
}

/** A fresh key pair in the Standard Webhooks formats. */
export function generateKeyPair(): Ed25519KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicRaw = rawPublicKey(publicKey);
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url');
  return { kid: keyId(publicRaw), publicKey: PUBLIC_KEY_PREFIX + publicRaw.toString('base64'), secretKey: SECRET_KEY_PREFIX + seed.toString('base64') };
}

/** The `whpk_…` text of a secret key's public half. */
export function publicKeyOf(secretKey: string): string {
  const { key } = parseSecretKey(secretKey);
  return PUBLIC_KEY_PREFIX + rawPublicKey(createPublicKey(key)).toString('base64');
}

/** A JSON Web Key (RFC 8037) for a `whpk_…` key: what a JWKS document lists. */
export interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

export function jwkOf(publicKey: string): Ed25519Jwk {
  const raw = decodeKey(publicKey, PUBLIC_KEY_PREFIX, 'public key');
  return { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url'), kid: keyId(raw), use: 'sig', alg: 'EdDSA' };
}

export function signParts(key: KeyObject, parts: readonly PayloadPart[]): Buffer {
  return sign(null, Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p))), key);
}

export function verifyParts(key: KeyObject, parts: readonly PayloadPart[], signature: Buffer): boolean {
  if (signature.length !== 64) return false;
  return verify(null, Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p))), key, signature);
}
