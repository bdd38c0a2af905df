import type { Command } from 'commander';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';

const TOKEN_COLUMNS = ['id', 'name', 'role', 'prefix', 'created_at', 'last_used_at', 'revoked_at'];

const tenantPath = (id: string) => `/api/v1/tenants/${encodeURIComponent(id)}`;

/**
 * `tekil tenants token …` and `tekil tenants portal-link`: a tenant's own access (docs/tenants.md).
 * Tokens see one tenant only; a portal link opens the merchant portal once.
 */
export function registerTenantAccessCommands(tenants: Command): void {
  const token = tenants.command('token').description("Manage a tenant's tokens (they see that tenant only; admin token needed).");

  addApiOptions(token.command('create <tenant>').description('Make a token of one tenant; prints it once.'))
    .requiredOption('--role <role>', 'viewer (can look) or operator (can also resend, test and change its endpoints)')
    .option('--name <name>', 'what the token is for (e.g. backend)')
    .action(async (tenant: string, flags: ApiOptions & { role: string; name?: string }) => {
      const body = { role: flags.role, ...(flags.name !== undefined ? { name: flags.name } : {}) };
      const made = await callApi<Record<string, unknown>>(resolveApiTarget(flags), 'POST', `${tenantPath(tenant)}/tokens`, body);
      process.stdout.write(`${JSON.stringify(made, null, 2)}\n`);
      process.stderr.write('The token is shown only now: tekil keeps only its hash.\n');
    });

  addApiOptions(token.command('list <tenant>').description("List a tenant's tokens."))
    .option('--revoked', 'include revoked tokens')
    .option('--json', 'print JSON')
    .action(async (tenant: string, flags: ApiOptions & { revoked?: boolean; json?: boolean }) => {
      const path = `${tenantPath(tenant)}/tokens${flags.revoked ? '?revoked=true' : ''}`;
      const { items } = await callApi<{ items: Array<Record<string, unknown>> }>(resolveApiTarget(flags), 'GET', path);
      printRows(items, TOKEN_COLUMNS, flags.json ?? false);
    });

  addApiOptions(token.command('revoke <tenant> <token_id>').description('Revoke a tenant token; the sessions signed in with it end at once.')).action(
    async (tenant: string, tokenId: string, flags: ApiOptions) => {
      const revoked = await callApi(resolveApiTarget(flags), 'POST', `${tenantPath(tenant)}/tokens/${encodeURIComponent(tokenId)}/revoke`);
      process.stdout.write(`${JSON.stringify(revoked, null, 2)}\n`);
    },
  );

  addApiOptions(tenants.command('portal-link <tenant>').description("Make a one-time link into the tenant's portal; prints the URL."))
    .option('--ttl <duration>', 'how long the link works (default 10m, at most 24h)')
    .option('--role <role>', 'viewer (default) or operator')
    .option('--json', 'print the whole answer as JSON')
    .action(async (tenant: string, flags: ApiOptions & { ttl?: string; role?: string; json?: boolean }) => {
      const body = { ...(flags.ttl !== undefined ? { ttl: flags.ttl } : {}), ...(flags.role !== undefined ? { role: flags.role } : {}) };
      const made = await callApi<{ url: string; expires_at: string }>(resolveApiTarget(flags), 'POST', `${tenantPath(tenant)}/portal-links`, body);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(made, null, 2)}\n`);
        return;
      }
      process.stdout.write(`${made.url}\n`);
      process.stderr.write(`Works once, until ${made.expires_at}.\n`);
    });
}
