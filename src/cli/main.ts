#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { isTekilError } from '../errors.js';
import { registerMigrateCommand, registerStartCommand } from './start.js';
import { registerSignCommand } from './sign.js';
import { registerInboxCommand } from './inbox.js';
import { registerEndpointsCommand } from './endpoints.js';
import { registerMessagesCommand } from './messages.js';

const program = new Command('tekil')
  .description('Webhook reliability gateway: verified, deduplicated intake; exactly-one-effect processing; a signing, retrying outbox.')
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride();

registerStartCommand(program);
registerMigrateCommand(program);
registerSignCommand(program);
registerInboxCommand(program);
registerEndpointsCommand(program);
registerMessagesCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  if (isTekilError(err)) {
    process.stderr.write(`tekil: ${err.code}: ${err.message}\n`);
  } else {
    process.stderr.write(`tekil: ${(err as Error).stack ?? String(err)}\n`);
  }
  process.exit(1);
}
