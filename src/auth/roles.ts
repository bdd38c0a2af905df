/**
 * What a caller must be allowed to do to use a route: `public` needs no credentials (signing in),
 * `view` reads, `operate` changes deliveries and endpoints (replay, discard, rotate, create), `admin`
 * manages operators (the admin token only).
 */
export const permissions = ['public', 'view', 'operate', 'admin'] as const;
export type Permission = (typeof permissions)[number];

export const operatorRoles = ['viewer', 'operator'] as const;
export type OperatorRole = (typeof operatorRoles)[number];
/** Who is calling: an operator by role, or the admin token, which may do everything. */
export type CallerRole = OperatorRole | 'admin';

export interface Caller {
  role: CallerRole;
  /** The operator's id; none for the admin token. */
  operatorId?: string;
  /** For logs and the panel: the operator's name, `admin`, or `tenant:<id>` (with the token's id). */
  name: string;
  /**
   * Set for a tenant's caller (a tenant token, or a session opened by a portal link): it sees that
   * tenant's rows only, on the routes marked `tenant: true`; every other id is not found to it.
   */
  tenantId?: string;
  /** The tenant token it came with; none for a portal session. */
  tenantTokenId?: string;
}

const granted: Readonly<Record<CallerRole, ReadonlySet<Permission>>> = {
  viewer: new Set(['view']),
  operator: new Set(['view', 'operate']),
  admin: new Set(['view', 'operate', 'admin']),
};

export function roleAllows(role: CallerRole, permission: Permission): boolean {
  return granted[role].has(permission);
}
