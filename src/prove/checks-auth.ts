import { randomBytes } from 'node:crypto';
import type { SchemeName } from '../signing/index.js';
import { describeAnswer, isSuccess, type Answer } from './http.js';
import { failed, passed, skipped, times, type CheckRun, type Outcome } from './outcome.js';
import type { ProveSession, SendOptions } from './session.js';

/** A secret of the right shape that the receiver does not know (Standard Webhooks wants base64). */
function unknownSecret(scheme: SchemeName, real: string): string {
  // Against an Ed25519 receiver (a whsk_ key), a key pair it does not trust.
  if (real.startsWith('whsk_')) return `whsk_${randomBytes(32).toString('base64')}`;
  const bytes = randomBytes(24);
  return scheme === 'standard' ? `whsec_${bytes.toString('base64')}` : `whsec_prove_wrong_${bytes.toString('hex')}`;
}

/** Whether the scheme (with its options) signs a timestamp the receiver can check. */
function signsTimestamp(s: ProveSession): boolean {
  const { scheme, hmac } = s.options;
  if (scheme === 'hmac') return hmac?.timestamp_header !== undefined && hmac.signed_payload.includes('{timestamp}');
  return scheme === 'paymos' || scheme === 'stripe' || scheme === 'standard';
}

/** Whether one request can carry several signatures (a rotation). */
function carriesSeveralSignatures(s: ProveSession): boolean {
  const { scheme, hmac } = s.options;
  if (scheme === 'hmac') return hmac?.separator !== undefined;
  return scheme === 'paymos' || scheme === 'stripe' || scheme === 'standard';
}

interface Attack {
  /** What the request is, in a failure message: "a request with a wrong signature". */
  what: string;
  /** The bug a receiver that accepts it has. */
  bug: string;
  send: SendOptions;
}

/** Sends each attack once for its own invoice; passes when every one is refused with a 4xx and has no effect. */
async function refuses(s: ProveSession, check: string, attacks: readonly Attack[]): Promise<Outcome> {
  const sent: { attack: Attack; invoiceId: string; answer: Answer }[] = [];
  for (const attack of attacks) {
    const invoiceId = s.newInvoiceId();
    s.expect(invoiceId, { count: 0, check });
    sent.push({ attack, invoiceId, answer: await s.send(s.event(invoiceId, 'paid'), attack.send) });
  }
  await s.sleep(s.options.settleMs);
  const effects = await s.effects(sent.map((x) => x.invoiceId));
  const problems: string[] = [];
  const figures: Record<string, string | number> = {};
  sent.forEach(({ attack, invoiceId, answer }, i) => {
    const count = effects.get(invoiceId)?.count ?? 0;
    figures[`answer_${i + 1}`] = describeAnswer(answer);
    figures[`count_${i + 1}`] = count;
    if (isSuccess(answer) || count > 0) {
      problems.push(`${attack.what} was answered ${describeAnswer(answer)} and its effect ${times(count)}: ${attack.bug}`);
    } else if (answer.status === undefined || answer.status < 400 || answer.status >= 500) {
      problems.push(`${attack.what} was answered ${describeAnswer(answer)}, not 4xx: the provider retries a 5xx, and this request will never verify`);
    }
  });
  if (problems.length) return failed(problems.join('; '), figures);
  return passed(`refused: ${sent.map((x) => describeAnswer(x.answer)).join(', ')}; no effect`, figures);
}

export const signature: CheckRun = (s) =>
  refuses(s, 'signature', [
    {
      what: 'a request with a wrong signature',
      bug: 'the receiver does not verify the signature',
      send: { secrets: [unknownSecret(s.options.scheme, s.options.secret)] },
    },
    {
      what: 'a body changed after signing',
      bug: 'the receiver does not verify the signature over the raw body',
      // The amount, in a JSON body or in PayTR's form (kuruş); iyzico's signed status (it sends no amount).
      send: {
        tamper: (body) =>
          Buffer.from(
            body
              .toString('utf8')
              .replace('"49.90"', '"0.01"')
              .replace('total_amount=4990', 'total_amount=1')
              .replace('"status":"SUCCESS"', '"status":"FAILURE"'),
          ),
      },
    },
  ]);

export const timestamp: CheckRun = async (s) => {
  if (!signsTimestamp(s)) return skipped(`the ${s.options.scheme} scheme${s.options.scheme === 'hmac' ? ' as configured' : ''} signs no timestamp`);
  const now = Math.floor(Date.now() / 1000);
  const bug = 'the receiver ignores the signed timestamp, so a captured request can be replayed';
  return refuses(s, 'timestamp', [
    { what: 'a request signed 1 hour in the past', bug, send: { timestamp: now - 3600 } },
    { what: 'a request signed 1 hour in the future', bug, send: { timestamp: now + 3600 } },
  ]);
};

export const rotation: CheckRun = async (s) => {
  if (!carriesSeveralSignatures(s)) return skipped(`the ${s.options.scheme} scheme carries one signature per request`);
  const invoiceId = s.newInvoiceId();
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'rotation' });
  // The first signature is made with a secret the receiver does not know: only the second matches.
  const answer = await s.send(s.event(invoiceId, 'paid'), { secrets: [unknownSecret(s.options.scheme, s.options.secret), s.options.secret] });
  const figures = { answer: describeAnswer(answer) };
  if (!isSuccess(answer)) {
    const refused = answer.status !== undefined && answer.status < 500;
    return failed(
      refused
        ? `a header with two v1 signatures, only the second valid, was refused (${describeAnswer(answer)}): the receiver checks only the first v1 signature; accept the request when any of them matches`
        : `a header with two v1 signatures was answered ${describeAnswer(answer)}`,
      figures,
    );
  }
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  if (effect.count !== 1) return failed(`accepted, but the effect ${times(effect.count)}`, { ...figures, count: effect.count });
  return passed(`accepted (${describeAnswer(answer)}); the effect ran once`, { ...figures, count: effect.count });
};
