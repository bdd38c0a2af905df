import { TekilError } from '../../errors.js';

/**
 * A statement whose parameters are named: `$ids`, `$now` in the text instead of `$1`, `$2`, so the
 * values sit next to the placeholders they fill. The text is rewritten to positional parameters once,
 * when the module loads; `bind()` turns a named object into the positional array on every call.
 * Postgres casts (`$ids::text[]`) keep working; `$1`-style numbers are left alone, and dollar-quoted
 * strings (`$tag$ … $tag$`) are not supported in a named statement.
 */
export interface Statement<P extends Record<string, unknown>> {
  /** A stable name for a prepared statement (see QueryOptions.name). */
  readonly name: string;
  /** The text with positional parameters, as Postgres receives it. */
  readonly text: string;
  /** The parameter names in positional order. */
  readonly params: readonly (keyof P & string)[];
  bind(values: P): unknown[];
}

const NAMED = /\$([a-z_][a-z0-9_]*)/gi;

export function defineStatement<P extends Record<string, unknown>>(name: string, text: string): Statement<P> {
  const order: string[] = [];
  const positional = text.replace(NAMED, (whole: string, param: string, offset: number) => {
    // `$$` or `$tag$` would be dollar quoting: refuse rather than rewrite it silently.
    if (text[offset + whole.length] === '$') throw new TekilError('INTERNAL', `statement ${name}: dollar-quoted strings are not supported`);
    let i = order.indexOf(param);
    if (i < 0) i = order.push(param) - 1;
    return `$${i + 1}`;
  });
  const params = order as (keyof P & string)[];
  return {
    name,
    text: positional,
    params,
    bind(values: P): unknown[] {
      const out = new Array<unknown>(params.length);
      for (let i = 0; i < params.length; i++) {
        const key = params[i]!;
        if (!(key in values)) throw new TekilError('INTERNAL', `statement ${name}: no value for $${key}`);
        out[i] = values[key];
      }
      return out;
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
