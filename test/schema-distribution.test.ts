import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distributionExceptions, tablePlacement } from '../src/store/distribution.js';
import { createTestDb, onPostgres, postgresUrl, type TestDb } from './helpers/db.js';

interface UniqueIndex {
  table: string;
  name: string;
  columns: string[];
}

interface ForeignKey {
  table: string;
  name: string;
  referenced: string;
  columns: string[];
  referencedColumns: string[];
}

// The rules of src/store/distribution.ts, checked over the schema the migrations actually make. The
// schema is the same on both stores: checked once, on Postgres when the suite has one, else on PGlite.
describe.skipIf(!onPostgres && postgresUrl !== undefined)('schema rules for distributing the inbox by source (Citus)', () => {
  let t: TestDb;
  let tables: string[];
  let sourceTables: Set<string>;
  let unique: UniqueIndex[];
  let foreignKeys: ForeignKey[];

  beforeAll(async () => {
    t = await createTestDb();
    tables = (
      await t.db.query<{ name: string }>(
        `SELECT relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') ORDER BY 1`,
      )
    ).rows.map((r) => r.name);
    sourceTables = new Set(
      (
        await t.db.query<{ name: string }>(
          `SELECT attrelid::regclass::text AS name FROM pg_attribute WHERE attname = 'source' AND NOT attisdropped AND attnum > 0`,
        )
      ).rows.map((r) => r.name),
    );
    unique = (
      await t.db.query<{ table: string; name: string; columns: string[] }>(
        `SELECT i.indrelid::regclass::text AS table, ic.relname AS name,
                array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
         WHERE ic.relnamespace = 'public'::regnamespace AND i.indisunique`,
      )
    ).rows;
    foreignKeys = (
      await t.db.query<ForeignKey>(
        `SELECT conrelid::regclass::text AS table, conname AS name, confrelid::regclass::text AS referenced,
                array(SELECT a.attname::text FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k) AS columns,
                array(SELECT a.attname::text FROM unnest(c.confkey) k JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k) AS "referencedColumns"
         FROM pg_constraint c WHERE contype = 'f' AND connamespace = 'public'::regnamespace`,
      )
    ).rows;
  });
  afterAll(async () => {
    await t?.close();
  });

  const bySource = () =>
    Object.entries(tablePlacement)
      .filter(([, p]) => p === 'by-source')
      .map(([table]) => table);
  const excepted = (table: string, name: string) => `${table}.${name}` in distributionExceptions;

  it('every table of the schema has a placement (a new table must choose one)', () => {
    expect(tables.filter((table) => !(table in tablePlacement))).toEqual([]);
    expect(Object.keys(tablePlacement).filter((table) => !tables.includes(table))).toEqual([]);
  });

  it('every table distributed by source has a source column, and every primary key and unique index leads with it', () => {
    const broken: string[] = [];
    for (const table of bySource()) {
      if (!sourceTables.has(table)) broken.push(`${table}: no source column`);
      for (const index of unique.filter((u) => u.table === table)) {
        if (index.columns[0] !== 'source' && !excepted(table, index.name)) broken.push(`${table}.${index.name} (${index.columns.join(', ')})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('no foreign key crosses sources: a key touching a source-distributed table joins on source', () => {
    const placed = new Set(bySource());
    const crossing = foreignKeys
      .filter((fk) => placed.has(fk.table) || placed.has(fk.referenced))
      .filter((fk) => !(fk.columns.includes('source') && fk.referencedColumns.includes('source')) && !excepted(fk.table, fk.name))
      .map((fk) => `${fk.table}.${fk.name} → ${fk.referenced}`);
    expect(crossing).toEqual([]);
  });

  it('a reference table references only reference tables (a copy on every node cannot point at a shard)', () => {
    const referenceTables = new Set(
      Object.entries(tablePlacement)
        .filter(([, p]) => p === 'reference')
        .map(([table]) => table),
    );
    const wrong = foreignKeys.filter((fk) => referenceTables.has(fk.table) && !referenceTables.has(fk.referenced)).map((fk) => `${fk.table}.${fk.name}`);
    expect(wrong).toEqual([]);
  });

  it('every written exception still names a real index or constraint (stale entries are removed)', () => {
    const names = new Set([...unique.map((u) => `${u.table}.${u.name}`), ...foreignKeys.map((fk) => `${fk.table}.${fk.name}`)]);
    expect(Object.keys(distributionExceptions).filter((key) => !names.has(key))).toEqual([]);
  });
});
