import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';

type BackendMessages = Awaited<ReturnType<PGlite['execProtocolStream']>>;

/** What the store learnt about a prepared statement when it parsed it. */
interface PreparedStatement {
  text: string;
  /** Parameter type oids, to convert each value as PGlite's own query() does. */
  paramTypes: number[];
  /** The statement's RowDescription (none for a statement that returns no rows): sent once, reused. */
  rowDescription: BackendMessages;
}

/** Runs one named statement on PGlite, in the caller's transaction (`inTransaction`) or on its own. */
export type RunNamedStatement = (name: string, text: string, params: readonly unknown[] | undefined, inTransaction: boolean) => Promise<Results<unknown>>;

/**
 * Named prepared statements on PGlite, which its query() does not offer: every query() sends the text
 * as the unnamed statement, so Postgres parses, analyses and plans it on every call. For tekil's hot
 * statements that was a large share of their cost on PGlite. tekil's statements that carry a name
 * (QueryOptions.name: one name, always one text) are parsed once per PGlite session here and run by
 * name, in the same extended-protocol steps PGlite's query() uses (bind, execute, sync) with its
 * parameter serialisers and result parsers, so values come and go exactly as through query().
 * Postgres keeps the plan as it does for node-postgres' named statements (a generic plan after five
 * runs, when it costs no more than a custom one). A statement whose best plan depends on a
 * fast-changing table's size is not sent here (QueryOptions.sizeDependentPlan): PGlite runs no
 * autovacuum, so the statistics a generic plan rests on are never refreshed.
 *
 * Prepared statements belong to the session, not to a transaction: one prepared inside a transaction
 * that rolls back stays prepared. A statement whose Parse failed is not recorded, and is parsed again
 * next time.
 */
export function namedStatements(pg: PGlite): RunNamedStatement {
  const prepared = new Map<string, PreparedStatement>();
  const step = (message: Uint8Array) => pg.execProtocolStream(message, { syncToFs: false });

  async function prepare(name: string, text: string): Promise<PreparedStatement> {
    await step(protocol.serialize.parse({ name, text }));
    let described: BackendMessages;
    try {
      described = await step(protocol.serialize.describe({ type: 'S', name }));
    } catch (err) {
      // The name exists in the session now: closed, so the next call can parse it again.
      await step(protocol.serialize.close({ type: 'S', name })).catch(() => undefined);
      throw err;
    }
    const statement: PreparedStatement = {
      text,
      paramTypes: parse.parseDescribeStatementResults(described),
      rowDescription: described.filter((m) => m.name === 'rowDescription'),
    };
    prepared.set(name, statement);
    return statement;
  }

  async function execute(name: string, text: string, params: readonly unknown[], inTransaction: boolean): Promise<Results<unknown>> {
    const messages: BackendMessages = [];
    try {
      let statement = prepared.get(name);
      if (statement && statement.text !== text) throw new Error(`statement name ${name} is already used for another text`);
      statement ??= await prepare(name, text);
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serialize = pg.serializers[statement.paramTypes[i]!];
        return (serialize ? serialize(value) : String(value)) as string | Uint8Array;
      });
      // Appended one by one: a spread of a large result would pass V8's limit on call arguments.
      for (const m of statement.rowDescription) messages.push(m);
      for (const m of await step(protocol.serialize.bind({ statement: name, values }))) messages.push(m);
      for (const m of await step(protocol.serialize.execute({}))) messages.push(m);
    } finally {
      // After an error the backend skips every message up to the Sync, which ends the exchange.
      await step(protocol.serialize.sync());
    }
    if (!inTransaction) await pg.syncToFs();
    return parse.parseResults(messages, pg.parsers)[0]!;
  }

  return (name, text, params, inTransaction) => {
    // As PGlite's query() refuses: a closed store answers as one, not with a failure deep inside it.
    if (pg.closed) return Promise.reject(new Error('PGlite is closed'));
    const run = () => execute(name, text, params ?? [], inTransaction);
    // As PGlite's own query(): one statement at a time, and one outside a transaction waits for it.
    return inTransaction ? pg._runExclusiveQuery(run) : pg._runExclusiveTransaction(() => pg._runExclusiveQuery(run));
  };
}
