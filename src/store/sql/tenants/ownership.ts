import { defineStatement } from '../statement.js';

/**
 * Which tenant owns a row: a tenant caller's request for an id is answered only when the row is its
 * own (src/tenants/scope.ts). One indexed lookup by primary key each.
 */

export const messageTenant = defineStatement<{ id: string }, { tenant_id: string }>(
  'tenant_scope_message',
  'SELECT tenant_id FROM outbox_messages WHERE id = $id',
  'prepared',
);

/** Deleted endpoints too: their history stays, and stays the tenant's. */
export const endpointTenant = defineStatement<{ id: string }, { tenant_id: string }>(
  'tenant_scope_endpoint',
  'SELECT tenant_id FROM endpoints WHERE id = $id',
  'prepared',
);
