import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { TekilError } from '../errors.js';

/** Where a value fails its schema: a JSON path (`$.data.items[0].amount`), its JSON Pointer, and why. */
export interface SchemaFailure {
  path: string;
  pointer: string;
  keyword: string;
  message: string;
}

/** A compiled schema: undefined when the value matches, else its first failure. */
export type EventValidator = (value: unknown, root?: string) => SchemaFailure | undefined;

// ajv-formats is CommonJS with a default export: under NodeNext it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

const unescapePointer = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** `/items/0/amount` under `$.data` as `$.data.items[0].amount` (odd names bracketed and quoted). */
function jsonPath(root: string, pointer: string): string {
  let path = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = unescapePointer(raw);
    if (/^\d+$/.test(key)) path += `[${key}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) path += `.${key}`;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path;
}

function failureOf(error: ErrorObject, root: string): SchemaFailure {
  let pointer = error.instancePath;
  // A missing property is reported at its parent: name the property itself.
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
    pointer += `/${error.params.missingProperty.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  }
  const rootPointer = root === '$' ? '' : `/${root.replace(/^\$\./, '').split('.').join('/')}`;
  return { path: jsonPath(root, pointer), pointer: `${rootPointer}${pointer}`, keyword: error.keyword, message: error.message ?? 'does not match the schema' };
}

/**
 * Compiles a JSON Schema (draft 2020-12, with the standard formats) once. Each schema gets its own
 * compiler: two versions of one type may carry the same `$id`, which one compiler would refuse.
 * `what` names the schema in the refusal of one that does not compile.
 */
export function compileEventSchema(schema: unknown, what: string): EventValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object | boolean);
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', `${what}: not a usable JSON Schema (2020-12): ${(err as Error).message}`, { cause: err });
  }
  return (value, root = '$') => {
    if (validate(value)) return undefined;
    const first = validate.errors?.[0];
    return first ? failureOf(first, root) : { path: root, pointer: '', keyword: 'false', message: 'does not match the schema' };
  };
}
