import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ACCEPTS_QUERY_OPTIONS, pgliteStatementName, type Db, type Queryable, type QueryOptions, type QueryResult } from './db.js';
import type { PgliteReply, PgliteRequest, PgliteThreadError, PgliteThreadOptions, PgliteThreadResult } from './pglite-thread-protocol.js';
import { quoteIdent } from './sql/statement.js';

/** Spreads a request over the union's members (TypeScript's Omit would merge them). */
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

/** The store's error again on this thread, with its SQLSTATE and details where callers read them. */
function rebuildError(e: PgliteThreadError, sql?: string): Error {
  const err = Object.assign(new Error(e.message), e.fields);
  err.name = e.name;
  if (sql !== undefined && !('query' in err)) Object.assign(err, { query: sql });
  return err;
}

/**
 * Runs the worker from the compiled file, or, when this module runs from its TypeScript source (tests,
 * `tsx` scripts), from the source with tsx's loader registered in the thread first: Node 20 does not
 * apply a loader given in a worker's execArgv to the worker's own entry module.
 */
function startWorker(options: PgliteThreadOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./pglite-thread-worker.js', import.meta.url), { workerData: options });
  // The package's ESM entry (require.resolve finds its CommonJS twin, which cannot register from here).
  const tsxApi = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const entry = new URL('./pglite-thread-worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: options });
}

/**
 * The embedded store on its own thread. PGlite runs each statement synchronously on the thread that
 * calls it: on the main thread a batch of inserts or a worker's claim stopped the receiver from reading
 * sockets for its whole duration. Here the main thread only posts the statement and its parameters and
 * goes on; answers come back as messages. The interface and the behaviour are the in-process
 * adapter's: one connection, statements serialised, a transaction holds the connection to its end.
 */
export async function createThreadedPgliteDb(options: PgliteThreadOptions = {}): Promise<Db & { dump(): Promise<Uint8Array> }> {
  const worker = startWorker(options);
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void; sql?: string | undefined }>();
  const listeners = new Map<string, Set<(payload: string) => void>>();
  let nextId = 1;
  let failure: Error | undefined;

  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (reply: PgliteReply) => {
      if ('kind' in reply) {
        if (reply.kind === 'ready') {
          if (reply.error) reject(new Error(`the embedded store did not open: ${reply.error.message}`, { cause: rebuildError(reply.error) }));
          else resolve();
        } else {
          for (const onNotify of listeners.get(reply.channel) ?? []) onNotify(reply.payload);
        }
        return;
      }
      const call = pending.get(reply.id);
      if (!call) return;
      pending.delete(reply.id);
      if (reply.ok) call.resolve(reply.value);
      else call.reject(rebuildError(reply.error, call.sql));
    });
    // The thread died (out of memory, a crash in PGlite): every statement waiting fails, and so does
    // every later one, with an error that has no SQLSTATE (the store is unavailable).
    const fail = (err: Error) => {
      failure ??= err;
      reject(err);
      for (const call of pending.values()) call.reject(err);
      pending.clear();
    };
    worker.on('error', (err) => fail(new Error(`the embedded store's thread failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => fail(new Error(`the embedded store's thread exited (code ${code})`)));
  });

  function call<T>(req: Unsent<PgliteRequest>): Promise<T> {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, sql: 'sql' in req ? req.sql : undefined });
      worker.postMessage({ ...req, id });
    });
  }

  /**
   * Structured clone copies a byte array's whole backing store: a small Buffer from node's pool would
   * carry its 8 KiB pool along, a slice of a socket read the whole read. Copy such views to their size.
   */
  const compact = (params: readonly unknown[] | undefined) =>
    params?.map((p) => (p instanceof Uint8Array && p.byteLength !== p.buffer.byteLength ? new Uint8Array(p) : p));

  function queryable(tx?: number): Queryable {
    return {
      [ACCEPTS_QUERY_OPTIONS]: true,
      // A named statement is prepared once on PGlite's session (pglite-prepared.ts).
      async query<R>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
        const res = await call<PgliteThreadResult>({ kind: 'query', sql, params: compact(params), tx, name: pgliteStatementName(options) });
        return { rows: res.rows as R[], rowCount: res.rowCount ?? res.rows.length };
      },
      async exec(sql: string): Promise<void> {
        await call({ kind: 'exec', sql, tx });
      },
    };
  }

  try {
    await ready;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  const root = queryable();
  let closed = false;
  return {
    kind: 'pglite',
    ...root,
    openPool() {
      return { ...root, close: async () => {} };
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const tx = await call<number>({ kind: 'begin' });
      let value: T;
      try {
        value = await fn(queryable(tx));
      } catch (err) {
        await call({ kind: 'end', tx, commit: false }).catch(() => {
          // The rollback's own failure says nothing the caller's error does not.
        });
        throw err;
      }
      await call({ kind: 'end', tx, commit: true });
      return value;
    },
    async listen(channel, onNotify) {
      quoteIdent(channel); // validates the name; PGlite quotes nothing itself
      let subscribers = listeners.get(channel);
      if (!subscribers) {
        subscribers = new Set();
        listeners.set(channel, subscribers);
        await call({ kind: 'listen', channel });
      }
      const subscriber = (payload: string) => onNotify(payload);
      subscribers.add(subscriber);
      return async () => {
        subscribers.delete(subscriber);
        if (subscribers.size === 0 && listeners.get(channel) === subscribers) {
          listeners.delete(channel);
          await call({ kind: 'unlisten', channel });
        }
      };
    },
    dump: () => call<Uint8Array>({ kind: 'dump' }),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await call({ kind: 'close' });
      } finally {
        failure ??= new Error('the embedded store is closed');
        worker.removeAllListeners('exit');
        await worker.terminate();
      }
    },
  };
}
