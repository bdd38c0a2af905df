#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { isTekilError } from '../errors.js';
import { ApiError } from './api-client.js';
import { registerMigrateCommand, registerStartCommand } from './start.js';
import { registerSignCommand } from './sign.js';
import { registerInboxCommand } from './inbox.js';
import { registerEndpointsCommand } from './endpoints.js';
import { registerTenantsCommand } from './tenants.js';
import { registerEventTypesCommand } from './event-types.js';
import { registerMessagesCommand } from './messages.js';
import { registerProveCommand } from './prove.js';
import { registerReconcileCommand } from './reconcile.js';
import { registerSimulateCommand } from './simulate.js';
import { registerOperatorsCommand } from './operators.js';
import { registerListenCommand } from './listen.js';
import { registerAuditCommand } from './audit.js';
import { registerAdminTokenCommand } from './admin-token.js';
import { registerEraseCommand } from './erase.js';

// A `.env` in the working directory fills in what the environment leaves unset (DATABASE_URL, PORT,
// TEKIL_ADMIN_TOKEN…): a variable already set wins, as with `node --env-file`. Read before any command
// looks at the environment.
if (existsSync('.env')) process.loadEnvFile('.env');

const program = new Command('tekil')
  .description('Webhook reliability gateway: verified, deduplicated intake; exactly-one-effect processing; a signing, retrying outbox.')
  .version('0.1.0')
  .option('--verbose', 'on failure, print the stack and its causes too')
  .showHelpAfterError()
  .exitOverride();

registerStartCommand(program);
registerMigrateCommand(program);
registerSignCommand(program);
registerInboxCommand(program);
registerEndpointsCommand(program);
registerTenantsCommand(program);
registerEventTypesCommand(program);
registerMessagesCommand(program);
registerProveCommand(program);
registerReconcileCommand(program);
registerSimulateCommand(program);
registerOperatorsCommand(program);
registerListenCommand(program);
registerAuditCommand(program);
registerAdminTokenCommand(program);
registerEraseCommand(program);

/**
 * What an operator reads when a command fails: one line, `tekil: CODE: message (hint: …)`, the hint
 * when there is one, so it survives log collectors and `2>&1 | tail -1`. Stacks are for --verbose only:
 * a refused call is an answer, not a crash.
 */
function describeFailure(err: unknown, verbose: boolean): string {
  let line: string;
  let hint: string | undefined;
  if (isTekilError(err) || err instanceof ApiError) {
    line = `tekil: ${err.code}: ${err.message}`;
    hint = err.hint;
  } else if (err instanceof Error) {
    line = `tekil: ${err.name}: ${err.message}`;
  } else {
    line = `tekil: ${String(err)}`;
  }
  const lines = [hint === undefined ? line : `${line} (hint: ${hint})`];
  if (verbose) {
    if (err instanceof ApiError) lines.push(`request: ${err.request} (HTTP ${err.status})`);
    for (let e: unknown = err; e instanceof Error; e = e.cause) lines.push(e === err ? (e.stack ?? '') : `cause: ${e.stack ?? String(e)}`);
  }
  return `${lines.join('\n')}\n`;
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const verbose = program.opts<{ verbose?: boolean }>().verbose === true;
  process.stderr.write(describeFailure(err, verbose));
  process.exit(1);
}
