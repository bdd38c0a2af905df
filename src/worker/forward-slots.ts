import type { TekilConfig } from '../config/schema.js';

/**
 * Forwarding slots per source, in one worker process. A source that forwards may have at most
 * `forward.max_in_flight` of its deliveries claimed and not yet settled here; the claim takes no more
 * of its rows than it has free (the claim's per-source cap), so a forward target that answers in
 * seconds holds its own source's slots and never a claim's room, a claim loop, or another source's
 * share. Its deliveries are forwarded in a batch transaction of their own, which the claim loop does
 * not wait for (src/worker/process-batch.ts); at most `maxGroups` of those run at once, each holding a
 * pooled connection, so the loops always have connections left for the other sources' batches.
 *
 * Counted per process, like the loops: N worker processes forward up to N × max_in_flight of a source.
 */
export class ForwardSlots {
  readonly #caps = new Map<string, number>();
  /** Rows claimed (or reserved by a claim in progress) and not yet settled, per forwarding source. */
  readonly #held = new Map<string, number>();
  #groups = 0;

  constructor(
    config: TekilConfig,
    /** Forward batches that may hold a transaction at once; 0: every batch runs in its loop (the embedded store). */
    readonly maxGroups: number,
  ) {
    for (const [name, source] of Object.entries(config.sources)) {
      if (source.forward) this.#caps.set(name, source.forward.max_in_flight);
    }
  }

  /** Whether any source forwards: without one the claim has no caps to send. */
  get any(): boolean {
    return this.#caps.size > 0;
  }

  /**
   * Before a claim: takes every free slot of each forwarding source, so two loops claiming at once
   * cannot both use the same ones; answers them as the claim's caps. With every forward batch running,
   * the forwarding sources give nothing this claim (their rows wait for a batch to end).
   */
  reserve(): Map<string, number> {
    const caps = new Map<string, number>();
    const full = this.maxGroups > 0 && this.#groups >= this.maxGroups;
    for (const [source, cap] of this.#caps) {
      const held = this.#held.get(source) ?? 0;
      const free = full ? 0 : Math.max(0, cap - held);
      caps.set(source, free);
      this.#held.set(source, held + free);
    }
    return caps;
  }

  /** After the claim: keeps the slots of the rows it claimed, gives back the rest of the reservation. */
  settleReservation(reserved: ReadonlyMap<string, number>, claimed: ReadonlyMap<string, number>): void {
    for (const [source, free] of reserved) this.#give(source, free - (claimed.get(source) ?? 0));
  }

  /** A batch holding `count` deliveries of `source` has ended (committed or rolled back). */
  release(source: string, count: number): void {
    this.#give(source, count);
  }

  /** Whether the source's slots are counted here (it forwards). */
  counts(source: string): boolean {
    return this.#caps.has(source);
  }

  /** Slots of `source` held now (tests, metrics). */
  held(source: string): number {
    return this.#held.get(source) ?? 0;
  }

  /** A forward batch starts (true) or may not (false: as many run as may). */
  openGroup(): boolean {
    if (this.maxGroups > 0 && this.#groups >= this.maxGroups) return false;
    this.#groups++;
    return true;
  }

  closeGroup(): void {
    this.#groups--;
  }

  #give(source: string, n: number): void {
    if (n <= 0 || !this.#caps.has(source)) return;
    this.#held.set(source, Math.max(0, (this.#held.get(source) ?? 0) - n));
  }
}
