// How each peer of the sending path records its attempts, as tekil and the floor dispatcher do: the
// attempts finished in one turn of the event loop go in one INSERT of arrays, a named statement prepared
// once per connection, and each handler goes on once that statement has committed (so a job is not
// completed before its attempt row is stored). One row per job and statement, prepared anew each time,
// is what a quick integration writes; it is not what a team measuring its throughput would keep.
import type pg from 'pg';

export interface AttemptRow {
  jobId: string;
  status: number | null;
  error: string | null;
}

/** The grouped INSERT: one round trip and one commit for every attempt of the turn. */
export const INSERT_ATTEMPTS = {
  name: 'peer_attempts_insert',
  text: 'INSERT INTO peer_attempts (job_id, status_code, error) SELECT * FROM unnest($1::text[], $2::int[], $3::text[])',
} as const;

export class AttemptRows {
  private rows: AttemptRow[] = [];
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  /** Statements written, for the settings check (rows per statement). */
  statements = 0;
  written = 0;

  constructor(private readonly pool: pg.Pool) {}

  add(row: AttemptRow): Promise<void> {
    if (this.rows.length === 0) setImmediate(() => void this.flush());
    this.rows.push(row);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private async flush(): Promise<void> {
    const rows = this.rows;
    const waiters = this.waiters;
    this.rows = [];
    this.waiters = [];
    try {
      await this.pool.query({
        ...INSERT_ATTEMPTS,
        values: [rows.map((r) => r.jobId), rows.map((r) => r.status), rows.map((r) => r.error)],
      });
      this.statements++;
      this.written += rows.length;
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
  }
}
