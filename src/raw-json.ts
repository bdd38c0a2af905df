/**
 * The raw text of one value inside a JSON document, found by the same dotted path `readPath` walks.
 * JSON.parse turns numbers into doubles, so `17960923835832100001` and `…003` both become
 * `17960923835832100000`, and `1e3` equals `1000`: an id read that way can merge two events. The
 * receiver parses with JSON.parse (fast) and comes here only when an id turns out to be a number.
 *
 * The text must already have been accepted by JSON.parse: this scanner skips values without
 * validating them. Like JSON.parse, the last of duplicate keys wins.
 */
export function rawJsonValue(text: string, path: readonly string[]): string | undefined {
  const found = valueAt(text, skipSpace(text, 0), path, 0);
  return found === undefined ? undefined : text.slice(found[0], found[1]);
}

type Span = [start: number, end: number];

function valueAt(text: string, start: number, path: readonly string[], depth: number): Span | undefined {
  if (depth === path.length) return [start, valueEnd(text, start)];
  const key = path[depth]!;
  const open = text[start];
  if (open === '{') {
    let found: Span | undefined;
    let i = skipSpace(text, start + 1);
    if (text[i] === '}') return undefined;
    for (;;) {
      const keyEnd = stringEnd(text, i);
      const raw = text.slice(i + 1, keyEnd - 1);
      const name = raw.includes('\\') ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
      const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the ':'
      if (name === key) found = valueAt(text, valueStart, path, depth + 1);
      i = skipSpace(text, valueEnd(text, valueStart));
      if (text[i] === '}') return found;
      i = skipSpace(text, i + 1); // past the ','
    }
  }
  if (open === '[') {
    if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
    const wanted = Number(key);
    let i = skipSpace(text, start + 1);
    if (text[i] === ']') return undefined;
    for (let index = 0; ; index++) {
      if (index === wanted) return valueAt(text, i, path, depth + 1);
      i = skipSpace(text, valueEnd(text, i));
      if (text[i] === ']') return undefined;
      i = skipSpace(text, i + 1);
    }
  }
  return undefined;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** The index just past the string starting (with its quote) at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return i;
}

/** The index just past the value starting at `start`. */
function valueEnd(text: string, start: number): number {
  const c = text[start];
  if (c === '"') return stringEnd(text, start);
  if (c === '{' || c === '[') {
    let depth = 0;
    let i = start;
    while (i < text.length) {
      const d = text[i];
      if (d === '"') {
        i = stringEnd(text, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return i;
  }
  // A number or a literal: up to the next delimiter.
  let i = start;
  while (i < text.length && !',}] \n\r\t'.includes(text[i]!)) i++;
  return i;
}
