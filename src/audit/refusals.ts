import type { Counter } from 'prom-client';
import type { Context } from '../service.js';
import type { AuditEventInsert } from '../store/sql/audit/events.js';
import { addRefusal, addRefusals, type RefusalInsert } from '../store/sql/audit/refusals.js';

/** Refusals of one key are gathered into one row per this window. */
export const REFUSAL_WINDOW_MS = 60_000;
/** How often the refusals counted in memory are added to their rows. */
const FLUSH_MS = 5_000;
/** Keys remembered at most: a flood from many addresses must not grow memory without bound. */
const MAX_KEYS = 10_000;

interface Pending {
  row: RefusalInsert;
}

/**
 * Writes refused credentials (401, 429) to the audit trail as counts: one row per key (actor, address,
 * method, route, status, error code, token fingerprint) and minute, as `signature_failures` counts
 * failed signatures. The first refusal of a key in a minute is written before its answer leaves, as
 * any audit row; the ones after it are counted in memory and added to that row every few seconds (and
 * when the process stops), one statement for all keys. A flood from one address costs a row a minute,
 * not a row a request. The row is an upsert on its key and minute, so processes add to one row.
 *
 * What a crash loses: the counts of the last few seconds, never the first refusal of a key.
 */
export class RefusalCounts {
  /** Keys whose row this process wrote in their minute, by `minute|key`. */
  private readonly written = new Set<string>();
  private readonly pending = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly ctx: Context,
    private readonly failures: Counter,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Records one refusal; resolves once its row is written (the first of its key and minute) or counted. */
  async record(row: AuditEventInsert, token: string | undefined): Promise<void> {
    const at = this.now();
    const minute = new Date(at - (at % REFUSAL_WINDOW_MS));
    const key = JSON.stringify([row.actor, row.address, row.method, row.route, row.status, row.errorCode, token ?? null]);
    const slot = `${minute.getTime()}|${key}`;
    if (this.written.has(slot)) {
      const pending = this.pending.get(slot);
      if (pending) {
        pending.row.count++;
        pending.row.lastAt = new Date(at);
      } else {
        this.pending.set(slot, { row: { ...row, count: 1, lastAt: new Date(at), minute, key } });
        if (this.pending.size >= MAX_KEYS) void this.flush();
      }
      return;
    }
    if (this.written.size >= MAX_KEYS) this.forgetOld(minute);
    // Before the write: the refusals that arrive while it runs are counted, not written again.
    this.written.add(slot);
    await addRefusal.run(this.ctx.db, { ...row, count: 1, lastAt: new Date(at), minute, key });
  }

  /** Forgets keys of past minutes (their rows are complete), or all of them past MAX_KEYS. */
  private forgetOld(minute: Date): void {
    const current = `${minute.getTime()}|`;
    for (const slot of this.written) if (!slot.startsWith(current)) this.written.delete(slot);
    // Forgetting a key costs at most one more upsert on its row, never a second row.
    if (this.written.size >= MAX_KEYS) this.written.clear();
  }

  /** Adds the counted refusals to their rows; counts a failed write could not add are logged whole. */
  async flush(): Promise<void> {
    this.forgetOld(new Date(this.now() - (this.now() % REFUSAL_WINDOW_MS)));
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()].map((p) => p.row);
    this.pending.clear();
    try {
      await addRefusals.run(this.ctx.db, {
        actors: rows.map((r) => r.actor),
        roles: rows.map((r) => r.role),
        addresses: rows.map((r) => r.address),
        methods: rows.map((r) => r.method),
        routes: rows.map((r) => r.route),
        targets: rows.map((r) => r.target),
        statuses: rows.map((r) => r.status),
        errorCodes: rows.map((r) => r.errorCode),
        tenantIds: rows.map((r) => r.tenantId),
        counts: rows.map((r) => r.count),
        lastAts: rows.map((r) => r.lastAt),
        minutes: rows.map((r) => r.minute),
        keys: rows.map((r) => r.key),
      });
    } catch (err) {
      this.failures.inc(rows.length);
      this.ctx.logger.error({ err, audit: rows }, 'audit refusal counts not written: the store refused them; they are in this log line');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
