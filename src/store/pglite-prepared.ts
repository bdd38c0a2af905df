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
 * parameter serialisers and result parsers, so values come and go exactly as through query(). What is saved is the parse, analysis and rewrite,
 * and a round of the protocol: tekil's session plans every run afresh (`plan_cache_mode`, see
 * PGLITE_SESSION_SETUP), because PGlite never refreshes the statistics a cached generic plan relies on.
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
    const described = await step(protocol.serialize.describe({ type: 'S', name }));
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
      messages.push(...statement.rowDescription);
      messages.push(...(await step(protocol.serialize.bind({ statement: name, values }))));
      messages.push(...(await step(protocol.serialize.execute({}))));
    } finally {
      // After an error the backend skips every message up to the Sync, which ends the exchange.
      await step(protocol.serialize.sync());
    }
    if (!inTransaction) await pg.syncToFs();
    return parse.parseResults(messages, pg.parsers)[0]!;
  }

  return (name, text, params, inTransaction) => {
    const run = () => execute(name, text, params ?? [], inTransaction);
    // As PGlite's own query(): one statement at a time, and one outside a transaction waits for it.
    return inTransaction ? pg._runExclusiveQuery(run) : pg._runExclusiveTransaction(() => pg._runExclusiveQuery(run));
  };
}
