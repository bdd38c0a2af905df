import { HttpPoster } from '../http/post.js';
import { outcomeOf, type AttemptOutcome } from './attempt-decision.js';
import { DestinationGuard } from '../http/destination-guard.js';
import { DEFAULT_TENANT_ID } from './publish.js';

export type { AttemptOutcome };

export interface SendRequest {
  url: string;
  body: Buffer;
  /** The signature headers; the sender adds content-type and user-agent to this object. */
  headers: Record<string, string>;
  /** The endpoint's timeout: a deadline for the whole attempt, up to the answer's last byte. */
  timeoutMs: number;
  /** The endpoint's tenant: `default` (and absent) is sent under the operator's guard, any other under the tenants'. */
  tenantId?: string;
}

/** The tenants' guard when none is configured: public addresses only (`tenants.allow_networks: []`). */
export function publicOnlyGuard(): DestinationGuard {
  return new DestinationGuard([], { setting: ['tenants', 'allow_networks'] });
}

/** The guards a sender judges destinations with. */
export interface SenderGuards {
  /** The default tenant's, the operator's own endpoints: `sending.allow_networks`. */
  operator: DestinationGuard;
  /** Every other tenant's: `tenants.allow_networks`. */
  tenants: DestinationGuard;
}

/** Bytes of the answer kept in the history. */
export const RESPONSE_KEEP_BYTES = 4096;

/**
 * Posts a signed message to an endpoint and reports the outcome; never throws. Every connection goes
 * through a sending guard: the operator's (`sending.allow_networks`) for the default tenant's
 * endpoints, the tenants' (`tenants.allow_networks`) for every other, so a merchant never reaches the
 * private networks the operator opened for its own receivers.
 */
export class Sender {
  private readonly operator: HttpPoster;
  private readonly tenants: HttpPoster;

  /** `proxy`: `sending.proxy`, every request tunnelled through it. */
  constructor(
    private readonly guards: SenderGuards,
    proxy?: string,
  ) {
    this.operator = new HttpPoster({ guard: guards.operator, ...(proxy ? { proxy } : {}) });
    this.tenants = new HttpPoster({ guard: guards.tenants, ...(proxy ? { proxy } : {}) });
  }

  async send(req: SendRequest): Promise<AttemptOutcome> {
    const headers = req.headers;
    headers['content-type'] = 'application/json';
    headers['user-agent'] = 'tekil';
    const ofTenant = (req.tenantId ?? DEFAULT_TENANT_ID) !== DEFAULT_TENANT_ID;
    const poster = ofTenant ? this.tenants : this.operator;
    const outcome = outcomeOf(await poster.post({ url: req.url, headers, body: req.body, timeoutMs: req.timeoutMs, keepBytes: RESPONSE_KEEP_BYTES }));
    // A tenant reads its attempt history: an answer from a private network the operator opened to
    // tenants (an internal service's page, an error naming its software) is not kept for it to read.
    if (ofTenant && outcome.responseBody !== null && this.guards.tenants.reachesNonPublic(req.url)) return { ...outcome, responseBody: null };
    return outcome;
  }

  /** Closes idle connections; with `abort`, also cuts requests still in flight. */
  async close(abort = false): Promise<void> {
    await Promise.all([this.operator.close(abort), this.tenants.close(abort)]);
  }
}
