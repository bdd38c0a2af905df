import { createHash } from 'node:crypto';

/** Tokens are stored as a SHA-256: they are random and long, so no slow hash is needed to resist guessing. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
