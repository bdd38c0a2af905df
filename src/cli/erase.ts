import type { Command } from 'commander';
import { TekilError } from '../errors.js';
import { addApiOptions, callApi, resolveApiTarget, type ApiOptions } from './api-client.js';

const collect = (value: string, previous: string[]) => [...previous, value];

interface EraseOptions extends ApiOptions {
  resourceId?: string;
  source?: string;
  inbound: string[];
  message: string[];
  delivery: string[];
  confirm?: boolean;
  json?: boolean;
}

interface Counts {
  erased: number;
  already: number;
  in_flight: number;
}

/** `source/event_id` → its parts (the event id may itself hold a `/`). */
function inboundKey(text: string): { source: string; event_id: string } {
  const at = text.indexOf('/');
  if (at <= 0 || at === text.length - 1) throw new TekilError('VALIDATION_FAILED', `--inbound ${text}: expected <source>/<event_id>`);
  return { source: text.slice(0, at), event_id: text.slice(at + 1) };
}

const line = (what: string, c: Counts) =>
  `${what}: ${c.erased} erased, ${c.already} erased before, ${c.in_flight} in flight (left whole: process or discard them, then erase again)\n`;

/** `tekil erase`: KVKK / GDPR erasure over the admin API (docs/erasure.md). */
export function registerEraseCommand(program: Command): void {
  addApiOptions(program.command('erase'))
    .description(
      "Erase a person's data: the bodies (and headers) of chosen deliveries, or of every delivery of a resource id, keeping their ids so copies stay duplicates. Cannot be undone.",
    )
    .option('--resource-id <id>', 'every delivery of this resource id, inbound and outbound')
    .option('--source <name>', 'with --resource-id: inbound deliveries of this source only')
    .option('--inbound <source/event_id>', 'a chosen inbound delivery; repeatable', collect, [])
    .option('--message <id>', 'a chosen outbound message; repeatable', collect, [])
    .option('--delivery <id>', 'a chosen outbound delivery (its message is erased); repeatable', collect, [])
    .option('--confirm', 'needed: erasure cannot be undone')
    .option('--json', 'print the answer as JSON')
    .addHelpText(
      'after',
      `
Examples:
  npx tekil erase --resource-id cust_42 --confirm
  npx tekil erase --inbound paytr/SIP1001:success --message evt_01J… --confirm`,
    )
    .action(async (opts: EraseOptions) => {
      const result = await callApi<{ at: string; inbound: Counts; outbound: Counts }>(resolveApiTarget(opts), 'POST', '/api/v1/erasures', {
        ...(opts.resourceId !== undefined ? { resource_id: opts.resourceId } : {}),
        ...(opts.source !== undefined ? { source: opts.source } : {}),
        inbound: opts.inbound.map(inboundKey),
        messages: opts.message,
        deliveries: opts.delivery,
        confirm: Boolean(opts.confirm),
      });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      process.stdout.write(line('inbound', result.inbound) + line('outbound', result.outbound));
    });
}
