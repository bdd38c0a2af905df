import { TekilError } from '../../errors.js';
import type { Queryable, QueryOptions, QueryResult } from '../db.js';

/**
 * Every SQL statement tekil sends has one shape: a `Statement<Params, Row>` made by `defineStatement`.
 *
 * - It is named, and its parameters are bound by name: `$ids`, `$now` in the text instead of `$1`,
 *   `$2`, so each value sits next to the placeholder it fills. The text is rewritten to positional
 *   parameters once, when the module loads; `bind()` turns the named object into the positional array.
 * - Its parameters and its result row are typed: `run(q, params)` answers `QueryResult<Row>`.
 * - It carries its plan policy (`Plan`), so no call site passes QueryOptions.
 *
 * Statement modules (src/store/sql/<area>/) import nothing from the domains they serve: row and
 * parameter types are declared here, below the domain, and the domain maps them to its own.
 * A filter chosen at run time is a parameter (`($type::text IS NULL OR d.event_type = $type)`), which
 * a statement planned with its values (`unprepared`) folds away, so the indexes still serve it. The
 * few statements whose text truly varies (a batch size the planner must see as a literal, the columns
 * an update sets) come from a small builder that caches one named Statement per variant.
 *
 * Postgres casts (`$ids::text[]`) keep working. A `$1`-style number is refused (a statement names its
 * parameters), and so are dollar-quoted strings (`$tag$ … $tag$`). Comments (`-- …`, `/* … *\/`) and
 * quoted strings are left as written: a `$name` there is text, not a parameter.
 *
 * The one call surface: `statement.run(q, params)` on a store or a transaction (`runForeign` on a
 * caller's own client). Nothing else reads `text`, `bind()` or `options` to send a statement by hand.
 */

/**
 * How a statement is planned.
 * - `prepared`: a named prepared statement on both stores, parsed once per connection; Postgres keeps
 *   a generic plan once it costs no more than a custom one. For hot statements whose plan does not
 *   depend on their values or on a fast-changing table's size.
 * - `prepared-replanned`: named on Postgres, but sent unnamed on PGlite, planned on every run
 *   (QueryOptions.sizeDependentPlan): its best plan depends on a queue's size, and PGlite runs no
 *   autovacuum to refresh the statistics a kept plan rests on.
 * - `unprepared`: sent unnamed, parsed and planned with its values on every run: rare statements, and
 *   list pages whose optional filters must fold away for their indexes to serve them.
 */
export type Plan = 'prepared' | 'prepared-replanned' | 'unprepared';

/** Something that runs a query without QueryOptions: a caller's own node-postgres client (see publish). */
export interface ForeignClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A statement's parameters: a named object, or none. */
export type Params = Record<string, unknown>;
/** The parameters of a statement that takes none. */
// biome-ignore lint/complexity/noBannedTypes: the empty object type is the point: no key may be passed.
export type NoParams = {};

export interface Statement<P extends Params, R = Record<string, unknown>> {
  /** A stable name: the prepared statement's (see QueryOptions.name), and what logs and EXPLAINs call it. */
  readonly name: string;
  /** The text with positional parameters, as Postgres receives it. */
  readonly text: string;
  /** The parameter names in positional order. */
  readonly params: readonly (keyof P & string)[];
  readonly plan: Plan;
  /** The QueryOptions its plan asks for (undefined when unprepared). */
  readonly options: QueryOptions | undefined;
  bind(values: P): unknown[];
  /** Runs it on one of tekil's stores (or a transaction of one), with its plan policy. */
  run(q: Pick<Queryable, 'query'>, ...values: keyof P extends never ? [values?: P] : [values: P]): Promise<QueryResult<R>>;
  /** Runs it unnamed on a caller's client, which must never receive a third argument (to node-postgres, a callback). */
  runForeign(client: ForeignClient, values: P): Promise<R[]>;
}

/** A quoted string, a comment, a `$1`-style number or a `$name`: only the last two are parameters. */
const TOKENS = /'(?:[^']|'')*'|--[^\n]*|\/\*[\s\S]*?\*\/|\$([0-9]+)|\$([a-z_][a-z0-9_]*)/gi;

function planOptions(name: string, plan: Plan): QueryOptions | undefined {
  if (plan === 'prepared') return { name };
  if (plan === 'prepared-replanned') return { name, sizeDependentPlan: true };
  return undefined;
}

export function defineStatement<P extends Params = NoParams, R = Record<string, unknown>>(
  name: string,
  text: string,
  plan: Plan = 'unprepared',
): Statement<P, R> {
  const order: string[] = [];
  const positional = text.replace(TOKENS, (whole: string, number: string | undefined, param: string | undefined, offset: number) => {
    if (number !== undefined) throw new TekilError('INTERNAL', `statement ${name}: $${number} is a positional parameter; name it ($id, $limit)`);
    if (param === undefined) return whole; // a quoted string or a comment, as written
    // `$$` or `$tag$` would be dollar quoting: refuse rather than rewrite it silently.
    if (text[offset + whole.length] === '$') throw new TekilError('INTERNAL', `statement ${name}: dollar-quoted strings are not supported`);
    let i = order.indexOf(param);
    if (i < 0) i = order.push(param) - 1;
    return `$${i + 1}`;
  });
  const params = order as (keyof P & string)[];
  const options = planOptions(name, plan);
  function bind(values: P): unknown[] {
    const out = new Array<unknown>(params.length);
    for (let i = 0; i < params.length; i++) {
      const key = params[i]!;
      if (!(key in values)) throw new TekilError('INTERNAL', `statement ${name}: no value for $${key}`);
      out[i] = values[key];
    }
    return out;
  }
  return {
    name,
    text: positional,
    params,
    plan,
    options,
    bind,
    run(q, ...rest) {
      const values = params.length === 0 ? [] : bind((rest[0] ?? {}) as P);
      return options ? q.query<R>(positional, values, options) : q.query<R>(positional, values);
    },
    async runForeign(client, values) {
      return (await client.query(positional, bind(values))).rows as R[];
    },
  };
}

/**
 * Quotes a name tekil puts into SQL text itself (a NOTIFY channel), after checking it is a plain
 * lower-case identifier; both store adapters use it, so it lives beside the other SQL-text helpers.
 */
export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new TekilError('INVALID_IDENTIFIER', `invalid identifier: ${name}`);
  return `"${name}"`;
}

/** Byte strings packed into one `bytea` parameter, each found again with `substring(… FROM start FOR length)`. */
export interface PackedBytes {
  bytes: Buffer;
  /** Where each one starts, counting from 1 as substring() does. */
  starts: number[];
  lengths: number[];
}

/**
 * Packs byte strings for a multi-row statement. node-postgres sends a Buffer parameter in binary, but a
 * `bytea[]` as hex text inside an array literal: twice the bytes, and an encode and a decode per row.
 */
export function packBytes(parts: readonly Buffer[]): PackedBytes {
  const starts = new Array<number>(parts.length);
  const lengths = new Array<number>(parts.length);
  let start = 1;
  for (let i = 0; i < parts.length; i++) {
    starts[i] = start;
    lengths[i] = parts[i]!.length;
    start += lengths[i]!;
  }
  return { bytes: Buffer.concat(parts as Buffer[], start - 1), starts, lengths };
}
