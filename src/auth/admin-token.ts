import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TekilError } from '../errors.js';
import type { TekilSettings } from '../settings.js';

export interface AdminToken {
  token: string;
  /** True when tekil made this token now (it is printed once, then only the file has it). */
  generated: boolean;
  file?: string;
}

/**
 * The shortest admin token tekil accepts. The admin token can do everything, including minting operator
 * tokens, so one that can be guessed is refused at start rather than used. A generated one has 35.
 */
export const ADMIN_TOKEN_MIN_LENGTH = 16;

function checkLength(token: string, from: string): string {
  if (token.length >= ADMIN_TOKEN_MIN_LENGTH) return token;
  throw new TekilError(
    'CONFIG_INVALID',
    `${from}: the admin token is ${token.length} character${token.length === 1 ? '' : 's'} long; it needs at least ${ADMIN_TOKEN_MIN_LENGTH}`,
    {
      hint: 'use a long random token (e.g. `openssl rand -base64 32`), or unset TEKIL_ADMIN_TOKEN and tekil generates one',
    },
  );
}

/**
 * The admin API's bearer token: the operator's (TEKIL_ADMIN_TOKEN, read into the settings) when set;
 * otherwise one generated once and kept in `<dataDir>/admin-token` (mode 0600), so the CLI on the same
 * machine can find it. A token shorter than ADMIN_TOKEN_MIN_LENGTH, from either, is a CONFIG_INVALID.
 */
export function resolveAdminToken(settings: Pick<TekilSettings, 'adminToken' | 'dataDir'>): AdminToken {
  const { adminToken: given, dataDir } = settings;
  if (given) return { token: checkLength(given, 'TEKIL_ADMIN_TOKEN'), generated: false };
  const file = join(dataDir, 'admin-token');
  let stored: string | undefined;
  try {
    stored = readFileSync(file, 'utf8').trim();
  } catch {
    // no token yet: make one below
  }
  if (stored) return { token: checkLength(stored, file), generated: false, file };
  const token = `tk_${randomBytes(24).toString('base64url')}`;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, generated: true, file };
}

export function readStoredAdminToken(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, 'admin-token'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function tokenMatches(expected: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
