import type { OpenApiDocument, OpenApiParameter } from './openapi.js';

type JsonSchema = Record<string, unknown>;

const PREFIX = '/api/v1';
const name = (key: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key));

/**
 * A JSON Schema (as zod writes it for the API's input) as a TypeScript type. Only what the document
 * uses: objects, arrays, enums, unions and the scalar types; anything else is `unknown`.
 */
export function schemaType(schema: JsonSchema, indent = ''): string {
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union)) return union.map((s) => wrap(schemaType(s, indent))).join(' | ');
  if (Array.isArray(schema.type)) return schema.type.map((type) => schemaType({ ...schema, type }, indent)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${wrap(schemaType((schema.items ?? {}) as JsonSchema, indent))}[]`;
    case 'object':
      return objectType(schema, indent);
    default:
      return 'unknown';
  }
}

/** A union or function type inside `[]` needs brackets. */
const wrap = (type: string): string => (/[|&]/.test(type) ? `(${type})` : type);

function objectType(schema: JsonSchema, indent: string): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const extra = schema.additionalProperties;
  const inner = `${indent}  `;
  const lines = Object.entries(properties).map(([key, property]) => `${inner}${name(key)}${required.has(key) ? '' : '?'}: ${schemaType(property, inner)};`);
  if (typeof extra === 'object' && extra !== null) lines.push(`${inner}[key: string]: ${schemaType(extra as JsonSchema, inner)};`);
  else if (extra !== false && lines.length === 0) return 'Record<string, unknown>';
  return lines.length === 0 ? 'Record<string, never>' : `{\n${lines.join('\n')}\n${indent}}`;
}

function parametersType(parameters: OpenApiParameter[], indent: string): string {
  return objectType(
    {
      properties: Object.fromEntries(parameters.map((p) => [p.name, p.schema])),
      required: parameters.filter((p) => p.required).map((p) => p.name),
      additionalProperties: false,
    },
    indent,
  );
}

/**
 * web/api-types.d.ts: the admin API's routes as the panel calls them (paths below /api/v1), each with its
 * path and query parameters and its body, from the served OpenAPI document. `npm run web:types` writes
 * it; a test checks the checked-in copy is current.
 */
export function renderApiTypes(document: OpenApiDocument): string {
  const operations: string[] = [];
  const paths = new Set<string>();
  for (const [fullPath, methods] of Object.entries(document.paths)) {
    if (!fullPath.startsWith(PREFIX)) continue;
    const path = fullPath.slice(PREFIX.length);
    for (const [method, operation] of Object.entries(methods)) {
      if (!operation) continue;
      const route = `${method.toUpperCase()} ${path}`;
      const inPath = operation.parameters.filter((p) => p.in === 'path');
      const inQuery = operation.parameters.filter((p) => p.in === 'query');
      const body = operation.requestBody?.content['application/json'].schema;
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
      const answer = success?.content?.['application/json']?.schema;
      operations.push(
        [
          `  /** ${operation.summary} */`,
          `  ${JSON.stringify(route)}: {`,
          `    path: ${parametersType(inPath, '    ')};`,
          `    query: ${parametersType(inQuery, '    ')};`,
          `    body: ${body ? `${schemaType(body, '    ')}${operation.requestBody?.required ? '' : ' | undefined'}` : 'undefined'};`,
          // A route that answers a file (CSV, XLSX, PDF) or a stream answers no JSON: `never`.
          `    answer: ${answer ? schemaType(answer, '    ') : 'never'};`,
          '  };',
        ].join('\n'),
      );
      const template = path.replace(/\{[^}]+\}/g, '${string}');
      paths.add(template.includes('$') ? `\`${template}\`` : JSON.stringify(template));
      if (inQuery.length > 0) paths.add(`\`${template}?\${string}\``);
    }
  }
  return [
    "// Generated from the admin API's OpenAPI document (src/api/openapi.ts) by `npm run web:types`: do not edit.",
    '// The types of the admin API as the panel, the portal and the typed client (tekil/client) call it: every',
    '// route with its path and query parameters, its body, and the JSON its success answers.',
    '',
    'export interface ApiOperations {',
    ...operations,
    '}',
    '',
    '/** A route, as `METHOD /path` with its parameters in braces: `POST /endpoints/{id}/ping`. */',
    'export type ApiRoute = keyof ApiOperations;',
    "export type ApiMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';",
    '/** A path the panel may ask for (below /api/v1), with its parameters filled in and maybe a query. */',
    `export type ApiPath =\n${[...paths].map((p) => `  | ${p}`).join('\n')};`,
    "export type ApiBody<R extends ApiRoute> = ApiOperations[R]['body'];",
    "export type ApiQuery<R extends ApiRoute> = ApiOperations[R]['query'];",
    "export type ApiParams<R extends ApiRoute> = ApiOperations[R]['path'];",
    '/** What a success of the route answers (JSON). */',
    "export type ApiAnswer<R extends ApiRoute> = ApiOperations[R]['answer'];",
    '',
  ].join('\n');
}
