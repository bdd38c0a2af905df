import type { SignatureScheme } from './types.js';
import { signTimestamped, verifyTimestamped } from './timestamped.js';

const HEADER = 'Stripe-Signature';

/** Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]`; `v0` and other schemes are ignored. */
export function createStripeScheme(): SignatureScheme {
  return {
    name: 'stripe',
    defaults: {
      event_id: ['body:id'],
      resource_id: ['body:data.object.id'],
      event_type: ['body:type'],
      occurred_at: ['body:created'],
    },
    verify(input) {
      return { timestamp: verifyTimestamped(input, HEADER) };
    },
    sign(input) {
      return { [HEADER]: signTimestamped(input).value };
    },
  };
}
