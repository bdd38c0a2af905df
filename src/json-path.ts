/**
 * Dotted paths into parsed JSON (`data.invoice.id`, `items.1.id`), as the `body:` locators of a
 * source and its ordering rules name them. The path is split once; reading walks objects and arrays.
 */
export function parsePath(dotted: string): readonly string[] {
  return dotted.split('.');
}

export function readPath(value: unknown, path: readonly string[]): unknown {
  let cur = value;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
