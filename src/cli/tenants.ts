import type { Command } from 'commander';
import { TekilError } from '../errors.js';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';
import { registerTenantAccessCommands } from './tenant-access.js';

interface TenantFlags extends ApiOptions {
  name?: string;
  metadata?: string;
  disabled?: boolean;
  enabled?: boolean;
  json?: boolean;
  confirm?: boolean;
  after?: string;
  limit?: string;
}

const COLUMNS = ['id', 'name', 'disabled', 'created_at'];

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

function tenantBody(flags: TenantFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (flags.name !== undefined) body.name = flags.name;
  if (flags.metadata !== undefined) {
    try {
      body.metadata = JSON.parse(flags.metadata) as unknown;
    } catch (err) {
      throw new TekilError('VALIDATION_FAILED', `--metadata is not JSON: ${(err as Error).message}`, { cause: err });
    }
  }
  if (flags.disabled) body.disabled = true;
  if (flags.enabled) body.disabled = false;
  return body;
}

const path = (id: string) => `/api/v1/tenants/${encodeURIComponent(id)}`;

export function registerTenantsCommand(program: Command): void {
  const tenants = program.command('tenants').description('Manage tenants, one per merchant (through the admin API).');

  addApiOptions(tenants.command('create [id]').description('Create a tenant; [id] is your own merchant id (generated when left out).'))
    .option('--name <name>', "the merchant's name")
    .option('--metadata <json>', 'free metadata as a JSON object')
    .option('--disabled', 'create it disabled (its messages are kept, not sent)')
    .action(async (id: string | undefined, flags: TenantFlags) => {
      print(await callApi(resolveApiTarget(flags), 'POST', '/api/v1/tenants', { ...(id !== undefined ? { id } : {}), ...tenantBody(flags) }));
    });

  addApiOptions(tenants.command('list').description('List tenants in id order.'))
    .option('--after <id>', 'start after this tenant id (the previous page’s next_cursor)')
    .option('--limit <n>', 'at most this many (default 100)')
    .option('--json', 'print JSON')
    .action(async (flags: TenantFlags) => {
      const query = new URLSearchParams();
      if (flags.after) query.set('after', flags.after);
      if (flags.limit) query.set('limit', flags.limit);
      const qs = query.size ? `?${query}` : '';
      const page = await callApi<{ items: Array<Record<string, unknown>>; next_cursor: string | null }>(resolveApiTarget(flags), 'GET', `/api/v1/tenants${qs}`);
      printRows(page.items, COLUMNS, flags.json ?? false);
      if (page.next_cursor && !flags.json) process.stderr.write(`more: --after ${page.next_cursor}\n`);
    });

  addApiOptions(tenants.command('show <id>').description('Show one tenant.')).action(async (id: string, flags: ApiOptions) => {
    print(await callApi(resolveApiTarget(flags), 'GET', path(id)));
  });

  addApiOptions(tenants.command('update <id>').description('Change a tenant’s name, metadata, or disable / enable it.'))
    .option('--name <name>', "the merchant's name")
    .option('--metadata <json>', 'free metadata as a JSON object (replaces the old)')
    .option('--disabled', 'keep its messages and send none')
    .option('--enabled', 'send its messages again')
    .action(async (id: string, flags: TenantFlags) => {
      print(await callApi(resolveApiTarget(flags), 'PATCH', path(id), tenantBody(flags)));
    });

  addApiOptions(tenants.command('delete <id>').description('Delete a tenant with its endpoints, messages, deliveries and attempts (needs --confirm).'))
    .option('--confirm', 'yes, remove everything the tenant owns')
    .action(async (id: string, flags: TenantFlags) => {
      print(await callApi(resolveApiTarget(flags), 'DELETE', path(id), { confirm: flags.confirm ?? false }));
    });

  registerTenantAccessCommands(tenants);
}
