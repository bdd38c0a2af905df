import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TekilSettings } from '../settings.js';

export interface AdminToken {
  token: string;
  /** True when tekil made this token now (it is printed once, then only the file has it). */
  generated: boolean;
  file?: string;
}

/**
 * The admin API's bearer token: the operator's (TEKIL_ADMIN_TOKEN, read into the settings) when set;
 * otherwise one generated once and kept in `<dataDir>/admin-token` (mode 0600), so the CLI on the same
 * machine can find it.
 */
export function resolveAdminToken(settings: Pick<TekilSettings, 'adminToken' | 'dataDir'>): AdminToken {
  const { adminToken: given, dataDir } = settings;
  if (given) return { token: given, generated: false };
  const file = join(dataDir, 'admin-token');
  try {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored) return { token: stored, generated: false, file };
  } catch {
    // no token yet: make one below
  }
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
