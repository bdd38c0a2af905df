import { z } from 'zod';
import { errorCatalogue } from '../errors.js';
import type { Permission, RouteSpec } from './route-spec.js';
import { jwksOpenApiPath } from './signing-keys.js';

type JsonSchema = Record<string, unknown>;

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags: string[];
  /** Who may call it: `public`, `view` (any token), `operate` (operator or admin), `admin` (admin token). */
  'x-tekil-permission': Permission;
  /** Open to a tenant's caller (tenant token or portal session), scoped to its tenant; absent otherwise. */
  'x-tekil-tenant'?: true;
  security: Array<Record<string, string[]>>;
  parameters: OpenApiParameter[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, { description: string; content?: Record<string, { schema: JsonSchema }> }>;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string }>;
  paths: Record<string, Partial<Record<'get' | 'post' | 'patch' | 'delete', OpenApiOperation>>>;
  components: { securitySchemes: Record<string, Record<string, string>>; schemas: Record<string, JsonSchema> };
}

/** The input side of a schema (what a client sends): transforms and defaults are the server's business. */
function inputSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** What a success answers, as JSON on the wire. */
export function answerSchema(schema: z.ZodType): JsonSchema {
  // The wire side of an answer is its codecs' input (src/api/answers.ts): a time is an ISO string there.
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** A path or query object schema as one OpenAPI parameter per property. */
function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query'): OpenApiParameter[] {
  if (!schema) return [];
  const json = inputSchema(schema);
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    const parameter: OpenApiParameter = { name, in: where, required: where === 'path' || required.has(name), schema: rest };
    if (typeof description === 'string') parameter.description = description;
    return parameter;
  });
}

/** `/inbox/:source/:event_id` as OpenAPI writes it: `/inbox/{source}/{event_id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function operationId(spec: RouteSpec): string {
  const words = `${spec.method.toLowerCase()} ${spec.url}`
    .replace(/[:{}]/g, ' by ')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
}

const errorSchema: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', enum: Object.keys(errorCatalogue) },
    message: { type: 'string' },
    hint: { type: 'string' },
  },
};

/** The admin API as an OpenAPI 3.1 document, from the route specs whose schemas validate each request. */
export function buildOpenApiDocument(specs: readonly RouteSpec[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const spec of specs) {
    const path = `/api/v1${openApiPath(spec.url)}`;
    const errorResponse = {
      description: 'a coded error (see docs/errors.md)',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
    const success = spec.produces
      ? { description: spec.summary, content: { [spec.produces]: { schema: { type: 'string' } } } }
      : { description: spec.summary, content: { 'application/json': { schema: spec.response ? answerSchema(spec.response) : {} } } };
    const operation: OpenApiOperation = {
      operationId: operationId(spec),
      summary: spec.summary,
      tags: [spec.tag],
      'x-tekil-permission': spec.permission,
      ...(spec.tenant ? { 'x-tekil-tenant': true as const } : {}),
      security: spec.permission === 'public' ? [] : [{ bearer: [] }, { session: [] }],
      parameters: [...parametersOf(spec.params, 'path'), ...parametersOf(spec.query, 'query')],
      responses: { [String(spec.status ?? 200)]: success, default: errorResponse },
    };
    if (spec.body) {
      const schema = inputSchema(spec.body);
      // A body whose every field is optional may be left out (`curl -X POST` with no body).
      const required = Array.isArray(schema.required) && schema.required.length > 0;
      operation.requestBody = { required, content: { 'application/json': { schema } } };
    }
    (paths[path] ??= {})[spec.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete'] = operation;
  }
  // Served beside the admin API, not under it (src/api/signing-keys.ts): public, for receivers.
  Object.assign(paths, jwksOpenApiPath as OpenApiDocument['paths']);
  return {
    openapi: '3.1.0',
    info: {
      title: 'tekil admin API',
      version: '1',
      description:
        'The admin API of a running tekil (the api role). Every request is authenticated with a bearer token (the admin token, or an operator token with a role) or a dashboard session cookie; changes made with the cookie also carry the x-tekil-csrf header.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'the admin token, or an operator token (tko_…)' },
        session: { type: 'apiKey', in: 'cookie', name: 'tekil_session', description: 'from POST /api/v1/session' },
      },
      schemas: { Error: errorSchema },
    },
  };
}
