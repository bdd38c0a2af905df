import { defineStatement, type NoParams } from '../statement.js';

/**
 * Catalog reads that render the schema (src/store/schema-dump.ts): every object in the `public`
 * schema, each in a fixed order, in Postgres's own words (pg_get_*def), so the result is the same on
 * Postgres and on PGlite and the same on every run.
 */

export interface TableColumnRow {
  table_name: string;
  kind: string;
  column_name: string;
  type: string;
  not_null: boolean;
  default_expr: string | null;
  identity: string;
  generated: string;
}

/** Tables and views with their columns, in column order. */
export const tableColumns = defineStatement<NoParams, TableColumnRow>(
  'schema_table_columns',
  `SELECT c.relname AS table_name, c.relkind::text AS kind, a.attname AS column_name,
          format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
          pg_get_expr(d.adbin, d.adrelid) AS default_expr, a.attidentity::text AS identity, a.attgenerated::text AS generated
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v')
    ORDER BY c.relname, a.attnum`,
);

export interface ViewRow {
  view_name: string;
  definition: string;
}

export const views = defineStatement<NoParams, ViewRow>(
  'schema_views',
  `SELECT c.relname AS view_name, pg_get_viewdef(c.oid, true) AS definition
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind = 'v'
    ORDER BY c.relname`,
);

export interface ConstraintRow {
  table_name: string;
  constraint_name: string;
  definition: string;
}

/** Table constraints (primary keys, uniques, checks, foreign keys); NOT NULL is shown on its column. */
export const constraints = defineStatement<NoParams, ConstraintRow>(
  'schema_constraints',
  `SELECT c.relname AS table_name, k.conname AS constraint_name, pg_get_constraintdef(k.oid, true) AS definition
     FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND k.contype IN ('p', 'u', 'c', 'f', 'x')
    ORDER BY c.relname, k.contype, k.conname`,
);

export interface DefinitionRow {
  name: string;
  definition: string;
}

/** Indexes, but those a constraint owns (shown with the constraint). */
export const indexes = defineStatement<NoParams, DefinitionRow>(
  'schema_indexes',
  `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
     FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.oid AND k.contype IN ('p', 'u', 'x'))
    ORDER BY t.relname, i.relname`,
);

/** Functions and procedures. */
export const functions = defineStatement<NoParams, DefinitionRow>(
  'schema_functions',
  `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS name, pg_get_functiondef(p.oid) AS definition
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public'
    ORDER BY 1`,
);

/** Triggers tekil declared (not the ones Postgres makes for foreign keys). */
export const triggers = defineStatement<NoParams, DefinitionRow>(
  'schema_triggers',
  `SELECT c.relname || '.' || g.tgname AS name, pg_get_triggerdef(g.oid, true) AS definition
     FROM pg_trigger g
     JOIN pg_class c ON c.oid = g.tgrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND NOT g.tgisinternal
    ORDER BY 1`,
);
