import { defineStatement, type NoParams } from '../statement.js';

/** The event catalogue (migration 037, docs/event-types.md). */

export interface EventTypeRow {
  name: string;
  description: string;
  /** A JSON Schema (2020-12), as written; null: any `data`. */
  schema: unknown;
  example: unknown;
  deprecated: boolean;
  /** null: every tenant reads it. */
  tenant_ids: string[] | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'name, description, schema, example, deprecated, tenant_ids, version, created_at, updated_at';

export interface EventTypeWrite extends Record<string, unknown> {
  name: string;
  description: string;
  /** JSON text, or null. */
  schemaJson: string | null;
  exampleJson: string | null;
  deprecated: boolean;
  tenantIds: string[] | null;
}

/** A new type; no row back when the name is taken. */
export const insertEventType = defineStatement<EventTypeWrite, EventTypeRow>(
  'tekil_event_types_insert',
  `INSERT INTO event_types (name, description, schema, example, deprecated, tenant_ids)
   VALUES ($name, $description, $schemaJson::json, $exampleJson::json, $deprecated, $tenantIds::text[])
   ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
);

export const selectEventType = defineStatement<{ name: string }, EventTypeRow>(
  'tekil_event_types_select',
  `SELECT ${COLUMNS} FROM event_types WHERE name = $name`,
);

/** One type, locked for a change (the change merges into what is there). */
export const lockEventType = defineStatement<{ name: string }, EventTypeRow>(
  'tekil_event_types_lock',
  `SELECT ${COLUMNS} FROM event_types WHERE name = $name FOR UPDATE`,
);

/** Writes a type whole; `schemaChanged` moves its version on, so every process compiles the new schema. */
export const updateEventType = defineStatement<EventTypeWrite & { schemaChanged: boolean }, EventTypeRow>(
  'tekil_event_types_update',
  `UPDATE event_types SET description = $description, schema = $schemaJson::json, example = $exampleJson::json,
     deprecated = $deprecated, tenant_ids = $tenantIds::text[],
     version = version + CASE WHEN $schemaChanged::boolean THEN 1 ELSE 0 END, updated_at = now()
   WHERE name = $name RETURNING ${COLUMNS}`,
);

/** The types a tenant reads (null: every type, for an operator), by name. */
export const listEventTypes = defineStatement<{ tenantId: string | null }, EventTypeRow>(
  'tekil_event_types_list',
  `SELECT ${COLUMNS} FROM event_types
   WHERE $tenantId::text IS NULL OR tenant_ids IS NULL OR $tenantId = ANY (tenant_ids)
   ORDER BY name`,
);

/** What publishing checks against: each type's schema and its version (the catalogue is small). */
export const catalogueSchemas = defineStatement<NoParams, { name: string; version: number; schema: unknown }>(
  'tekil_event_types_schemas',
  'SELECT name, version, schema FROM event_types',
  'prepared',
);
