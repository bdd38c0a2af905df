import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { TekilError } from '../errors.js';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';

interface FilterFlags extends ApiOptions {
  endpoint?: string;
  type?: string;
  status?: string;
  resourceId?: string;
  since?: string;
  until?: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
}

function filterOptions(cmd: Command): Command {
  return cmd
    .option('--endpoint <id>', 'only deliveries to this endpoint')
    .option('--type <type>', 'only this event type')
    .option('--status <status>', 'only deliveries in this status: pending, sending, succeeded, failed, cancelled')
    .option('--resource-id <id>', 'only events about this resource')
    .option('--since <time>', 'created at or after (ISO 8601)')
    .option('--until <time>', 'created before (ISO 8601)');
}

function query(flags: FilterFlags, extra: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams();
  const add = (k: string, v: string | undefined) => {
    if (v !== undefined) params.set(k, v);
  };
  add('endpoint_id', flags.endpoint);
  add('type', flags.type);
  add('status', flags.status);
  add('resource_id', flags.resourceId);
  add('since', flags.since);
  add('until', flags.until);
  for (const [k, v] of Object.entries(extra)) add(k, v);
  const text = params.toString();
  return text ? `?${text}` : '';
}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

export function registerMessagesCommand(program: Command): void {
  const messages = program.command('messages').description('Publish events, read the delivery history, replay (through the admin API).');

  addApiOptions(messages.command('publish').description('Publish an event to every subscribed endpoint.'))
    .requiredOption('--type <type>', 'event type, e.g. invoice.paid')
    .option('--resource-id <id>', 'the business object the event is about')
    .option('--data <json>', 'the event data as JSON', '{}')
    .option('--idempotency-key <key>', 'a repeat with the same key returns the first event id')
    .action(async (flags: ApiOptions & { type: string; resourceId?: string; data: string; idempotencyKey?: string }) => {
      let data: unknown;
      try {
        data = JSON.parse(flags.data);
      } catch (err) {
        throw new TekilError('VALIDATION_FAILED', `--data is not JSON: ${(err as Error).message}`, { cause: err });
      }
      const headers: Record<string, string> = flags.idempotencyKey ? { 'idempotency-key': flags.idempotencyKey } : {};
      print(await callApi(resolveApiTarget(flags), 'POST', '/api/v1/messages', { type: flags.type, resource_id: flags.resourceId ?? null, data }, headers));
    });

  filterOptions(addApiOptions(messages.command('list').description('List deliveries, newest first.')))
    .option('--limit <n>', 'rows per page (up to 1000)', '50')
    .option('--cursor <cursor>', 'continue from a previous page')
    .option('--all', 'follow the cursor to the last page')
    .option('--json', 'print JSON')
    .action(async (flags: FilterFlags & { all?: boolean }) => {
      const target = resolveApiTarget(flags);
      const rows: Array<Record<string, unknown>> = [];
      let cursor = flags.cursor;
      let next: string | null = null;
      do {
        const page: { items: Array<Record<string, unknown>>; next_cursor: string | null } = await callApi(
          target,
          'GET',
          `/api/v1/deliveries${query(flags, { limit: flags.limit, cursor })}`,
        );
        rows.push(...page.items);
        next = page.next_cursor;
        cursor = next ?? undefined;
      } while (flags.all && next);
      printRows(
        rows,
        ['message_id', 'event_type', 'endpoint_id', 'status', 'attempts', 'last_status_code', 'last_duration_ms', 'created_at'],
        flags.json ?? false,
      );
      if (next && !flags.all && !flags.json) process.stderr.write(`more: --cursor ${next}\n`);
    });

  addApiOptions(messages.command('show <id>').description('Show a message with every delivery and attempt.')).action(async (id: string, flags: ApiOptions) => {
    print(await callApi(resolveApiTarget(flags), 'GET', `/api/v1/messages/${encodeURIComponent(id)}`));
  });

  addApiOptions(messages.command('replay <id>').description('Send a message again with the same event id (to all its destinations or one endpoint).'))
    .option('--endpoint <id>', 'only to this endpoint')
    .action(async (id: string, flags: ApiOptions & { endpoint?: string }) => {
      const body = flags.endpoint ? { endpoint_id: flags.endpoint } : {};
      print(await callApi(resolveApiTarget(flags), 'POST', `/api/v1/messages/${encodeURIComponent(id)}/replay`, body));
    });

  addApiOptions(messages.command('replay-failed').description('Replay every failed delivery (of an endpoint, in a time range).'))
    .option('--endpoint <id>', 'only this endpoint’s deliveries')
    .option('--since <time>', 'created at or after (ISO 8601)')
    .option('--until <time>', 'created before (ISO 8601)')
    .action(async (flags: ApiOptions & { endpoint?: string; since?: string; until?: string }) => {
      const body: Record<string, string> = {};
      if (flags.endpoint) body.endpoint_id = flags.endpoint;
      if (flags.since) body.since = flags.since;
      if (flags.until) body.until = flags.until;
      print(await callApi(resolveApiTarget(flags), 'POST', '/api/v1/deliveries/replay-failed', body));
    });

  filterOptions(addApiOptions(messages.command('export').description('Export the delivery history as CSV.')))
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(async (flags: FilterFlags & { output?: string }) => {
      const csv = await callApi<string>(resolveApiTarget(flags), 'GET', `/api/v1/deliveries/export.csv${query(flags)}`);
      if (flags.output) await writeFile(flags.output, csv);
      else process.stdout.write(csv);
    });
}
