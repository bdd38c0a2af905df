import { randomUUID } from 'node:crypto';
import { anySignatureMatches, bodyBytes, decodeSignature, getHeader, hmac, invalid, malformed, requireSecrets, requireSignatureLines } from './common.js';
import type { SignatureScheme } from './types.js';

const SIGNATURE_HEADER = 'X-Hub-Signature-256';
const ID_HEADER = 'X-GitHub-Delivery';
const PREFIX = 'sha256=';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>` over the raw body, keyed with the secret as UTF-8.
 * There is no signed timestamp, so tolerance does not apply. GitHub sends one signature; several
 * (comma-separated, as repeated headers are joined) are accepted so a rotation can be rehearsed.
 * The legacy SHA-1 `X-Hub-Signature` is not accepted.
 */
export function createGithubScheme(): SignatureScheme {
  return {
    name: 'github',
    idHeader: ID_HEADER,
    defaults: {
      event_id: ['header:x-github-delivery'],
      resource_id: [
        'body:pull_request.id',
        'body:issue.id',
        'body:check_run.id',
        'body:check_suite.id',
        'body:workflow_run.id',
        'body:release.id',
        'body:deployment.id',
        'body:repository.id',
        'body:organization.id',
        'body:installation.id',
      ],
      event_type: ['header:x-github-event'],
      occurred_at: [],
    },
    verify(input) {
      requireSecrets(input.secrets);
      const lines = requireSignatureLines(input.headers, SIGNATURE_HEADER);
      const entries = lines
        .flatMap((line) => line.split(','))
        .map((s) => s.trim())
        .filter((s) => s.startsWith(PREFIX));
      if (entries.length === 0) throw malformed(`${SIGNATURE_HEADER} holds no sha256= signature`);
      const candidates = entries.map((e) => decodeSignature(e.slice(PREFIX.length), 'hex')).filter((b): b is Buffer => b !== undefined);
      if (candidates.length === 0) throw malformed(`${SIGNATURE_HEADER}: the signature is not hex`);
      const expected = input.secrets.map((secret) => hmac('sha256', secret, [input.body]));
      if (!anySignatureMatches(expected, candidates)) throw invalid(SIGNATURE_HEADER, candidates.length, expected.length);
      const headerEventId = getHeader(input.headers, ID_HEADER);
      return headerEventId ? { headerEventId } : {};
    },
    sign(input) {
      requireSecrets(input.secrets);
      const body = bodyBytes(input.body);
      const signatures = input.secrets.map((secret) => PREFIX + hmac('sha256', secret, [body]).toString('hex'));
      return {
        [ID_HEADER]: input.id ?? randomUUID(),
        [SIGNATURE_HEADER]: signatures.join(', '),
      };
    },
  };
}
