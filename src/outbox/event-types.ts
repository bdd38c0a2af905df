import { z } from 'zod';
import { TekilError } from '../errors.js';
import type { Db, Queryable } from '../store/db.js';
import { insertEventType, listEventTypes, lockEventType, selectEventType, updateEventType, type EventTypeRow } from '../store/sql/outbox/event-types.js';
import type { Scope } from '../scope.js';
import { scopeTenantId } from '../scope.js';
import { compileEventSchema } from './event-schema.js';

/**
 * The event catalogue (docs/event-types.md): the types a provider declares for its merchants, each with
 * a description, a JSON Schema (2020-12) for the message's `data`, an example, and who may read it.
 */

/** Like a published message's type (src/outbox/publish.ts). */
const typeName = z.string().regex(/^[A-Za-z0-9_.:-]{1,255}$/, 'an event type is 1 to 255 letters, digits, _ . : -');
const tenantIdText = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a tenant id is 1 to 64 letters, digits, _ . : -');
/** A JSON Schema is an object or a boolean (`true`: anything); checked further by compiling it. */
const jsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()]);

const fields = {
  description: z.string().max(4000),
  /** A JSON Schema (2020-12) the `data` of this type's messages must match; null: any data. */
  schema: jsonSchema.nullable(),
  /** The `data` of a typical message; checked against the schema. */
  example: z.unknown(),
  /** Still sent, but shown as deprecated: merchants should stop relying on it. */
  deprecated: z.boolean(),
  /** The tenants that read it (null: every tenant). */
  tenant_ids: z.array(tenantIdText).max(10_000).nullable(),
};

export const eventTypeCreateSchema = z
  .object({
    name: typeName,
    description: fields.description.default(''),
    schema: fields.schema.default(null),
    example: fields.example.optional(),
    deprecated: fields.deprecated.default(false),
    tenant_ids: fields.tenant_ids.default(null),
  })
  .strict();

export const eventTypeUpdateSchema = z
  .object({
    description: fields.description.optional(),
    schema: fields.schema.optional(),
    example: fields.example.optional(),
    deprecated: fields.deprecated.optional(),
    tenant_ids: fields.tenant_ids.optional(),
  })
  .strict();

export const eventTypeNameParams = z.object({ name: typeName });

/** A type as the API answers it. */
export const eventTypeSchema = z.object({
  name: z.string(),
  description: z.string(),
  schema: jsonSchema.nullable(),
  example: z.unknown(),
  deprecated: z.boolean(),
  tenant_ids: z.array(z.string()).nullable(),
  /** Moves on with each change of the schema. */
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EventType = z.infer<typeof eventTypeSchema>;

function toEventType(row: EventTypeRow): EventType {
  return {
    name: row.name,
    description: row.description,
    schema: row.schema as EventType['schema'],
    example: row.example ?? null,
    deprecated: row.deprecated,
    tenant_ids: row.tenant_ids,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A tenant's caller reads only what is shown to its tenant; no other type exists for it. */
const visibleTo = (type: EventTypeRow, scope: Scope): boolean =>
  scope.tenantId === undefined || type.tenant_ids === null || type.tenant_ids.includes(scope.tenantId);

/** Refuses a schema that does not compile, and an example its schema refuses. */
function checkDeclaration(name: string, schema: unknown, example: unknown): void {
  if (schema === null) return;
  const validate = compileEventSchema(schema, `schema of ${name}`);
  if (example === undefined || example === null) return;
  const failure = validate(example);
  if (failure) throw new TekilError('VALIDATION_FAILED', `example: does not match the schema at ${failure.path}: ${failure.message}`);
}

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

export async function createEventType(db: Db, input: z.infer<typeof eventTypeCreateSchema>): Promise<EventType> {
  checkDeclaration(input.name, input.schema, input.example);
  const { rows } = await insertEventType.run(db, {
    name: input.name,
    description: input.description,
    schemaJson: json(input.schema),
    exampleJson: json(input.example),
    deprecated: input.deprecated,
    tenantIds: input.tenant_ids,
  });
  if (!rows[0]) throw new TekilError('CONFLICT', `event type ${input.name} exists`, { hint: 'change it with PATCH /api/v1/event-types/{name}' });
  return toEventType(rows[0]);
}

export async function updateEventTypeByName(db: Db, name: string, change: z.infer<typeof eventTypeUpdateSchema>): Promise<EventType> {
  return db.transaction(async (tx) => {
    const current = (await lockEventType.run(tx, { name })).rows[0];
    if (!current) throw new TekilError('NOT_FOUND', `no event type ${name}`);
    const schema = change.schema === undefined ? current.schema : change.schema;
    const example = change.example === undefined ? current.example : change.example;
    checkDeclaration(name, schema, example);
    const schemaJson = json(schema);
    const { rows } = await updateEventType.run(tx, {
      name,
      description: change.description ?? current.description,
      schemaJson,
      exampleJson: json(example),
      deprecated: change.deprecated ?? current.deprecated,
      tenantIds: change.tenant_ids === undefined ? current.tenant_ids : change.tenant_ids,
      schemaChanged: schemaJson !== json(current.schema),
    });
    return toEventType(rows[0]!);
  });
}

export async function listEventTypesIn(db: Queryable, scope: Scope): Promise<EventType[]> {
  return (await listEventTypes.run(db, { tenantId: scopeTenantId(scope) })).rows.map(toEventType);
}

export async function getEventType(db: Queryable, scope: Scope, name: string): Promise<EventType> {
  const row = (await selectEventType.run(db, { name })).rows[0];
  if (!row || !visibleTo(row, scope)) throw new TekilError('NOT_FOUND', `no event type ${name}`);
  return toEventType(row);
}
