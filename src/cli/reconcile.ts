import type { Command } from 'commander';
import { openConfiguredStore } from '../runtime.js';
import { resolveSettings } from '../settings.js';
import { migrate } from '../store/migrate.js';
import { pino } from 'pino';
import { redactPaths } from '../logger.js';
import { TekilError } from '../errors.js';
import { formatFindingsTable, formatReport, parseWindowTime } from '../reconcile/format.js';
import { reconcileConfigOf, runReconcile } from '../reconcile/run.js';
import { listFindingRows, listRunRows } from '../reconcile/queries.js';
import { addConfigOption, loadCliConfig } from './config.js';

interface ReconcileOptions {
  config?: string;
  source?: string;
  since?: string;
  until?: string;
  apply?: boolean;
  json?: boolean;
  runs?: boolean;
  findings?: string | boolean;
}

/**
 * `tekil reconcile`: compares a source's deliveries with the provider's own API, on the store from
 * DATABASE_URL or the embedded one (as `tekil migrate` finds it). Without --apply nothing changes.
 */
export function registerReconcileCommand(program: Command): void {
  addConfigOption(
    program
      .command('reconcile')
      .description("Compare a source's deliveries with the provider's API; with --apply, record what is missing. --runs / --findings list stored ones.")
      .option('--source <name>', 'the source to reconcile (it needs a reconcile: block)')
      .option('--since <time>', 'window start: ISO time (2026-11-28T00:00Z) or a duration back from now (72h)')
      .option('--until <time>', 'window end (default: now)')
      .option('--apply', 'record missing and state items as deliveries for the worker (default: report only)')
      .option('--json', 'print the counts per kind and the findings as JSON')
      .option('--runs', 'list the stored runs (of --source, when given) instead of running')
      .option('--findings [kind]', 'list stored findings (of --source, of a kind) instead of running'),
  ).action(async (opts: ReconcileOptions) => {
    const { config } = await loadCliConfig(opts.config);
    // Refused before the store is opened: a typo in --source should not wait for a database.
    if (opts.source && !opts.runs && opts.findings === undefined) reconcileConfigOf(config, opts.source);
    const settings = resolveSettings(config, process.env);
    const db = await openConfiguredStore(settings, config, 2);
    const print = (value: unknown, text: string) => process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : text);
    try {
      await migrate(db);
      if (opts.runs) {
        const runs = await listRunRows(db, { source: opts.source ?? null, before: null, limit: 50 });
        print(runs, runs.map((r) => `${r.id}\t${r.source}\t${r.status}\t${r.started_at.toISOString()}\titems ${r.items}\t${JSON.stringify(r.counts)}${r.error ? `\t${r.error}` : ''}`).join('\n') + '\n');
        return;
      }
      if (opts.findings !== undefined) {
        const kind = typeof opts.findings === 'string' ? opts.findings : null;
        const rows = await listFindingRows(db, { source: opts.source ?? null, kind, runId: null, before: null, limit: 200 });
        print(rows, `${formatFindingsTable(rows)}\n`);
        return;
      }
      if (!opts.source || !opts.since) {
        throw new TekilError('VALIDATION_FAILED', 'reconcile needs --source and --since', { hint: 'tekil reconcile --source NAME --since 72h [--apply]' });
      }
      const window = { start: parseWindowTime('--since', opts.since), end: opts.until ? parseWindowTime('--until', opts.until) : null };
      // The log goes to stderr: stdout is the report (and, with --json, must parse).
      const logger = pino({ level: settings.logLevel, redact: redactPaths }, pino.destination(2));
      const report = await runReconcile({ db, config, logger }, { source: opts.source, window, apply: Boolean(opts.apply), trigger: 'cli' });
      print(report, formatReport(report));
    } finally {
      await db.close();
    }
  });
}
