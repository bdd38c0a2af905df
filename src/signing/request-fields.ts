import { isUtf8 } from 'node:buffer';
import { parsePath, readPath } from '../json-path.js';
import { rawJsonValue } from '../raw-json.js';
import { getHeader } from './common.js';
import type { CompositeLocator, IncomingHeaders, LocatorSpec } from './types.js';

export type { CompositeLocator, LocatorSpec } from './types.js';

export function isComposite(spec: LocatorSpec): spec is CompositeLocator {
  return typeof spec !== 'string';
}

/** The plain locators a spec list reads, composites flattened (to keep the headers they name). */
export function plainLocators(specs: readonly LocatorSpec[]): string[] {
  return specs.flatMap((s) => (isComposite(s) ? [...s.all] : [s]));
}

/**
 * A form body's fields, percent- and `+`-decoded as a form parser does (UTF-8). Each name keeps
 * every value it was sent with, so a repeated field can be told apart from a single one.
 */
export function parseFormFields(body: Buffer): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const values = fields.get(name);
    if (values) values.push(value);
    else fields.set(name, [value]);
  }
  return fields;
}

/**
 * True when the form's percent-decoded bytes are UTF-8. A form parser decodes `%FF` as U+FFFD, so
 * `x%FF` and `x%FE` both read "x\uFFFD" and no longer say which bytes were sent. Checked over the
 * whole body: the separators are ASCII, so no sequence spans two fields.
 */
export function formDecodesAsUtf8(body: Buffer): boolean {
  const bytes = Buffer.allocUnsafe(body.length);
  let length = 0;
  for (let i = 0; i < body.length; i++) {
    const hex = body[i] === 0x25 && i + 2 < body.length ? body.toString('latin1', i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes[length++] = parseInt(hex, 16);
      i += 2;
    } else {
      bytes[length++] = body[i]!;
    }
  }
  return isUtf8(bytes.subarray(0, length));
}

/**
 * A form field's value, or undefined when it is absent or sent more than once: parsers disagree on
 * which copy of a repeated field wins (PHP keeps the last, others the first), so a signed or
 * identifying field that repeats is not read at all.
 */
export function singleFormValue(fields: ReadonlyMap<string, readonly string[]>, name: string): string | undefined {
  const values = fields.get(name);
  return values && values.length === 1 ? values[0] : undefined;
}

/**
 * A request's fields as a signature template reads them: the body parsed at most once, as JSON or
 * as a form, only when a placeholder asks. A JSON number is read as its text exactly as sent, as a
 * provider concatenates it; objects, arrays, booleans and null are not field values.
 */
export class RequestFields {
  private form: Map<string, string[]> | undefined;
  private jsonParsed = false;
  private json: unknown;
  private text = '';

  constructor(
    readonly body: Buffer,
    readonly headers: IncomingHeaders,
  ) {}

  /** The JSON body, or undefined when the body is not JSON. */
  bodyJson(): unknown {
    if (!this.jsonParsed) {
      this.jsonParsed = true;
      this.text = this.body.toString('utf8');
      try {
        this.json = JSON.parse(this.text);
      } catch {
        this.json = undefined;
      }
    }
    return this.json;
  }

  formFields(): Map<string, string[]> {
    this.form ??= parseFormFields(this.body);
    return this.form;
  }

  read(locator: string): string | undefined {
    if (locator.startsWith('form:')) return singleFormValue(this.formFields(), locator.slice('form:'.length));
    if (locator.startsWith('header:')) return getHeader(this.headers, locator.slice('header:'.length));
    if (locator.startsWith('body:')) {
      const path = parsePath(locator.slice('body:'.length));
      const value = readPath(this.bodyJson(), path);
      if (typeof value === 'string') return value;
      if (typeof value === 'number') return rawJsonValue(this.text, path) ?? String(value);
      return undefined;
    }
    return undefined;
  }
}
