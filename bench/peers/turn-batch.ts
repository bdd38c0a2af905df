// What a team putting pg-boss behind a receiver would write, following its docs' bulk `insert()`: the
// events that arrive in one turn of the event loop go in one statement, and each request is answered
// once that statement has committed (the same gathering tekil's group commit does, without its cap).
import { createHash } from 'node:crypto';

export interface JobInsert {
  name: string;
  id: string;
  data: object;
}

export class TurnBatch<T> {
  private items: T[] = [];
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];

  constructor(private readonly write: (items: T[]) => Promise<unknown>) {}

  add(item: T): Promise<void> {
    if (this.items.length === 0) setImmediate(() => void this.flush());
    this.items.push(item);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private async flush(): Promise<void> {
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.waiters = [];
    try {
      await this.write(items);
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
  }
}

/**
 * pg-boss keys a job by a UUID, which a caller may give: derived from the source and event id (the hash's
 * first 16 bytes laid out as a version-5-style UUID), a repeat of an event gets the same id and pg-boss's
 * insert skips it (ON CONFLICT DO NOTHING).
 */
export function jobIdOf(source: string, eventId: string): string {
  const b = createHash('sha1').update(`${source}\u0000${eventId}`).digest();
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
