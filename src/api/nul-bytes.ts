/**
 * Postgres cannot store U+0000 in text or jsonb: a NUL that reaches a query fails there as a 500. The
 * admin API refuses it up front instead, naming the field, whatever the route.
 */

/** Deeper than any admin request nests; a body past it is walked no further (the route's schema judges it). */
const MAX_DEPTH = 32;

/** The dotted path of the first string (value or key) holding a NUL under `root`, or undefined. */
export function findNulByte(value: unknown, root: string): string | undefined {
  return walk(value, root, 0);
}

function walk(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (typeof value !== 'object' || value === null || depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], `${path}.${i}`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key.includes('\u0000')) return `${path}.${key.replaceAll('\u0000', '\\u0000')}`;
    const found = walk(child, `${path}.${key}`, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
