import type { Command } from 'commander';
import { openStore } from '../store/open.js';
import { migrate } from '../store/migrate.js';
import { resolveStoreSettings } from '../runtime.js';
import { addConfigOption, loadCliConfig } from './config.js';

export function registerMigrateCommand(program: Command): void {
  addConfigOption(
    program
      .command('migrate')
      .description('Apply pending database migrations (DATABASE_URL, or the embedded store in TEKIL_DATA_DIR / ./.tekil) and exit.'),
  ).action(async (opts: { config?: string }) => {
    const { config } = await loadCliConfig(opts.config);
    const store = resolveStoreSettings(config, process.env);
    const db = await openStore({ databaseUrl: store.databaseUrl, dataDir: store.dataDir, poolSize: 1 });
    try {
      const applied = await migrate(db);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'up to date\n');
    } finally {
      await db.close();
    }
  });
}
