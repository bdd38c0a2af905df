import type { TenantLimits } from '../config/tenants.js';
import { TekilError } from '../errors.js';
import { sendIntervalMs } from './endpoints.js';

/** An endpoint's settings as a tenant's caller gives them, already parsed (durations in milliseconds). */
export interface TenantSetSettings {
  timeout?: number | undefined;
  max_in_flight?: number | undefined;
  rate_limit?: string | null | undefined;
}

/**
 * Refuses what a tenant's own caller (its token, its merchant's portal) may not set on an endpoint
 * (`tenants.limits`): a longer timeout, a higher max_in_flight or, when the operator set a fastest rate
 * limit, a faster one or none. Every value beyond its bound is named, with the bound, in one error.
 */
export function checkTenantLimits(input: TenantSetSettings, limits: TenantLimits): void {
  const beyond: string[] = [];
  if (input.timeout !== undefined && input.timeout > limits.timeout_max) beyond.push(`timeout: at most ${limits.timeout_max} ms (tenants.limits.timeout_max)`);
  if (input.max_in_flight !== undefined && input.max_in_flight > limits.max_in_flight_max) {
    beyond.push(`max_in_flight: at most ${limits.max_in_flight_max} (tenants.limits.max_in_flight_max)`);
  }
  if (limits.rate_limit_max !== undefined && input.rate_limit !== undefined) {
    if (input.rate_limit === null) beyond.push(`rate_limit: required, at most ${limits.rate_limit_max} (tenants.limits.rate_limit_max)`);
    else if (sendIntervalMs(input.rate_limit) < sendIntervalMs(limits.rate_limit_max)) {
      beyond.push(`rate_limit: at most ${limits.rate_limit_max} (tenants.limits.rate_limit_max)`);
    }
  }
  if (beyond.length > 0) {
    throw new TekilError('TENANT_LIMIT_EXCEEDED', beyond.join('; '), { hint: "ask the provider's operators for more; values within the bounds are accepted" });
  }
}
