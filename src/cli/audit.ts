import type { Command } from 'commander';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';

const COLUMNS = ['at', 'actor', 'role', 'address', 'method', 'route', 'status', 'error_code', 'count'];

interface AuditFlags extends ApiOptions {
  actor?: string;
  route?: string;
  method?: string;
  since?: string;
  until?: string;
  outcome?: string;
  limit?: string;
  all?: boolean;
  json?: boolean;
}

/** `tekil audit`: the audit trail (docs/audit.md), newest first, read through the admin API. */
export function registerAuditCommand(program: Command): void {
  addApiOptions(program.command('audit').description('Show the audit trail: who changed what, from where, and the outcome (newest first).'))
    .option('--actor <name>', 'only this operator (or admin)')
    .option('--route <route>', 'only this route, as recorded: /api/v1/endpoints/:id/rotate-secret')
    .option('--method <method>', 'only this HTTP method (POST, PATCH, DELETE)')
    .option('--since <time>', 'from this ISO time on')
    .option('--until <time>', 'before this ISO time')
    .option('--outcome <outcome>', 'ok (status under 400) or refused')
    .option('--limit <n>', 'rows per page (at most 500)', '100')
    .option('--all', 'follow the pages to the end')
    .option('--json', "print JSON, with each row's target (ids, filter, input)")
    .action(async (flags: AuditFlags) => {
      const target = resolveApiTarget(flags);
      const query = new URLSearchParams();
      for (const key of ['actor', 'route', 'method', 'since', 'until', 'outcome', 'limit'] as const) {
        const value = flags[key];
        if (value !== undefined) query.set(key, key === 'method' ? value.toUpperCase() : value);
      }
      const rows: Array<Record<string, unknown>> = [];
      let cursor: string | null = null;
      do {
        if (cursor !== null) query.set('cursor', cursor);
        const page: { items: Array<Record<string, unknown>>; next_cursor: string | null } = await callApi(target, 'GET', `/api/v1/audit?${query.toString()}`);
        rows.push(...page.items);
        cursor = flags.all ? page.next_cursor : null;
      } while (cursor !== null);
      printRows(rows, COLUMNS, flags.json ?? false);
    });
}
