import type { OpenApiDocument, OpenApiOperation, OpenApiParameter } from './openapi.js';

type JsonSchema = Record<string, unknown>;

/** A schema in one short line: `string (date-time)`, `integer 1–500, default 50`, `"dead" | "done"`. */
export function describeSchema(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(describeSchema).join(' or ');
  const parts: string[] = [];
  let type = typeof schema.type === 'string' ? schema.type : Array.isArray(schema.type) ? schema.type.join(' or ') : 'any';
  if (type === 'array' && typeof schema.items === 'object' && schema.items !== null) type = `array of ${describeSchema(schema.items as JsonSchema)}`;
  parts.push(typeof schema.format === 'string' ? `${type} (${schema.format})` : type);
  const min = schema.minimum ?? schema.minLength ?? schema.minItems;
  const max = schema.maximum ?? schema.maxLength ?? schema.maxItems;
  const bound = (n: unknown) => (typeof n === 'number' && Math.abs(n) < Number.MAX_SAFE_INTEGER ? String(n) : undefined);
  if (bound(min) !== undefined || bound(max) !== undefined) parts.push(`${bound(min) ?? ''}–${bound(max) ?? ''}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.join(', ');
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function fieldRows(fields: Array<{ name: string; where: string; required: boolean; schema: JsonSchema; description?: string }>): string[] {
  if (fields.length === 0) return [];
  const rows = ['| field | in | required | type | note |', '| --- | --- | --- | --- | --- |'];
  for (const f of fields) {
    rows.push(`| \`${f.name}\` | ${f.where} | ${f.required ? 'yes' : 'no'} | ${cell(describeSchema(f.schema))} | ${cell(f.description ?? '')} |`);
  }
  return rows;
}

function bodyFields(op: OpenApiOperation): Array<{ name: string; where: string; required: boolean; schema: JsonSchema; description?: string }> {
  const schema = op.requestBody?.content['application/json'].schema;
  if (!schema) return [];
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([name, s]) => ({
    name,
    where: 'body',
    required: required.has(name),
    schema: s,
    description: typeof s.description === 'string' ? s.description : undefined,
  }));
}

const who: Record<string, string> = {
  public: 'anyone',
  view: 'any token or session (viewer, operator, admin)',
  operate: 'operator or admin',
  admin: 'the admin token only',
};

/** The OpenAPI document as the Markdown reference in docs/api.md (generated: `npm run docs:api`). */
export function renderApiMarkdown(doc: OpenApiDocument): string {
  const out: string[] = [
    '# Admin API reference',
    '',
    '<!-- Generated from the OpenAPI document (GET /api/v1/openapi.json) by `npm run docs:api`; do not edit by hand. -->',
    '',
    doc.info.description,
    '',
    'Errors answer with a code from [the catalogue](errors.md): `{"error": CODE, "message": …, "hint"?: …}`.',
    'Authentication, roles and sessions are described in [dashboard.md](dashboard.md).',
    '',
  ];
  const byTag = new Map<string, Array<{ method: string; path: string; op: OpenApiOperation }>>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const list = byTag.get(op.tags[0] ?? 'other') ?? [];
      list.push({ method: method.toUpperCase(), path, op });
      byTag.set(op.tags[0] ?? 'other', list);
    }
  }
  for (const [tag, entries] of byTag) {
    out.push(`## ${tag}`, '');
    for (const { method, path, op } of entries) {
      out.push(
        `### \`${method} ${path}\``,
        '',
        `${op.summary}.`,
        '',
        `Who: ${who[op['x-tekil-permission']] ?? op['x-tekil-permission']}${op['x-tekil-tenant'] ? '; also a tenant token or portal session, which sees its own tenant only' : ''}.`,
      );
      const success = Object.entries(op.responses).find(([status]) => status !== 'default');
      if (success) {
        const type = Object.keys(success[1].content ?? {})[0];
        out.push(`Answers: ${success[0]}${type && type !== 'application/json' ? ` (${type})` : ''}.`);
      }
      out.push('');
      const params = op.parameters.map((p: OpenApiParameter) => ({
        name: p.name,
        where: p.in,
        required: p.required,
        schema: p.schema,
        description: p.description,
      }));
      const rows = fieldRows([...params, ...bodyFields(op)]);
      if (rows.length) out.push(...rows, '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
