import { join } from 'node:path';
import type { Command } from 'commander';
import { readStoredAdminToken } from '../auth/admin-token.js';
import { TekilError } from '../errors.js';
import { resolveSettings } from '../settings.js';
import { addConfigOption, loadCliConfig } from './config.js';

/**
 * `tekil admin-token`: the admin token the CLI and the panel sign in with on this machine. The token
 * alone goes to stdout (`TOKEN=$(npx tekil admin-token)`), where it comes from to stderr. It is the
 * one the server uses: TEKIL_ADMIN_TOKEN when set, else the one the first start saved in the data
 * directory (`store.data_dir`, TEKIL_DATA_DIR, ./.tekil by default).
 */
export function registerAdminTokenCommand(program: Command): void {
  addConfigOption(
    program
      .command('admin-token')
      .description('Print the admin token (TEKIL_ADMIN_TOKEN, or the one the first start saved in the data directory); --path: only where it is kept.')
      .option('--path', 'print where the token is kept instead of the token'),
  ).action(async (opts: { config?: string; path?: boolean }) => {
    const { config } = await loadCliConfig(opts.config);
    const settings = resolveSettings(config, process.env);
    if (settings.adminToken) {
      if (opts.path) process.stdout.write('TEKIL_ADMIN_TOKEN (environment)\n');
      else {
        process.stderr.write('from TEKIL_ADMIN_TOKEN\n');
        process.stdout.write(`${settings.adminToken}\n`);
      }
      return;
    }
    const file = join(settings.dataDir, 'admin-token');
    const token = readStoredAdminToken(settings.dataDir);
    if (!token) {
      throw new TekilError('ADMIN_TOKEN_NOT_FOUND', `no TEKIL_ADMIN_TOKEN is set and no token is saved in ${file}`, {
        hint: 'start tekil once (`npx tekil start` makes one and saves it there), or point TEKIL_DATA_DIR at the data directory tekil runs with',
      });
    }
    if (opts.path) {
      process.stdout.write(`${file}\n`);
      return;
    }
    process.stderr.write(`saved in ${file}\n`);
    process.stdout.write(`${token}\n`);
  });
}
