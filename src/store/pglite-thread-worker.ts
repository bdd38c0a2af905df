/**
 * The worker thread that owns the embedded store. PGlite runs every statement synchronously on the
 * thread that calls it; here that thread is this one, so the main thread keeps reading sockets,
 * verifying signatures and answering while a statement runs.
 *
 * PGlite serialises statements itself: a statement outside a transaction waits while one is open, and
 * a transaction's statements (tagged with its id) run on its handle.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { PGLITE_SESSION_SETUP, PGLITE_TYPE_OPTIONS } from './pglite.js';
import { namedStatements, type RunNamedStatement } from './pglite-prepared.js';
import { describeError, type PgliteReply, type PgliteRequest, type PgliteThreadOptions, type PgliteThreadResult } from './pglite-thread-protocol.js';

const port = parentPort;
if (!port) throw new Error('pglite-thread-worker runs as a worker thread');
const options = workerData as PgliteThreadOptions;

const send = (reply: PgliteReply) => port.postMessage(reply);

/** Rejecting a transaction's callback with this rolls it back without an error for the caller. */
const ROLLBACK = Symbol('rollback');

interface OpenTransaction {
  tx: Transaction;
  finish(commit: boolean): void;
  /** Settles when PGlite has committed or rolled back. */
  done: Promise<void>;
}

const transactions = new Map<number, OpenTransaction>();
const unlisteners = new Map<string, () => Promise<void>>();
let nextTx = 1;

function result(res: { rows: unknown[]; rowCount?: number; affectedRows?: number }): PgliteThreadResult {
  return { rows: res.rows, rowCount: res.rowCount ?? res.affectedRows };
}

function openTransaction(pg: PGlite): Promise<number> {
  return new Promise<number>((opened, failedToOpen) => {
    const id = nextTx++;
    const done: Promise<void> = pg
      .transaction(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            transactions.set(id, { tx, finish: (ok) => (ok ? commit() : rollback(ROLLBACK)), done });
            opened(id);
          }),
      )
      .then(
        () => undefined,
        (err: unknown) => {
          if (err !== ROLLBACK) throw err;
        },
      )
      .finally(() => transactions.delete(id));
    // Rejects `opened` when BEGIN itself failed (no effect once the transaction was open: the
    // commit's own failure reaches the caller through `end`).
    done.catch(failedToOpen);
  });
}

function transaction(id: number | undefined): Transaction | undefined {
  if (id === undefined) return undefined;
  const open = transactions.get(id);
  if (!open) throw new Error(`transaction ${id} is not open`);
  return open.tx;
}

async function handle(pg: PGlite, runNamed: RunNamedStatement, req: PgliteRequest): Promise<unknown> {
  switch (req.kind) {
    case 'query': {
      const tx = transaction(req.tx);
      if (req.name) return result(await runNamed(req.name, req.sql, req.params, tx !== undefined));
      return result(await (tx ?? pg).query(req.sql, req.params as unknown[] | undefined));
    }
    case 'exec':
      await (transaction(req.tx) ?? pg).exec(req.sql);
      return undefined;
    case 'begin':
      return openTransaction(pg);
    case 'end': {
      const open = transactions.get(req.tx);
      if (!open) throw new Error(`transaction ${req.tx} is not open`);
      open.finish(req.commit);
      await open.done;
      return undefined;
    }
    case 'listen': {
      if (!unlisteners.has(req.channel)) {
        unlisteners.set(req.channel, await pg.listen(req.channel, (payload) => send({ kind: 'notify', channel: req.channel, payload })));
      }
      return undefined;
    }
    case 'unlisten': {
      const unlisten = unlisteners.get(req.channel);
      unlisteners.delete(req.channel);
      await unlisten?.();
      return undefined;
    }
    case 'dump': {
      const blob = await pg.dumpDataDir('none');
      return new Uint8Array(await blob.arrayBuffer());
    }
    case 'close':
      await pg.close();
      return undefined;
  }
}

try {
  const pg = new PGlite({ ...PGLITE_TYPE_OPTIONS, dataDir: options.dataDir, ...(options.loadDataDir ? { loadDataDir: new Blob([options.loadDataDir]) } : {}) });
  await pg.waitReady;
  await pg.exec(PGLITE_SESSION_SETUP);
  const runNamed = namedStatements(pg);
  port.on('message', (req: PgliteRequest) => {
    handle(pg, runNamed, req).then(
      (value) => send({ id: req.id, ok: true, value }),
      (err: unknown) => send({ id: req.id, ok: false, error: describeError(err) }),
    );
  });
  send({ kind: 'ready' });
} catch (err) {
  send({ kind: 'ready', error: describeError(err) });
}
