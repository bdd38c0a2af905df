import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distributionExceptions, tablePlacement, tenantDistributedTables, tenantKeyGaps } from '../src/store/distribution.js';
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
describe.skipIf(!onPostgres && postgresUrl !== undefined)('schema rules for distributing on Citus: the inbox by source, the outbox by tenant', () => {
  let t: TestDb;
  let tables: string[];
  let sourceTables: Set<string>;
  let tenantTables: Set<string>;
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
    tenantTables = new Set(
      (
        await t.db.query<{ name: string }>(
          `SELECT attrelid::regclass::text AS name FROM pg_attribute WHERE attname = 'tenant_id' AND NOT attisdropped AND attnum > 0`,
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

  /** What the schema lacks for distributing the outbox tables by tenant_id, named as tenantKeyGaps names it. */
  const tenantGaps = () => {
    const planned = new Set<string>(tenantDistributedTables);
    const gaps: string[] = [];
    for (const table of tenantDistributedTables) {
      if (!tenantTables.has(table)) gaps.push(`${table}.tenant_id`);
      for (const index of unique.filter((u) => u.table === table)) if (index.columns[0] !== 'tenant_id') gaps.push(`${table}.${index.name}`);
    }
    for (const fk of foreignKeys.filter((k) => planned.has(k.table) || planned.has(k.referenced))) {
      const bothPlanned = planned.has(fk.table) && planned.has(fk.referenced);
      const joinsOnTenant = fk.columns.includes('tenant_id') && fk.referencedColumns.includes('tenant_id');
      // A planned table may point at a reference table (endpoints, tenants) without its tenant_id.
      if (bothPlanned ? !joinsOnTenant : !(planned.has(fk.table) && tablePlacement[fk.referenced] === 'reference')) gaps.push(`${fk.table}.${fk.name}`);
    }
    return gaps.sort();
  };

  it('the outbox tables planned for distribution by tenant_id lack exactly the keys and columns written in tenantKeyGaps', () => {
    expect(tenantGaps()).toEqual(Object.keys(tenantKeyGaps).sort());
  });

  it('the outbox tables stay on the coordinator while any gap of the tenant plan is open, and become by-tenant only when none is', () => {
    for (const table of tenantDistributedTables) {
      const open = tenantGaps().filter((gap) => gap.startsWith(`${table}.`));
      expect({ table, placement: tablePlacement[table] }).toEqual({ table, placement: open.length > 0 ? 'coordinator' : 'by-tenant' });
    }
  });

  it('the tables the outbox reads with every publish and claim (tenants, endpoints, their secrets) are reference tables, joinable on any shard', () => {
    const placements = ['tenants', 'endpoints', 'endpoint_secrets'].map((table) => `${table}: ${tablePlacement[table]}`);
    expect(placements).toEqual(['tenants: reference', 'endpoints: reference', 'endpoint_secrets: reference']);
  });

  it('every written exception still names a real index or constraint (stale entries are removed)', () => {
    const names = new Set([...unique.map((u) => `${u.table}.${u.name}`), ...foreignKeys.map((fk) => `${fk.table}.${fk.name}`)]);
    expect(Object.keys(distributionExceptions).filter((key) => !names.has(key))).toEqual([]);
  });
});
