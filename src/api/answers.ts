import { z } from 'zod';

/**
 * Building blocks of the admin API's answer schemas (RouteSpec.response). An answer schema's output
 * side is what the handler returns (its rows, with Dates and bigints as the store gives them); its input
 * side is the JSON a client receives. The OpenAPI document shows the input side.
 */

/** A time: a Date in the handler, an ISO 8601 string on the wire. */
export const jsonTime = z.codec(z.iso.datetime({ offset: true }), z.date(), {
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString(),
});

/** A page of items. */
export const itemsOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });

/** A page of items with the cursor of the next page (null on the last). */
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), next_cursor: z.string().nullable() });

/** Any JSON value (a stored payload, an example, free metadata). */
export const anyJson = z.unknown();

/**
 * An object whose named fields are typed and checked, and which may carry more than it names (its
 * schema does not forbid other properties): for answers described by their main fields.
 */
export const openObject = <T extends z.core.$ZodLooseShape>(shape: T) => z.object(shape);

/**
 * A JSON object not described field by field yet (its handler's row type is not restated here): the
 * document says `type: object`, and a client reads it as `Record<string, unknown>`.
 */
export const someObject = z
  .custom<object>((value) => typeof value === 'object' && value !== null && !Array.isArray(value))
  .meta({ type: 'object', additionalProperties: {} });
