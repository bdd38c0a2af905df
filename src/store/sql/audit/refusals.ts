import { defineStatement } from '../statement.js';
import type { AuditEventInsert } from './events.js';

/** A refusal's audit row and how many refusals of its key and minute it adds (migration 028). */
export type RefusalInsert = AuditEventInsert & { count: number; lastAt: Date; minute: Date; key: string };

const UPSERT = `ON CONFLICT (refusal_minute, refusal_key) WHERE refusal_key IS NOT NULL
   DO UPDATE SET count = a.count + excluded.count, last_at = greatest(a.last_at, excluded.last_at)`;

/** The first refusal of a key in a minute: its row, or one more on the row another process wrote. */
export const addRefusal = defineStatement<RefusalInsert, never>(
  'audit_add_refusal',
  `INSERT INTO audit_events AS a (actor, role, address, method, route, target, status, error_code, tenant_id, count, last_at, refusal_minute, refusal_key)
     VALUES ($actor, $role, $address, $method, $route, $target::jsonb, $status, $errorCode, $tenantId, $count, $lastAt, $minute, $key)
   ${UPSERT}`,
  'prepared',
);

/** The refusals counted in memory since the last flush, one row each, added to their key's row. */
export const addRefusals = defineStatement<
  {
    actors: string[];
    roles: Array<string | null>;
    addresses: Array<string | null>;
    methods: string[];
    routes: string[];
    targets: string[];
    statuses: number[];
    errorCodes: Array<string | null>;
    tenantIds: Array<string | null>;
    counts: number[];
    lastAts: Date[];
    minutes: Date[];
    keys: string[];
  },
  never
>(
  'audit_add_refusals',
  `INSERT INTO audit_events AS a (actor, role, address, method, route, target, status, error_code, tenant_id, count, last_at, refusal_minute, refusal_key)
   SELECT x.actor, x.role, x.address, x.method, x.route, x.target::jsonb, x.status, x.error_code, x.tenant_id, x.count, x.last_at, x.minute, x.key
     FROM unnest($actors::text[], $roles::text[], $addresses::text[], $methods::text[], $routes::text[], $targets::text[], $statuses::int[],
                 $errorCodes::text[], $tenantIds::text[], $counts::int[], $lastAts::timestamptz[], $minutes::timestamptz[], $keys::text[])
       AS x (actor, role, address, method, route, target, status, error_code, tenant_id, count, last_at, minute, key)
   ${UPSERT}`,
);
