import type { Command } from 'commander';
import { endpointSchemes } from '../outbox/types.js';
import { parseHmacOption } from './config.js';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';

interface EndpointFlags extends ApiOptions {
  /** The destination (`update --destination`); `--url` is the tekil API's own address. */
  destination?: string;
  eventTypes?: string;
  ladder?: string;
  timeout?: string;
  maxInFlight?: string;
  rateLimit?: string;
  scheme?: string;
  hmac?: string;
  description?: string;
  tenant?: string;
  eventId?: string;
  signing?: string;
  inherit?: string;
  json?: boolean;
}

const COLUMNS = ['id', 'url', 'enabled', 'event_types', 'ladder', 'timeout_ms', 'max_in_flight', 'rate_limit', 'scheme', 'event_id', 'consecutive_failures'];

/** `--ladder paymos` names a preset; `--ladder 30s,2m,1h` lists gaps. */
function parseLadder(text: string): string | string[] {
  return /^\d/.test(text) ? text.split(',').map((g) => g.trim()) : text;
}

function endpointBody(flags: EndpointFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (flags.destination !== undefined) body.url = flags.destination;
  if (flags.eventTypes !== undefined)
    body.event_types = flags.eventTypes
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  if (flags.ladder !== undefined) body.ladder = parseLadder(flags.ladder);
  if (flags.timeout !== undefined) body.timeout = flags.timeout;
  if (flags.maxInFlight !== undefined) body.max_in_flight = Number(flags.maxInFlight);
  // `--rate-limit none` removes the limit.
  if (flags.rateLimit !== undefined) body.rate_limit = flags.rateLimit === 'none' ? null : flags.rateLimit;
  if (flags.scheme !== undefined) body.scheme = flags.scheme;
  if (flags.hmac !== undefined) body.hmac = parseHmacOption(flags.hmac);
  if (flags.description !== undefined) body.description = flags.description;
  if (flags.tenant !== undefined) body.tenant_id = flags.tenant;
  if (flags.eventId !== undefined) body.event_id = flags.eventId;
  if (flags.signing !== undefined) body.signing = flags.signing;
  if (flags.inherit !== undefined)
    body.inherit = flags.inherit
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  return body;
}

function settingOptions(cmd: Command): Command {
  return cmd
    .option('--event-types <list>', 'comma-separated event types: exact (invoice.paid) or prefix (invoice.*); none = all')
    .option('--ladder <ladder>', 'retry ladder: a preset (standard, paymos, mercanpay) or gaps like 30s,2m,1h')
    .option('--timeout <duration>', 'deadline for a whole attempt, to the last byte of the answer, e.g. 10s (at most 5m)')
    .option('--max-in-flight <n>', 'most concurrent requests to this endpoint')
    .option('--rate-limit <rate>', 'most requests per second, minute or hour, across all dispatchers, e.g. 20/s or 600/m (none: no limit)')
    .option('--scheme <scheme>', `signature scheme: ${endpointSchemes.join(', ')}`)
    .option('--hmac <json>', 'for --scheme hmac: its options as JSON, e.g. {"signature_header":"X-Signature","encoding":"base64"}')
    .option('--description <text>', 'a note for operators')
    .option('--event-id <mode>', 'the event id receivers see: message (the message id, the same at every endpoint) or delivery (one per delivery)')
    .option('--signing <mode>', "scheme standard: v1 (HMAC with its secret), v1a (Ed25519 with its tenant's key) or both");
}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

export function registerEndpointsCommand(program: Command): void {
  const endpoints = program.command('endpoints').description('Manage the endpoints tekil sends events to (through the admin API).');

  settingOptions(
    addApiOptions(
      endpoints
        .command('create <destination>')
        .description(
          'Create an endpoint sending to <destination>: an http(s) URL, or a broker (amqp://, nats://, redis://; docs/destinations.md); prints its secret once.',
        ),
    ),
  )
    .option('--tenant <id>', 'the tenant (merchant) it belongs to (default: the default tenant)')
    .action(async (destination: string, flags: EndpointFlags) => {
      const created = await callApi<Record<string, unknown>>(resolveApiTarget(flags), 'POST', '/api/v1/endpoints', endpointBody({ ...flags, destination }));
      print(created);
      process.stderr.write('The secret is shown only now: give it to the receiver to verify signatures.\n');
    });

  addApiOptions(endpoints.command('list').description('List endpoints.'))
    .option('--tenant <id>', 'only this tenant’s endpoints')
    .option('--json', 'print JSON')
    .action(async (flags: EndpointFlags) => {
      const qs = flags.tenant ? `?tenant_id=${encodeURIComponent(flags.tenant)}` : '';
      const { items } = await callApi<{ items: Array<Record<string, unknown>> }>(resolveApiTarget(flags), 'GET', `/api/v1/endpoints${qs}`);
      printRows(items, COLUMNS, flags.json ?? false);
    });

  addApiOptions(endpoints.command('show <id>').description('Show one endpoint.')).action(async (id: string, flags: ApiOptions) => {
    print(await callApi(resolveApiTarget(flags), 'GET', `/api/v1/endpoints/${encodeURIComponent(id)}`));
  });

  settingOptions(addApiOptions(endpoints.command('update <id>').description('Change an endpoint’s settings.')))
    .option('--destination <url>', 'new destination: an http(s) URL or a broker URL (amqp://, nats://, redis://)')
    .option(
      '--inherit <settings>',
      "hand settings back to the tenant's defaults (else the file's): comma-separated, of ladder, timeout, max_in_flight, rate_limit, event_id",
    )
    .action(async (id: string, flags: EndpointFlags) => {
      print(await callApi(resolveApiTarget(flags), 'PATCH', `/api/v1/endpoints/${encodeURIComponent(id)}`, endpointBody(flags)));
    });

  for (const [name, description] of [
    ['disable', 'Stop sending to an endpoint (its deliveries wait until it is enabled).'],
    ['enable', 'Resume sending to an endpoint.'],
    ['ping', 'Send a test.ping event to an endpoint.'],
  ] as const) {
    addApiOptions(endpoints.command(`${name} <id>`).description(description)).action(async (id: string, flags: ApiOptions) => {
      print(await callApi(resolveApiTarget(flags), 'POST', `/api/v1/endpoints/${encodeURIComponent(id)}/${name}`));
    });
  }

  addApiOptions(endpoints.command('rotate-secret <id>').description('Make a new secret; the old one keeps signing for the window.'))
    .option('--window <duration>', 'how long the old secret keeps signing (default: sending.rotation_window, 24h)')
    .action(async (id: string, flags: ApiOptions & { window?: string }) => {
      const body = flags.window ? { window: flags.window } : {};
      print(await callApi(resolveApiTarget(flags), 'POST', `/api/v1/endpoints/${encodeURIComponent(id)}/rotate-secret`, body));
    });

  addApiOptions(endpoints.command('delete <id>').description('Delete an endpoint: unsent deliveries are cancelled, history is kept.')).action(
    async (id: string, flags: ApiOptions) => {
      print(await callApi(resolveApiTarget(flags), 'DELETE', `/api/v1/endpoints/${encodeURIComponent(id)}`));
    },
  );
}
