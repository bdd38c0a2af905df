import type { Command } from 'commander';
import { TekilError } from '../errors.js';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';
import { registerTenantAccessCommands } from './tenant-access.js';
import { registerTenantQuotasCommand } from './tenant-quotas.js';

interface TenantFlags extends ApiOptions {
  name?: string;
  metadata?: string;
  disabled?: boolean;
  enabled?: boolean;
  json?: boolean;
  confirm?: boolean;
  after?: string;
  limit?: string;
  ladder?: string;
  timeout?: string;
  rateLimit?: string;
  endpointMaxInFlight?: string;
  eventId?: string;
  maxInFlight?: string;
  weight?: string;
}

const COLUMNS = ['id', 'name', 'disabled', 'weight', 'max_in_flight', 'created_at'];

/** `none` clears a default (the file's applies again); a number flag is a number. */
const orNone = (text: string, read: (t: string) => unknown = (t) => t): unknown => (text === 'none' ? null : read(text));

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
  // `--ladder paymos` names a preset; `--ladder 30s,2m,1h` lists gaps.
  if (flags.ladder !== undefined) body.ladder = orNone(flags.ladder, (t) => (/^\d/.test(t) ? t.split(',').map((g) => g.trim()) : t));
  if (flags.timeout !== undefined) body.timeout = orNone(flags.timeout);
  if (flags.rateLimit !== undefined) body.rate_limit = orNone(flags.rateLimit);
  if (flags.endpointMaxInFlight !== undefined) body.endpoint_max_in_flight = orNone(flags.endpointMaxInFlight, Number);
  if (flags.eventId !== undefined) body.event_id = orNone(flags.eventId);
  if (flags.maxInFlight !== undefined) body.max_in_flight = orNone(flags.maxInFlight, Number);
  if (flags.weight !== undefined) body.weight = Number(flags.weight);
  return body;
}

/** A tenant's own settings (docs/tenants.md): defaults for its endpoints, and two of the tenant itself. */
function settingOptions(cmd: Command): Command {
  return cmd
    .option('--ladder <ladder>', "its endpoints' default ladder: a preset or gaps like 30s,2m,1h (none: the file's)")
    .option('--timeout <duration>', "its endpoints' default timeout, e.g. 10s (none: the file's)")
    .option('--rate-limit <rate>', "its endpoints' default rate limit, e.g. 20/s (none: no default)")
    .option('--endpoint-max-in-flight <n>', "its endpoints' default max_in_flight, each endpoint's own cap (none: the file's)")
    .option('--event-id <mode>', "its endpoints' default event id: message or delivery (none: the file's)")
    .option('--max-in-flight <n>', 'requests in flight across all its endpoints, every dispatcher together (none: sending.tenant_max_in_flight)')
    .option('--weight <n>', 'its share of claims against other tenants with due work, 1 to 100 (default 1)');
}

const path = (id: string) => `/api/v1/tenants/${encodeURIComponent(id)}`;

export function registerTenantsCommand(program: Command): void {
  const tenants = program.command('tenants').description('Manage tenants, one per merchant (through the admin API).');

  settingOptions(addApiOptions(tenants.command('create [id]').description('Create a tenant; [id] is your own merchant id (generated when left out).')))
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

  settingOptions(addApiOptions(tenants.command('update <id>').description('Change a tenant’s name, metadata or settings, or disable / enable it.')))
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

  addApiOptions(tenants.command('signing-keys <id>').description("List a tenant's live Ed25519 public keys (v1a), current first.")).action(
    async (id: string, flags: ApiOptions) => {
      print(await callApi(resolveApiTarget(flags), 'GET', `${path(id)}/signing-keys`));
    },
  );

  addApiOptions(
    tenants
      .command('rotate-key <id>')
      .description('Make a new Ed25519 key pair for a tenant (its first, or the next); the live keys keep signing for the window.'),
  )
    .option('--window <duration>', 'how long the previous keys keep signing (default: sending.rotation_window, 24h)')
    .action(async (id: string, flags: ApiOptions & { window?: string }) => {
      print(await callApi(resolveApiTarget(flags), 'POST', `${path(id)}/signing-keys/rotate`, flags.window ? { window: flags.window } : {}));
    });

  registerTenantAccessCommands(tenants);
  registerTenantQuotasCommand(tenants);
}
