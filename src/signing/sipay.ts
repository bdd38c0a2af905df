import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { bodyBytes, malformed, requireSecrets } from './common.js';
import { parseFormFields, RequestFields } from './request-fields.js';
import { TekilError } from '../errors.js';
import type { SignatureScheme, SignInput } from './types.js';

/**
 * Sipay's payment notification (sale webhook, and the 3-D return) carries no signature header: its
 * `hash_key` field is a token, `iv:salt:ciphertext`, that Sipay encrypts with the merchant's app
 * secret, as Sipay's official PHP SDK (`Sipay\Utils\HashKey`) writes and reads it:
 *
 *   password = sha1_hex(app_secret); key = sha256_hex(password + salt), its first 32 characters
 *   (PHP's OpenSSL cuts a longer key); plaintext = AES-256-CBC(key, iv)^-1(base64 ciphertext)
 *   = `status|total|invoice_id|order_id|currency_code`; `/` travels as `__`.
 *
 * Only the holder of the app secret can make a token that decrypts, so the check is: the token
 * decrypts with one of the source's secrets, and what it says agrees with the notification's own
 * fields (`invoice_id` and `status` always; `order_id`, `currency_code` and the amount when sent).
 * The body may be JSON or a form; both are read.
 */
export const SIPAY_TOKEN_FIELD = 'hash_key';

export interface SipayTokenContent {
  status: string;
  total: string;
  invoiceId: string;
  orderId: string;
  currencyCode: string;
}

function sha1Hex(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

function aesKey(appSecret: string, salt: string): Buffer {
  return Buffer.from(
    createHash('sha256')
      .update(sha1Hex(appSecret) + salt, 'utf8')
      .digest('hex')
      .slice(0, 32),
    'latin1',
  );
}

interface TokenParts {
  iv: Buffer;
  salt: string;
  ciphertext: Buffer;
}

function splitToken(token: string): TokenParts {
  const parts = token.replaceAll('__', '/').split(':');
  if (parts.length !== 3) throw malformed(`${SIPAY_TOKEN_FIELD}: expected iv:salt:ciphertext`);
  const [iv, salt, encrypted] = parts as [string, string, string];
  if (Buffer.byteLength(iv, 'utf8') !== 16) throw malformed(`${SIPAY_TOKEN_FIELD}: the iv is not 16 bytes`);
  if (!/^[A-Za-z0-9+/]+=*$/.test(encrypted)) throw malformed(`${SIPAY_TOKEN_FIELD}: the ciphertext is not base64`);
  const ciphertext = Buffer.from(encrypted, 'base64');
  if (ciphertext.length === 0 || ciphertext.length % 16 !== 0) throw malformed(`${SIPAY_TOKEN_FIELD}: the ciphertext is not whole AES blocks`);
  return { iv: Buffer.from(iv, 'utf8'), salt, ciphertext };
}

/** The token's content under one app secret, or undefined when it was not made with that secret. */
export function decryptSipayToken(token: string, appSecret: string): SipayTokenContent | undefined {
  const { iv, salt, ciphertext } = splitToken(token);
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-cbc', aesKey(appSecret, salt), iv);
    plain = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    // A wrong key almost always leaves bad padding: not this secret's token.
    return undefined;
  }
  if (!isUtf8(plain)) return undefined;
  const fields = plain.toString('utf8').split('|');
  if (fields.length < 3) return undefined;
  const [status, total, invoiceId, orderId = '', currencyCode = ''] = fields as [string, string, string, ...string[]];
  return { status, total, invoiceId, orderId, currencyCode };
}

/** A token as Sipay makes one; `iv` (16 characters) and `salt` are random unless given (fixed test vectors). */
export function encryptSipayToken(content: SipayTokenContent, appSecret: string, fixed: { iv?: string; salt?: string } = {}): string {
  const iv = fixed.iv ?? randomBytes(8).toString('hex');
  const salt = fixed.salt ?? randomBytes(2).toString('hex');
  const cipher = createCipheriv('aes-256-cbc', aesKey(appSecret, salt), Buffer.from(iv, 'utf8'));
  const plain = [content.status, content.total, content.invoiceId, content.orderId, content.currencyCode].join('|');
  const encrypted = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
  return `${iv}:${salt}:${encrypted}`.replaceAll('/', '__');
}

/** Reads a field from a JSON body, or from a form body when the body is not a JSON object. */
function fieldReader(body: Buffer): (name: string) => string | undefined {
  const fields = new RequestFields(body, {});
  const json = fields.bodyJson();
  if (json !== null && typeof json === 'object' && !Array.isArray(json)) return (name) => fields.read(`body:${name}`);
  return (name) => fields.read(`form:${name}`);
}

function sameAmount(a: string, b: string): boolean {
  const x = Number(a);
  const y = Number(b);
  return a.trim() !== '' && b.trim() !== '' && Number.isFinite(x) && Number.isFinite(y) && Math.round(x * 100) === Math.round(y * 100);
}

/** Where the notification and its token disagree, or undefined when they agree. */
function disagreement(read: (name: string) => string | undefined, token: SipayTokenContent): string | undefined {
  if (read('invoice_id') !== token.invoiceId) return 'invoice_id';
  if (read('status') !== token.status) return 'status';
  const orderId = read('order_id');
  if (orderId !== undefined && orderId !== token.orderId) return 'order_id';
  const currency = read('currency_code');
  if (currency !== undefined && currency !== token.currencyCode) return 'currency_code';
  for (const name of ['total', 'amount']) {
    const amount = read(name);
    if (amount !== undefined && !sameAmount(amount, token.total)) return name;
  }
  return undefined;
}

function tokenContentOf(read: (name: string) => string | undefined): SipayTokenContent {
  const invoiceId = read('invoice_id');
  const status = read('status');
  if (invoiceId === undefined || status === undefined) throw new TekilError('VALIDATION_FAILED', 'a Sipay notification needs invoice_id and status');
  return {
    status,
    total: read('total') ?? read('amount') ?? '',
    invoiceId,
    orderId: read('order_id') ?? '',
    currencyCode: read('currency_code') ?? '',
  };
}

export function createSipayScheme(): SignatureScheme {
  return {
    name: 'sipay',
    defaults: {
      // One notification per invoice outcome; both parts are in the encrypted token, so no copy can look new.
      event_id: [{ all: ['body:invoice_id', 'body:status'] }, { all: ['form:invoice_id', 'form:status'] }],
      resource_id: ['body:invoice_id', 'form:invoice_id'],
      event_type: ['body:status', 'form:status'],
      occurred_at: [],
    },
    verify(input) {
      requireSecrets(input.secrets);
      const read = fieldReader(input.body);
      const token = read(SIPAY_TOKEN_FIELD);
      if (token === undefined) throw new TekilError('SIGNATURE_MISSING', `the notification has no ${SIPAY_TOKEN_FIELD} field (or sends it twice)`);
      let decryptedWithSomeSecret = false;
      let mismatch: string | undefined;
      for (const secret of input.secrets) {
        const content = decryptSipayToken(token, secret);
        if (content === undefined) continue;
        decryptedWithSomeSecret = true;
        mismatch = disagreement(read, content);
        if (mismatch === undefined) return {};
      }
      throw new TekilError(
        'SIGNATURE_INVALID',
        decryptedWithSomeSecret
          ? `${SIPAY_TOKEN_FIELD} decrypts, but its ${mismatch} differs from the notification's`
          : `${SIPAY_TOKEN_FIELD} does not decrypt with any of ${input.secrets.length} app secret${input.secrets.length === 1 ? '' : 's'}`,
      );
    },
    sign() {
      // The token travels in the body (signBody); no header is signed.
      return {};
    },
    signBody(input: SignInput) {
      requireSecrets(input.secrets);
      const body = bodyBytes(input.body);
      const read = fieldReader(body);
      const token = encryptSipayToken(tokenContentOf(read), input.secrets[0] as string);
      const json = new RequestFields(body, {}).bodyJson();
      if (json !== null && typeof json === 'object' && !Array.isArray(json)) {
        return Buffer.from(JSON.stringify({ ...(json as Record<string, unknown>), [SIPAY_TOKEN_FIELD]: token }));
      }
      const form = new URLSearchParams([...parseFormFields(body)].flatMap(([name, values]) => values.map((v): [string, string] => [name, v])));
      form.set(SIPAY_TOKEN_FIELD, token);
      return Buffer.from(form.toString());
    },
  };
}
