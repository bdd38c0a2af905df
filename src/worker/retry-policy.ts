import type { RetryConfig } from '../config/source.js';

/**
 * Backoff before the attempt after `attempt` (1-based): "full jitter", a uniform draw between 0 and
 * min(cap, base · 2^(attempt-1)). Spreading retries over the whole window keeps a recovering
 * application from being hit by every failed delivery at the same instant.
 */
export function backoffMs(policy: RetryConfig, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40); // 2^40 · base is past any cap; avoids Infinity
  const ceiling = Math.min(policy.cap, policy.base * 2 ** exponent);
  return Math.floor(random() * ceiling);
}

export type RetryDecision = { kind: 'retry'; delayMs: number } | { kind: 'dead' };

/**
 * What happens after a failed attempt. A permanent failure is dead at once; a transient one retries
 * until the attempts run out. `notBeforeMs` (a 429's Retry-After) is a floor under the jittered delay.
 */
export function decideRetry(
  policy: RetryConfig,
  attempt: number,
  failure: { permanent: boolean; notBeforeMs?: number | undefined },
  random?: () => number,
): RetryDecision {
  if (failure.permanent || attempt >= policy.max_attempts) return { kind: 'dead' };
  const delayMs = Math.max(backoffMs(policy, attempt, random), failure.notBeforeMs ?? 0);
  return { kind: 'retry', delayMs };
}
