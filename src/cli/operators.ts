import type { Command } from 'commander';
import { addApiOptions, callApi, printRows, resolveApiTarget, type ApiOptions } from './api-client.js';

const COLUMNS = ['id', 'name', 'role', 'created_at', 'last_used_at', 'revoked_at'];

/** `tekil operators …`: named tokens with a role, made and revoked with the admin token. */
export function registerOperatorsCommand(program: Command): void {
  const operators = program.command('operators').description('Manage operator tokens (viewer or operator role) for the admin API and the dashboard.');

  addApiOptions(operators.command('create <name>').description('Make an operator token; prints it once.'))
    .requiredOption('--role <role>', 'viewer (can look) or operator (can also replay, discard, rotate, create)')
    .action(async (name: string, flags: ApiOptions & { role: string }) => {
      const made = await callApi<Record<string, unknown>>(resolveApiTarget(flags), 'POST', '/api/v1/operators', { name, role: flags.role });
      process.stdout.write(`${JSON.stringify(made, null, 2)}\n`);
      process.stderr.write('The token is shown only now: tekil keeps only its hash.\n');
    });

  addApiOptions(operators.command('list').description('List operators.'))
    .option('--revoked', 'include revoked operators')
    .option('--json', 'print JSON')
    .action(async (flags: ApiOptions & { revoked?: boolean; json?: boolean }) => {
      const path = `/api/v1/operators${flags.revoked ? '?revoked=true' : ''}`;
      const { items } = await callApi<{ items: Array<Record<string, unknown>> }>(resolveApiTarget(flags), 'GET', path);
      printRows(items, COLUMNS, flags.json ?? false);
    });

  addApiOptions(operators.command('revoke <id-or-name>').description('Revoke an operator token; its sessions end at once.')).action(
    async (idOrName: string, flags: ApiOptions) => {
      const revoked = await callApi(resolveApiTarget(flags), 'POST', `/api/v1/operators/${encodeURIComponent(idOrName)}/revoke`);
      process.stdout.write(`${JSON.stringify(revoked, null, 2)}\n`);
    },
  );
}
