import { isUtf8 } from 'node:buffer';
import { TekilError } from '../errors.js';
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
 * A request as a locator reads it: its headers (lower-cased names), its body parsed as JSON or as a
 * form, each at most once and only when a locator asks. The receiver reads a live request through it,
 * the worker a stored delivery (its body and kept headers), so both read a locator the same way.
 */
export interface RequestView {
  readonly headers: IncomingHeaders;
  /** The JSON body, or undefined when the body is not JSON. */
  bodyJson(): unknown;
  /** The body as text (a JSON number is read back from it exactly as written). */
  bodyText(): string;
  formFields(): ReadonlyMap<string, readonly string[]>;
}

/** Reads one locator's value from a request: a string, a JSON value, or undefined when absent. */
export type LocatorReader = (req: RequestView) => unknown;

export const LOCATOR_KINDS = 'expected "body:<dotted.path>", "form:<field>" or "header:<name>"';

/**
 * Turns `body:a.b.c`, `form:field` or `header:Name` into a reader, once per source: the one way every
 * locator is read (ids, types, times, signed fields, the ordering guard's state). With `numbersAsText`
 * a number in the body comes back as its text exactly as written (ids: no float round trip).
 */
export function compileLocator(locator: string, numbersAsText = false): LocatorReader {
  if (locator.startsWith('header:')) {
    const name = locator.slice('header:'.length);
    return (req) => getHeader(req.headers, name);
  }
  if (locator.startsWith('form:')) {
    const name = locator.slice('form:'.length);
    return (req) => singleFormValue(req.formFields(), name);
  }
  if (locator.startsWith('body:')) {
    const path = parsePath(locator.slice('body:'.length));
    if (!numbersAsText) return (req) => readPath(req.bodyJson(), path);
    return (req) => {
      const value = readPath(req.bodyJson(), path);
      return typeof value === 'number' ? (rawJsonValue(req.bodyText(), path) ?? String(value)) : value;
    };
  }
  throw new TekilError('CONFIG_INVALID', `invalid locator "${locator}": ${LOCATOR_KINDS}`);
}

/** What a locator can find in a body: `json` for `body:`, `form` for `form:`, null for a header. */
export function locatorBodyKind(locator: string): 'json' | 'form' | null {
  if (locator.startsWith('body:')) return 'json';
  if (locator.startsWith('form:')) return 'form';
  return null;
}

/**
 * A request's fields as a locator reads them: the body parsed at most once, as JSON or as a form,
 * only when a locator asks.
 */
export class RequestFields implements RequestView {
  private form: Map<string, string[]> | undefined;
  private jsonParsed = false;
  private json: unknown;
  private text: string | undefined;

  constructor(
    readonly body: Buffer,
    readonly headers: IncomingHeaders,
  ) {}

  bodyJson(): unknown {
    if (!this.jsonParsed) {
      this.jsonParsed = true;
      try {
        this.json = JSON.parse(this.bodyText());
      } catch {
        this.json = undefined;
      }
    }
    return this.json;
  }

  bodyText(): string {
    this.text ??= this.body.toString('utf8');
    return this.text;
  }

  /** True once a `body:` locator was read and the body turned out not to be JSON. */
  get notJson(): boolean {
    return this.jsonParsed && this.json === undefined;
  }

  /** True once a `form:` locator was read (the body was parsed as a form). */
  get formRead(): boolean {
    return this.form !== undefined;
  }

  formFields(): Map<string, string[]> {
    this.form ??= parseFormFields(this.body);
    return this.form;
  }

  /**
   * A field as a signature template reads it: a string, or a JSON number as its text exactly as
   * sent, as a provider concatenates it; objects, arrays, booleans and null are not field values.
   */
  read(locator: string): string | undefined {
    const value = compileLocator(locator, true)(this);
    return typeof value === 'string' ? value : undefined;
  }
}
