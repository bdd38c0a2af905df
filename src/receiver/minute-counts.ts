/**
 * The receiver's answers per minute, in memory, for the last day: a ring of one slot per minute,
 * reused when its minute comes round again. Adding one costs an array write (no allocation, no I/O),
 * so it can sit on the receive path; the counts are this process's own and start empty at each start.
 */
export const minuteOutcomes = ['accepted', 'duplicate', 'rejected'] as const;
export type MinuteOutcome = (typeof minuteOutcomes)[number];

export interface OutcomeMinute {
  minute: string;
  accepted: number;
  duplicate: number;
  rejected: number;
}

const MINUTE_MS = 60_000;
const KINDS = minuteOutcomes.length;
const kindIndex: Readonly<Record<MinuteOutcome, number>> = { accepted: 0, duplicate: 1, rejected: 2 };

export class MinuteCounts {
  /** The minute number (ms since the epoch / 60,000) each slot holds, or -1 while unused. */
  private readonly slotMinute: Float64Array;
  private readonly counts: Float64Array;

  constructor(private readonly size = 1_440) {
    this.slotMinute = new Float64Array(size).fill(-1);
    this.counts = new Float64Array(size * KINDS);
  }

  add(outcome: MinuteOutcome, nowMs = Date.now()): void {
    const minute = Math.floor(nowMs / MINUTE_MS);
    const slot = minute % this.size;
    if (this.slotMinute[slot] !== minute) {
      this.slotMinute[slot] = minute;
      this.counts.fill(0, slot * KINDS, slot * KINDS + KINDS);
    }
    this.counts[slot * KINDS + kindIndex[outcome]]! += 1;
  }

  /** One row per minute from `fromMs`'s minute to `toMs`'s, zeros included (at most the ring's size). */
  read(fromMs: number, toMs = Date.now()): OutcomeMinute[] {
    const last = Math.floor(toMs / MINUTE_MS);
    const first = Math.max(Math.floor(fromMs / MINUTE_MS), last - this.size + 1);
    const rows: OutcomeMinute[] = [];
    for (let minute = first; minute <= last; minute++) {
      const slot = minute % this.size;
      const held = this.slotMinute[slot] === minute;
      const at = (k: number) => (held ? this.counts[slot * KINDS + k]! : 0);
      rows.push({ minute: new Date(minute * MINUTE_MS).toISOString(), accepted: at(0), duplicate: at(1), rejected: at(2) });
    }
    return rows;
  }
}
