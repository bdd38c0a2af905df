import { addressKey } from '../http/connection-cap.js';

/**
 * Slows down token guessing: refused credentials are counted per address (an IPv6 /64 as one) and per
 * token prefix over a sliding window. Past the limit, an address is refused (429) before its token is
 * checked, until its oldest failure leaves the window. A prefix past the limit only turns the answer to
 * a wrong token into a 429: the prefix is public (the token list shows it), so refusing by it would let
 * anyone lock a valid token out. Kept in memory per process: a restart forgets, which costs an attacker
 * a restart they cannot cause, and keeps the store out of the way of a flood.
 */
export interface SignInLimitOptions {
  failures: number;
  windowMs: number;
  now?: () => number;
}

/** The most keys remembered: a flood of distinct addresses must not grow memory without bound. */
const MAX_KEYS = 10_000;

export class SignInLimit {
  private readonly failed = new Map<string, number[]>();
  private readonly now: () => number;

  constructor(private readonly options: SignInLimitOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Seconds until the first of `keys` may try again, or 0 when none is limited. */
  retryAfter(keys: readonly string[]): number {
    const now = this.now();
    let wait = 0;
    for (const key of keys) {
      const times = this.live(key, now);
      if (times.length >= this.options.failures) wait = Math.max(wait, Math.ceil((times[0]! + this.options.windowMs - now) / 1000));
    }
    return wait;
  }

  recordFailure(keys: readonly string[]): void {
    const now = this.now();
    for (const key of keys) {
      const times = this.live(key, now);
      times.push(now);
      // Only the newest `failures` matter to the decision.
      if (times.length > this.options.failures) times.splice(0, times.length - this.options.failures);
      this.failed.delete(key);
      this.failed.set(key, times);
    }
    while (this.failed.size > MAX_KEYS) this.failed.delete(this.failed.keys().next().value!);
  }

  private live(key: string, now: number): number[] {
    const times = this.failed.get(key) ?? [];
    while (times.length > 0 && times[0]! <= now - this.options.windowMs) times.shift();
    return times;
  }
}

/** The key a request's address is counted under: its IPv4 address, or its IPv6 /64 (as the connection cap counts it). */
export function addressSignInKey(address: string): string {
  return `address:${addressKey(address)}`;
}

/** The key a token is counted under: its first characters, or none for no token. */
export function tokenSignInKey(token: string | undefined): string | undefined {
  // Eight characters: enough to tell tokens apart (`tko_` and four random ones), far too few to help guess one.
  return token === undefined || token === '' ? undefined : `token:${token.slice(0, 8)}`;
}

/** The keys a refused credential is counted under: its address, and its token's first characters. */
export function signInKeys(address: string, token: string | undefined): string[] {
  const prefix = tokenSignInKey(token);
  return prefix === undefined ? [addressSignInKey(address)] : [addressSignInKey(address), prefix];
}
