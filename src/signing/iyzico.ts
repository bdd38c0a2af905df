import { TekilError } from '../errors.js';
import { anySignatureMatches, bodyBytes, decodeSignature, hmac, invalid, malformed, requireSecrets, requireSignatureLines } from './common.js';
import { RequestFields } from './request-fields.js';
import type { SignatureScheme, SignInput } from './types.js';

/**
 * iyzico's webhook (docs.iyzico.com, "Webhook"): a JSON POST whose `X-IYZ-SIGNATURE-V3` header is
 * the hex HMAC-SHA256, keyed with the merchant's secret key, of fields of the body concatenated
 * without separators. Which fields depends on the notification's format:
 *
 * - direct (non-3DS and 3DS API payments): secretKey + iyziEventType + paymentId + paymentConversationId + status
 * - hosted payment page (checkout form, pay with iyzico): secretKey + iyziEventType + iyziPaymentId + token + paymentConversationId + status
 * - subscription: merchantId + secretKey + iyziEventType + subscriptionReferenceCode + orderReferenceCode + customerReferenceCode
 *
 * A body with `subscriptionReferenceCode` is a subscription one, else one with `token` a hosted page
 * one, else a direct one. The merchant id is the source's `iyzico.merchant_id` (named secret
 * `merchant_id`), else the body's `merchantId`. iyzico stops after three attempts 15 minutes apart.
 */
export const IYZICO_SIGNATURE_HEADER = 'X-IYZ-SIGNATURE-V3';

export type IyzicoFormat = 'direct' | 'hpp' | 'subscription';

const FORMAT_FIELDS: Record<IyzicoFormat, readonly string[]> = {
  direct: ['iyziEventType', 'paymentId', 'paymentConversationId', 'status'],
  hpp: ['iyziEventType', 'iyziPaymentId', 'token', 'paymentConversationId', 'status'],
  subscription: ['iyziEventType', 'subscriptionReferenceCode', 'orderReferenceCode', 'customerReferenceCode'],
};

export function iyzicoFormat(fields: RequestFields): IyzicoFormat {
  if (fields.read('body:subscriptionReferenceCode') !== undefined) return 'subscription';
  if (fields.read('body:token') !== undefined) return 'hpp';
  return 'direct';
}

/** The signed text's parts for one secret key, in the documented order. */
function signedParts(fields: RequestFields, secretKey: string, merchantId: string | undefined): string[] {
  const format = iyzicoFormat(fields);
  const values = FORMAT_FIELDS[format].map((name) => {
    const value = fields.read(`body:${name}`);
    if (value === undefined) throw malformed(`iyzico ${format} notification without ${name} (it is part of the signed content)`);
    return value;
  });
  if (format !== 'subscription') return [secretKey, ...values];
  const merchant = merchantId ?? fields.read('body:merchantId');
  if (merchant === undefined)
    throw new TekilError('CONFIG_INVALID', 'an iyzico subscription notification is signed with the merchant id: set iyzico.merchant_id');
  return [merchant, secretKey, ...values];
}

function signatureFor(fields: RequestFields, input: Pick<SignInput, 'namedSecrets'>, secretKey: string): Buffer {
  return hmac('sha256', secretKey, signedParts(fields, secretKey, input.namedSecrets?.merchant_id));
}

export function createIyzicoScheme(): SignatureScheme {
  return {
    name: 'iyzico',
    defaults: {
      // The signed fields that tell one notification from another: a retry carries the same ones,
      // and iyziReferenceCode, which is not signed, cannot make a copy look new.
      event_id: [
        { all: ['body:iyziEventType', 'body:subscriptionReferenceCode', 'body:orderReferenceCode'] },
        { all: ['body:iyziEventType', 'body:token', 'body:status'] },
        { all: ['body:iyziEventType', 'body:paymentId', 'body:status'] },
      ],
      resource_id: ['body:paymentConversationId', 'body:subscriptionReferenceCode'],
      event_type: ['body:iyziEventType'],
      occurred_at: ['body:iyziEventTime'],
    },
    verify(input) {
      requireSecrets(input.secrets);
      const lines = requireSignatureLines(input.headers, IYZICO_SIGNATURE_HEADER);
      const candidates = lines.map((l) => decodeSignature(l.trim(), 'hex')).filter((b): b is Buffer => b !== undefined);
      if (candidates.length === 0) throw malformed(`${IYZICO_SIGNATURE_HEADER}: no signature is hex`);
      const fields = new RequestFields(input.body, input.headers);
      if (fields.bodyJson() === undefined) throw malformed('an iyzico notification is JSON; this body is not');
      const expected = input.secrets.map((secret) => signatureFor(fields, input, secret));
      if (!anySignatureMatches(expected, candidates)) throw invalid(IYZICO_SIGNATURE_HEADER, candidates.length, expected.length);
      return {};
    },
    sign(input) {
      requireSecrets(input.secrets);
      const fields = new RequestFields(bodyBytes(input.body), {});
      // One header, one signature: the first secret signs.
      return { [IYZICO_SIGNATURE_HEADER]: signatureFor(fields, input, input.secrets[0] as string).toString('hex') };
    },
  };
}
