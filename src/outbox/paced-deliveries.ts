import type { OutboxClaimedDelivery } from './types.js';

export interface Claimed {
  row: OutboxClaimedDelivery;
  lease: string;
}

/**
 * Claimed deliveries held until the send time their claim gave them (the endpoint's rate limit), out of
 * the request slots, so a paced endpoint does not keep other endpoints' deliveries waiting.
 */
export class PacedDeliveries {
  private readonly held = new Map<number, Claimed & { timer: NodeJS.Timeout }>();
  /** The latest send time this process gave each rate-limited endpoint (epoch ms). */
  private readonly lastSend = new Map<string, number>();
  /** Send times of paced deliveries claimed and not yet started (epoch ms), by delivery id. */
  private readonly sendAt = new Map<number, number>();

  /** `onDue`: the delivery's send time came; it starts next. */
  constructor(private readonly onDue: (claimed: Claimed) => void) {}

  get size(): number {
    return this.held.size;
  }

  hold(row: OutboxClaimedDelivery, lease: string): void {
    // The send time is on the database's clock, shared by every dispatcher: a wait counted from this
    // claim's answer would add the claim's own round trip, which differs between claims and processes,
    // and bunch requests. (Dispatchers' clocks are expected in step with the database's, as NTP keeps
    // them; the wait never exceeds the one the claim gave, plus its round trip.) Within this process,
    // requests to the endpoint also keep the interval between them, so a late timer cannot bunch them.
    const last = this.lastSend.get(row.endpoint_id) ?? 0;
    const at = Math.max(row.send_at_ms, last + (row.send_interval_ms ?? 0));
    this.lastSend.set(row.endpoint_id, at);
    this.sendAt.set(row.id, at);
    const timer = setTimeout(
      () => {
        this.held.delete(row.id);
        this.onDue({ row, lease });
      },
      Math.min(Math.max(0, at - Date.now()), row.wait_ms + 1_000),
    );
    this.held.set(row.id, { row, lease, timer });
  }

  /** The delivery's send time (once: the attempt asks when it starts); undefined when it was not paced. */
  takeSendAt(id: number): number | undefined {
    const at = this.sendAt.get(id);
    this.sendAt.delete(id);
    return at;
  }

  /** Every held delivery, no longer held (shutdown). */
  drain(): Claimed[] {
    for (const p of this.held.values()) clearTimeout(p.timer);
    this.sendAt.clear();
    const out = [...this.held.values()].map(({ row, lease }) => ({ row, lease }));
    this.held.clear();
    return out;
  }
}
