import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { createOrder, deliveryRow, insertInvoiceDelivery, ledgerCount } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { createExampleSchema } from '../examples/orders/handlers.js';

const fixture = fileURLToPath(new URL('./fixtures/worker-process.ts', import.meta.url));

function startWorkerProcess(url: string, hangMs: number): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    env: { ...process.env, TEKIL_FIXTURE_DATABASE_URL: url, TEKIL_FIXTURE_HANG_MS: String(hangMs), NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
  });
  return { child, ready };
}

/** Scenario 5: a worker process killed with SIGKILL mid-handler, then a new one → processed once. */
describe.skipIf(!onPostgres)('worker process killed mid-handler', () => {
  let t: TestDb;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    await createExampleSchema(t.db);
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await t?.close();
  });

  it('SIGKILL while the handler is between its database write and its outside call → one effect after restart', async () => {
    await createOrder(t.db, 'ord_k');
    await insertInvoiceDelivery(t.db, { eventId: 'evt_kill', invoiceId: 'inv_k', orderId: 'ord_k', status: 'paid' });

    const first = startWorkerProcess(t.url!, 60_000);
    children.push(first.child);
    await first.ready;
    await waitUntil(async () => (await ledgerCount(t.db, 'ord_k', 'handler_reached_outside_call')) === 1, 15_000, 'the handler to reach its outside call');
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    // The dead worker's transaction is gone: no effect, the delivery still leased to it.
    expect(await ledgerCount(t.db, 'ord_k')).toBe(0);
    expect(await deliveryRow(t.db, 'evt_kill')).toMatchObject({ status: 'pending' });
    const lease = await t.db.query<{ locked_by: string | null; leased: boolean; attempts: number }>(
      "SELECT locked_by, locked_until > now() AS leased, attempts FROM inbox_queue WHERE event_id = 'evt_kill'",
    );
    expect(lease.rows[0]).toMatchObject({ leased: true, attempts: 1 });
    expect(lease.rows[0]!.locked_by).not.toBeNull();

    const second = startWorkerProcess(t.url!, 0);
    children.push(second.child);
    await second.ready;
    await waitUntil(async () => (await deliveryRow(t.db, 'evt_kill'))?.status === 'done', 15_000, 'the new worker to finish the delivery');
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));

    expect(await ledgerCount(t.db, 'ord_k')).toBe(1);
    const order = await t.db.query<{ status: string; paid_by_event: string }>("SELECT status, paid_by_event FROM example_orders WHERE id = 'ord_k'");
    expect(order.rows[0]).toEqual({ status: 'paid', paid_by_event: 'evt_kill' });
    expect(await deliveryRow(t.db, 'evt_kill')).toMatchObject({ status: 'done', attempts: 2 });
    const attempts = await t.db.query<{ outcome: string }>("SELECT outcome FROM inbox_attempts WHERE event_id = 'evt_kill' ORDER BY id");
    expect(attempts.rows.map((a) => a.outcome)).toEqual(['lost', 'done']);
  });
});
