import type { Queryable } from '../../src/store/db.js';

/** Waits until the shop's worker has settled every delivery it received. */
export async function waitForShop(db: Queryable, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE status IN ('pending', 'processing')`);
    if (Number(rows[0]!.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`the shop still has ${rows[0]!.n} deliveries to process`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What the shop received and did, read from tekil's inbox and the shop's own tables. */
export async function shopReport(db: Queryable, expected: readonly { orderId: string; announced: string }[]): Promise<{ ok: boolean; text: string }> {
  const one = async (sql: string) => Number((await db.query<{ n: number }>(sql)).rows[0]!.n);
  const byStatus = (await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM inbox_deliveries GROUP BY 1 ORDER BY 1`)).rows;
  const attempts = await one(`SELECT count(*)::int AS n FROM inbox_attempts`);
  const effects = await one(`SELECT count(*)::int AS n FROM example_ledger`);
  const doubled = await one(`SELECT count(*)::int AS n FROM (SELECT 1 FROM example_ledger GROUP BY order_id, kind HAVING count(*) > 1) d`);
  const orders = new Map((await db.query<{ id: string; status: string }>(`SELECT id, status FROM example_orders`)).rows.map((r) => [r.id, r.status]));
  const wrong = expected.filter((e) => orders.get(e.orderId) !== e.announced);
  const lines = [
    `  deliveries recorded (one per event id, whatever the copies): ${byStatus.map((r) => `${r.status} ${r.n}`).join(', ')}`,
    `  handler runs: ${attempts}; business effects in the ledger: ${effects}; effects done twice: ${doubled}`,
    `  orders not in the state the provider announced last: ${wrong.length}${wrong.length ? ` (e.g. ${wrong[0]!.orderId}: ${orders.get(wrong[0]!.orderId)} ≠ ${wrong[0]!.announced})` : ''}`,
  ];
  const dead = byStatus.find((r) => r.status === 'dead')?.n ?? 0;
  return { ok: doubled === 0 && wrong.length === 0 && Number(dead) === 0, text: `${lines.join('\n')}\n` };
}
