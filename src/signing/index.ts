import { createCraftgateScheme } from './craftgate.js';
import { createGithubScheme } from './github.js';
import { createHmacScheme } from './hmac.js';
import { createIyzicoScheme } from './iyzico.js';
import { createPaparaScheme } from './papara.js';
import { createPaymosScheme } from './paymos.js';
import { createPaytrScheme } from './paytr.js';
import { createShopifyScheme } from './shopify.js';
import { createSipayScheme } from './sipay.js';
import { createStandardScheme } from './standard.js';
import { createStripeScheme } from './stripe.js';
import type { HmacSchemeOptions } from './hmac.js';
import type { SchemeName, SignatureScheme } from './types.js';

export type {
  Acknowledgement,
  FieldDefaults,
  IncomingHeaders,
  SignatureScheme,
  SignInput,
  VerifyInput,
  VerifyResult,
} from './types.js';
export { hmacOptionProblems, hmacSchemeOptions, templateSecretNames, type HmacSchemeOptions } from './hmac.js';
export { schemeNames, type SchemeName } from './types.js';
export { newDeliveryId } from './common.js';
export { isComposite, plainLocators, type LocatorSpec } from './request-fields.js';

// Here rather than in types.ts: hmac.ts imports types.ts, so types.ts naming hmac.ts's options would be a cycle.
export type SchemeFactory = (options?: HmacSchemeOptions) => SignatureScheme;

/**
 * The scheme a source is configured with. Schemes hold no state besides their options, so callers
 * may create one per source and keep it.
 */
export function createScheme(name: SchemeName, hmacOptions?: HmacSchemeOptions): SignatureScheme {
  switch (name) {
    case 'standard':
      return createStandardScheme();
    case 'stripe':
      return createStripeScheme();
    case 'paymos':
      return createPaymosScheme();
    case 'github':
      return createGithubScheme();
    case 'shopify':
      return createShopifyScheme();
    case 'hmac':
      return createHmacScheme(hmacOptions);
    case 'paytr':
      return createPaytrScheme();
    case 'iyzico':
      return createIyzicoScheme();
    case 'papara':
      return createPaparaScheme();
    case 'craftgate':
      return createCraftgateScheme();
    case 'sipay':
      return createSipayScheme();
  }
}
