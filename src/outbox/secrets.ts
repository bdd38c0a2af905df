import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TekilError } from '../errors.js';
import type { SecretKeySource } from '../settings.js';

/**
 * Endpoint secrets at rest: AES-256-GCM under a key from TEKIL_SECRET_KEY, or one generated once into
 * `<dataDir>/secret-key` (mode 0600). Several processes on one database must share the key, so
 * production deployments set TEKIL_SECRET_KEY everywhere.
 */
export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

const VERSION = 'v1';

/** A new endpoint secret: `whsec_` and 24 random bytes in base64 (valid for every tekil scheme). */
export function generateEndpointSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function keyFromText(text: string): Buffer {
  // Any high-entropy text works; hashing gives the 32 bytes AES-256 needs whatever its encoding.
  return createHash('sha256').update(text.trim(), 'utf8').digest();
}

export function createSecretBox(keyText: string): SecretBox {
  const key = keyFromText(keyText);
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    decrypt(sealed) {
      const [version, data] = sealed.split(':', 2);
      if (version !== VERSION || !data) throw new TekilError('SECRET_KEY_MISMATCH', 'stored endpoint secret has an unknown format');
      const raw = Buffer.from(data, 'base64');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch (err) {
        throw new TekilError(
          'SECRET_KEY_MISMATCH',
          'cannot decrypt an endpoint secret: this process has a different TEKIL_SECRET_KEY (or secret-key file) than the one that stored it',
          { cause: err },
        );
      }
    },
  };
}

const boxes = new Map<string, SecretBox>();

/**
 * The process's secret box: the operator's key (TEKIL_SECRET_KEY, read into the settings), else
 * `<dataDir>/secret-key`, generated when absent. The key file is read (or made) on first use, so a
 * process that never touches an endpoint secret writes nothing.
 */
export function resolveSecretBox(source: SecretKeySource): SecretBox {
  const cacheKey = source.from === 'env' ? `env:${source.key}` : `dir:${source.dataDir}`;
  let box = boxes.get(cacheKey);
  if (box) return box;
  let inner: SecretBox | undefined;
  const open = (): SecretBox => (inner ??= createSecretBox(source.from === 'env' ? source.key : readOrCreateKeyFile(source.dataDir)));
  box = { encrypt: (plain) => open().encrypt(plain), decrypt: (sealed) => open().decrypt(sealed) };
  boxes.set(cacheKey, box);
  return box;
}

function readOrCreateKeyFile(dataDir: string): string {
  const file = join(dataDir, 'secret-key');
  try {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored) return stored;
  } catch {
    // no key yet: make one below
  }
  const key = randomBytes(32).toString('base64');
  mkdirSync(dataDir, { recursive: true });
  try {
    // 'wx' fails if another process created the file meanwhile; then that one's key wins.
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored) return stored;
    throw new TekilError('INTERNAL', `cannot create ${file}`, { cause: err });
  }
}
