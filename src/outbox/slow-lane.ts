/** Answers kept per endpoint: the p90 of the last RING answers. */
const RING = 20;
/** Answers needed before an endpoint is judged. */
const MIN_SAMPLES = 5;
/** Endpoints remembered per dispatcher (the least recently answered are forgotten first). */
const MAX_ENDPOINTS = 10_000;
/** A slow endpoint's written p90 is brought up to date when it moved this much, at most this often. */
const REWRITE_CHANGE = 0.2;
const REWRITE_EVERY_MS = 10_000;

interface Seen {
  ring: number[];
  next: number;
  /** The p90 this dispatcher last wrote or read on a claim (null: not slow). */
  written: number | null;
  writtenAt: number;
}

/**
 * The slow lane's judge (docs/sending.md, "Slow endpoints"): keeps each endpoint's last answers' times
 * and writes its p90 on the endpoint row (`slow_p90_ms`) when it passes `sending.slow_lane.threshold`,
 * and null when it falls back under. The claim reads that column: a slow endpoint's deliveries are
 * taken only within the slow lane's free requests, so slow receivers hold the lane's requests, never the
 * others'. Written only on a change of lane (and a slow endpoint's p90 as it moves), so the endpoint row
 * is not written on every answer and claims do not meet its lock.
 */
export class SlowLane {
  private readonly seen = new Map<string, Seen>();

  constructor(
    private readonly thresholdMs: number,
    private readonly write: (id: string, p90Ms: number | null) => void,
  ) {}

  /** An answer (or timeout) of `durationMs` from the endpoint; `claimedP90` is the row's slow_p90_ms at claim. */
  observe(endpointId: string, claimedP90: number | null, durationMs: number, now = Date.now()): void {
    let s = this.seen.get(endpointId);
    if (s) {
      this.seen.delete(endpointId); // re-inserted last: the map's order is the least recently answered first
    } else {
      s = { ring: [], next: 0, written: claimedP90, writtenAt: 0 };
      if (this.seen.size >= MAX_ENDPOINTS) this.seen.delete(this.seen.keys().next().value as string);
    }
    this.seen.set(endpointId, s);
    if (s.ring.length < RING) s.ring.push(durationMs);
    else s.ring[s.next] = durationMs;
    s.next = (s.next + 1) % RING;
    if (s.ring.length < MIN_SAMPLES) return;
    const p90 = Math.round(percentile(s.ring, 0.9));
    const slow = p90 >= this.thresholdMs;
    if (slow) {
      const moved = s.written === null || Math.abs(p90 - s.written) > REWRITE_CHANGE * s.written;
      if (moved && (s.written === null || now - s.writtenAt >= REWRITE_EVERY_MS)) this.set(endpointId, s, p90, now);
    } else if (s.written !== null) {
      this.set(endpointId, s, null, now);
    }
  }

  private set(endpointId: string, s: Seen, p90: number | null, now: number): void {
    s.written = p90;
    s.writtenAt = now;
    this.write(endpointId, p90);
  }
}

/** The `q` quantile of the values (nearest rank). */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}
