import { timingSafeEqual } from 'node:crypto';
import { TekilError } from '../errors.js';
import { bodyBytes, malformed, requireSecrets } from './common.js';
import type { SignatureScheme, SignInput } from './types.js';

/**
 * Papara's payment notification (Merchant API, "notificationUrl"): a JSON POST of the payment object
 * itself (`id`, `referenceId`, `status`, `amount`, `currency`, …) that carries the merchant's secret
 * key in its `merchantSecretKey` field. Nothing signs the content: the key only says the sender knows
 * it, so the key is compared in constant time against each of the source's secrets, and the
 * content is best confirmed by reading the payment back from Papara (`confirm:` with
 * `fetch: { provider: papara }`, docs/confirm.md).
 */
export const PAPARA_SECRET_FIELD = 'merchantSecretKey';

function secretOf(body: Buffer): string {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw malformed('a Papara notification is JSON; this body is not');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw malformed('a Papara notification is a JSON object');
  const value = (json as Record<string, unknown>)[PAPARA_SECRET_FIELD];
  if (value === undefined || value === null || value === '') throw new TekilError('SIGNATURE_MISSING', `the body carries no ${PAPARA_SECRET_FIELD}`);
  if (typeof value !== 'string') throw malformed(`${PAPARA_SECRET_FIELD} is not a string`);
  return value;
}

/** True when the key equals one of the secrets; every secret is compared, each in constant time. */
function anySecretMatches(key: string, secrets: readonly string[]): boolean {
  const candidate = Buffer.from(key, 'utf8');
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(secret, 'utf8');
    if (expected.length === candidate.length && timingSafeEqual(expected, candidate)) matched = true;
  }
  return matched;
}

export function createPaparaScheme(): SignatureScheme {
  return {
    name: 'papara',
    defaults: {
      // Papara notifies a payment's outcome: the payment and its status are the delivery.
      event_id: [{ all: ['body:id', 'body:status'] }],
      resource_id: ['body:referenceId', 'body:id'],
      // The status is a number, not a type word: a source that routes by status maps it itself.
      event_type: [],
      occurred_at: ['body:createdAt'],
    },
    verify(input) {
      requireSecrets(input.secrets);
      const key = secretOf(input.body);
      if (!anySecretMatches(key, input.secrets)) {
        throw new TekilError('SIGNATURE_INVALID', `${PAPARA_SECRET_FIELD} matches none of the source's ${input.secrets.length} secret(s)`);
      }
      return {};
    },
    sign() {
      // The key travels in the body (signBody): no header.
      return {};
    },
    signBody(input: SignInput) {
      requireSecrets(input.secrets);
      const body = JSON.parse(bodyBytes(input.body).toString('utf8')) as Record<string, unknown>;
      return Buffer.from(JSON.stringify({ ...body, [PAPARA_SECRET_FIELD]: input.secrets[0] }));
    },
  };
}
