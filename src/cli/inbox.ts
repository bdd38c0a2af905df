import type { Command } from 'commander';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';

interface FilterOptions extends ApiOptions {
  status?: string;
  source?: string;
  type?: string;
  resourceId?: string;
  eventId?: string;
  minAttempts?: string;
  since?: string;
  until?: string;
  json?: boolean;
}

const LIST_FIELDS = ['source', 'event_id', 'event_type', 'resource_id', 'status', 'attempts', 'received_at', 'last_error'];
const ATTEMPT_FIELDS = ['attempt', 'outcome', 'started_at', 'duration_ms', 'worker', 'error'];

function addFilterOptions(cmd: Command): Command {
  return cmd
    .option('--source <name>', 'only this source')
    .option('--type <type>', 'only this event type')
    .option('--resource-id <id>', 'only this resource id')
    .option('--event-id <id>', "only this event (the provider's delivery id)")
    .option('--min-attempts <n>', 'only deliveries attempted at least n times')
    .option('--since <time>', 'received at or after (ISO 8601 with offset, e.g. 2026-01-01T00:00:00Z)')
    .option('--until <time>', 'received before (ISO 8601 with offset)');
}

function filterOf(opts: FilterOptions): Record<string, string> {
  const f: Record<string, string> = {};
  if (opts.status) f.status = opts.status;
  if (opts.source) f.source = opts.source;
  if (opts.type) f.type = opts.type;
  if (opts.resourceId) f.resource_id = opts.resourceId;
  if (opts.eventId) f.event_id = opts.eventId;
  if (opts.minAttempts) f.min_attempts = opts.minAttempts;
  if (opts.since) f.since = opts.since;
  if (opts.until) f.until = opts.until;
  return f;
}

const path = (source: string, eventId: string) => `/api/v1/inbox/${encodeURIComponent(source)}/${encodeURIComponent(eventId)}`;

/** `tekil inbox list|show|replay|replay-bulk|discard`: the review queue and replays, over the admin API. */
export function registerInboxCommand(program: Command): void {
  const inbox = program.command('inbox').description('Received deliveries: the review queue (dead), replay, discard.');

  addFilterOptions(addApiOptions(inbox.command('list')))
    .description('List deliveries, newest first (the review queue: --status dead).')
    .option('--status <status>', 'pending, processing, done, stale, dead or discarded')
    .option('--limit <n>', 'rows per page (max 500)', '50')
    .option('--cursor <cursor>', 'the next_cursor of a previous page')
    .option('--json', 'print JSON')
    .action(async (opts: FilterOptions & { limit: string; cursor?: string }) => {
      const query = new URLSearchParams({ ...filterOf(opts), limit: opts.limit, ...(opts.cursor ? { cursor: opts.cursor } : {}) });
      const page = await callApi<{ items: Array<Record<string, unknown>>; next_cursor: string | null }>(
        resolveApiTarget(opts),
        'GET',
        `/api/v1/inbox?${query}`,
      );
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
        return;
      }
      printRows(page.items, LIST_FIELDS, false);
      if (page.next_cursor) process.stdout.write(`\nmore: --cursor ${page.next_cursor}\n`);
    });

  addApiOptions(inbox.command('show <source> <event_id>'))
    .description('Show one delivery with its body and every attempt.')
    .option('--json', 'print JSON')
    .action(async (source: string, eventId: string, opts: ApiOptions & { json?: boolean }) => {
      const d = await callApi<Record<string, unknown> & { attempt_history: Array<Record<string, unknown>>; body: string }>(
        resolveApiTarget(opts),
        'GET',
        path(source, eventId),
      );
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(d, null, 2)}\n`);
        return;
      }
      const { attempt_history: attempts, body, ...fields } = d;
      for (const [k, v] of Object.entries(fields))
        process.stdout.write(`${k.padEnd(16)}${v === null ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}\n`);
      const shown = fields.body_trimmed_at
        ? `(body trimmed by retention on ${String(fields.body_trimmed_at)}; the record is kept, copies stay duplicates)`
        : body;
      process.stdout.write(`\nbody:\n${shown}\n\nattempts:\n`);
      printRows(attempts, ATTEMPT_FIELDS, false);
    });

  addApiOptions(inbox.command('replay <source> <event_id>'))
    .description('Queue one delivery again (dead, stale or discarded; a done one needs --force).')
    .option('--force', 'replay even a done delivery, and let it past the ordering guard once')
    .action(async (source: string, eventId: string, opts: ApiOptions & { force?: boolean }) => {
      const d = await callApi<Record<string, unknown>>(resolveApiTarget(opts), 'POST', `${path(source, eventId)}/replay`, { force: Boolean(opts.force) });
      process.stdout.write(`queued ${String(d.source)}/${String(d.event_id)}\n`);
    });

  addFilterOptions(addApiOptions(inbox.command('replay-bulk')))
    .description('Queue every delivery matching the filter again (status dead unless --status).')
    .option('--status <status>', 'dead (default), stale, discarded, or done with --force')
    .option('--force', 'needed to replay done deliveries')
    .action(async (opts: FilterOptions & { force?: boolean }) => {
      const res = await callApi<{ replayed: number }>(resolveApiTarget(opts), 'POST', '/api/v1/inbox/replay', {
        ...filterOf(opts),
        force: Boolean(opts.force),
      });
      process.stdout.write(`queued ${res.replayed} deliveries\n`);
    });

  addApiOptions(inbox.command('discard <source> <event_id>'))
    .description('Take a dead, stale or pending delivery out of the queue for good (kept as discarded).')
    .action(async (source: string, eventId: string, opts: ApiOptions) => {
      await callApi(resolveApiTarget(opts), 'POST', `${path(source, eventId)}/discard`, {});
      process.stdout.write(`discarded ${source}/${eventId}\n`);
    });
}
