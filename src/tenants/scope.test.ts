import { describe, expect, expectTypeOf, it } from 'vitest';
import { TekilError } from '../errors.js';
import { outboxExportTable } from '../dashboard/exports/table.js';
import type { EndpointStore } from '../outbox/endpoints.js';
import { getMessage, listDeliveries, listMessages } from '../outbox/history.js';
import { replayFailed } from '../outbox/operations.js';
import { EVERY_TENANT, scopeTenantId, tenantScope, type Scope } from '../scope.js';
import type { Queryable } from '../store/db.js';
import { narrowScope, scopeOf } from './scope.js';

describe('the scope of a request', () => {
  it('is every tenant for an operator or the admin token, one tenant for a tenant caller', () => {
    expect(scopeOf(undefined)).toEqual({ all: true });
    expect(scopeOf({})).toEqual({ all: true });
    expect(scopeOf({ tenantId: 'm_a' })).toEqual({ tenantId: 'm_a' });
    expect(scopeTenantId(EVERY_TENANT)).toBeNull();
    expect(scopeTenantId(tenantScope('m_a'))).toBe('m_a');
  });

  it("narrows to the tenant an operator names, and names no other tenant than a tenant caller's own", () => {
    expect(narrowScope(EVERY_TENANT, undefined)).toEqual({ all: true });
    expect(narrowScope(EVERY_TENANT, 'm_b')).toEqual({ tenantId: 'm_b' });
    expect(narrowScope(tenantScope('m_a'), undefined)).toEqual({ tenantId: 'm_a' });
    expect(narrowScope(tenantScope('m_a'), 'm_a')).toEqual({ tenantId: 'm_a' });
    const refused = (() => {
      try {
        narrowScope(tenantScope('m_a'), 'm_b');
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(TekilError);
    expect((refused as TekilError).code).toBe('TENANT_NOT_FOUND');
  });

  it('is a required argument of every list, detail and export of tenant-owned rows: without it they do not compile', () => {
    // Never called: `npm run typecheck` checks it, and fails if any line below compiles (an expected
    // error that does not come is itself an error). A list whose tenant was optional read every tenant
    // when it was left out.
    const probe = (db: Queryable, endpoints: EndpointStore) => {
      // @ts-expect-error a list takes the scope it reads in
      void listMessages(db, { limit: 1 });
      // @ts-expect-error a list takes the scope it reads in
      void listDeliveries(db, { limit: 1 });
      // @ts-expect-error a tenant is not a filter any more: undefined cannot mean every tenant
      void listDeliveries(db, EVERY_TENANT, { tenantId: undefined });
      // @ts-expect-error a detail takes the scope too: another tenant's message is not found
      void getMessage(db, 'evt_1');
      // @ts-expect-error an export takes the scope it reads in
      void outboxExportTable(db, {});
      // @ts-expect-error a bulk replay takes the scope it changes in
      void replayFailed(db, {});
      // @ts-expect-error the endpoint list takes the scope
      void endpoints.list(db);
      // @ts-expect-error the endpoint detail takes the scope
      void endpoints.get(db, 'ep_1');
    };
    expect(probe).toBeTypeOf('function');
    expectTypeOf(listMessages).parameter(1).toEqualTypeOf<Scope>();
    expectTypeOf(listDeliveries).parameter(1).toEqualTypeOf<Scope>();
    expectTypeOf(getMessage).parameter(1).toEqualTypeOf<Scope>();
    expectTypeOf(outboxExportTable).parameter(1).toEqualTypeOf<Scope>();
    expectTypeOf(replayFailed).parameter(1).toEqualTypeOf<Scope>();
    expectTypeOf<Parameters<EndpointStore['list']>[1]>().toEqualTypeOf<Scope>();
    expectTypeOf<Parameters<EndpointStore['get']>[1]>().toEqualTypeOf<Scope>();
  });
});
