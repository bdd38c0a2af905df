import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { TekilError } from '../errors.js';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';

interface EventTypeFlags extends ApiOptions {
  description?: string;
  schema?: string;
  example?: string;
  deprecated?: boolean;
  current?: boolean;
  tenants?: string;
  tenant?: string;
  json?: boolean;
}

const COLUMNS = ['name', 'version', 'deprecated', 'tenant_ids', 'description'];

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

/** `--schema schema.json` reads the file; a value that is JSON itself (`'{"type":"object"}'`) is taken as it is. */
function jsonFlag(flag: string, value: string): unknown {
  const inline = /^\s*[[{]/.test(value) || /^(true|false|null)$/.test(value.trim());
  let text = value;
  if (!inline) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (err) {
      throw new TekilError('VALIDATION_FAILED', `--${flag}: cannot read ${value}: ${(err as Error).message}`, { cause: err });
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', `--${flag} is not JSON: ${(err as Error).message}`, { cause: err });
  }
}

function typeBody(flags: EventTypeFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (flags.description !== undefined) body.description = flags.description;
  if (flags.schema !== undefined) body.schema = flags.schema === 'none' ? null : jsonFlag('schema', flags.schema);
  if (flags.example !== undefined) body.example = flags.example === 'none' ? null : jsonFlag('example', flags.example);
  if (flags.deprecated) body.deprecated = true;
  if (flags.current) body.deprecated = false;
  if (flags.tenants !== undefined) {
    body.tenant_ids =
      flags.tenants === 'all'
        ? null
        : flags.tenants
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean);
  }
  return body;
}

function declarationOptions(cmd: Command): Command {
  return cmd
    .option('--description <text>', 'what the event means, for the merchant')
    .option('--schema <file|json>', "a JSON Schema (2020-12) for the message's data: a file, or the JSON itself (none: any data)")
    .option('--example <file|json>', 'the data of a typical message: a file, or the JSON itself (none: no example)')
    .option('--deprecated', 'still sent, but merchants should stop relying on it')
    .option('--tenants <ids>', 'show it to these tenants only, comma separated (all: to every tenant)');
}

const path = (name: string) => `/api/v1/event-types/${encodeURIComponent(name)}`;

/** `tekil event-types …`: the event catalogue (docs/event-types.md), through the admin API. */
export function registerEventTypesCommand(program: Command): void {
  const types = program.command('event-types').description('Manage the event catalogue: types with a JSON Schema, an example and a description.');

  declarationOptions(addApiOptions(types.command('create <name>').description('Declare an event type, e.g. invoice.paid.'))).action(
    async (name: string, flags: EventTypeFlags) => {
      print(await callApi(resolveApiTarget(flags), 'POST', '/api/v1/event-types', { name, ...typeBody(flags) }));
    },
  );

  addApiOptions(types.command('list').description('List the catalogue.'))
    .option('--tenant <id>', 'only the types this tenant is shown')
    .option('--json', 'print JSON (with schemas and examples)')
    .action(async (flags: EventTypeFlags) => {
      const qs = flags.tenant ? `?${new URLSearchParams({ tenant_id: flags.tenant })}` : '';
      const page = await callApi<{ items: Array<Record<string, unknown>> }>(resolveApiTarget(flags), 'GET', `/api/v1/event-types${qs}`);
      printRows(page.items, COLUMNS, flags.json ?? false);
    });

  addApiOptions(types.command('show <name>').description('Show one type with its schema and example.')).action(async (name: string, flags: ApiOptions) => {
    print(await callApi(resolveApiTarget(flags), 'GET', path(name)));
  });

  declarationOptions(addApiOptions(types.command('update <name>').description('Change a type; a new schema moves its version on.')))
    .option('--current', 'no longer deprecated')
    .action(async (name: string, flags: EventTypeFlags) => {
      print(await callApi(resolveApiTarget(flags), 'PATCH', path(name), typeBody(flags)));
    });

  addApiOptions(types.command('asyncapi').description('Print the catalogue as an AsyncAPI 3.0 document.')).action(async (flags: ApiOptions) => {
    print(await callApi(resolveApiTarget(flags), 'GET', '/api/v1/event-types/asyncapi.json'));
  });
}
