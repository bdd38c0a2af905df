import type { Command } from 'commander';
import { pino } from 'pino';
import { TekilError } from '../errors.js';
import { redactPaths } from '../logger.js';
import { formatFindingsTable, formatReport, parseWindowTime } from '../reconcile/format.js';
import { listFindingRows, listRunRows } from '../reconcile/queries.js';
import type { ReconcileReport } from '../reconcile/run.js';
import type { ReconcileWindow } from '../reconcile/types.js';
import { resolveSettings } from '../settings.js';
import { migrate } from '../store/migrate.js';
import { addApiOptions, callApi, resolveApiTarget, type ApiOptions } from './api-client.js';
import { addConfigOption, loadCliConfig } from './config.js';

interface ReconcileOptions extends ApiOptions {
  config?: string;
  source?: string;
  since?: string;
  until?: string;
  apply?: boolean;
  json?: boolean;
  runs?: boolean;
  findings?: string | boolean;
  remote?: boolean;
}

/** The report as the admin API sends it (times as text) turned back into the one the CLI prints. */
function reviveReport(json: ReconcileReport): ReconcileReport {
  const run = json.run as unknown as Record<string, unknown>;
  for (const key of ['window_start', 'window_end', 'started_at', 'updated_at', 'finished_at']) {
    if (typeof run[key] === 'string') run[key] = new Date(run[key] as string);
  }
  return json;
}

/** A run through the running tekil's admin API: the way to reach an embedded store that tekil holds. */
async function runRemotely(opts: ReconcileOptions, source: string, window: ReconcileWindow): Promise<ReconcileReport> {
  const body = { source, since: window.start.toISOString(), ...(window.end ? { until: window.end.toISOString() } : {}), apply: Boolean(opts.apply) };
  return reviveReport(await callApi<ReconcileReport>(resolveApiTarget(opts), 'POST', '/api/v1/reconcile/runs', body));
}

/**
 * `tekil reconcile`: compares a source's deliveries with the provider's own API, on the store from
 * DATABASE_URL or the embedded one (as `tekil migrate` finds it), or inside a running tekil with
 * --remote. Without --apply nothing changes.
 */
export function registerReconcileCommand(program: Command): void {
  addApiOptions(
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
        .option('--findings [kind]', 'list stored findings (of --source, of a kind) instead of running')
        .option('--remote', 'run inside the running tekil, through its admin API (--url, --token): needed for an embedded store tekil holds'),
    ),
  ).action(async (opts: ReconcileOptions) => {
    const listing = Boolean(opts.runs) || opts.findings !== undefined;
    const print = (value: unknown, text: string) => process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : text);
    if (!listing && (!opts.source || !opts.since)) {
      throw new TekilError('VALIDATION_FAILED', 'reconcile needs --source and --since', { hint: 'tekil reconcile --source NAME --since 72h [--apply]' });
    }
    const window = listing ? undefined : { start: parseWindowTime('--since', opts.since!), end: opts.until ? parseWindowTime('--until', opts.until) : null };
    if (opts.remote && window) {
      const report = await runRemotely(opts, opts.source!, window);
      print(report, formatReport(report));
      return;
    }
    const { config } = await loadCliConfig(opts.config);
    // The store and the run load with the command that uses them, not with the CLI (see start.ts).
    const [{ reconcileConfigOf, runReconcile }, { openConfiguredStore }] = await Promise.all([import('../reconcile/run.js'), import('../store/open.js')]);
    // Refused before the store is opened: a typo in --source should not wait for a database.
    if (window) reconcileConfigOf(config, opts.source!);
    const settings = resolveSettings(config, process.env);
    const db = await openConfiguredStore(settings, config, 2);
    try {
      await migrate(db);
      if (opts.runs) {
        const runs = await listRunRows(db, { source: opts.source ?? null, before: null, limit: 50 });
        const lines = runs.map(
          (r) =>
            `${r.id}\t${r.source}\t${r.status}\t${r.started_at.toISOString()}\titems ${r.items}\t${JSON.stringify(r.counts)}${r.error ? `\t${r.error}` : ''}`,
        );
        print(runs, `${lines.join('\n')}\n`);
        return;
      }
      if (opts.findings !== undefined) {
        const kind = typeof opts.findings === 'string' ? opts.findings : null;
        const rows = await listFindingRows(db, { source: opts.source ?? null, kind, runId: null, before: null, limit: 200 });
        print(rows, `${formatFindingsTable(rows)}\n`);
        return;
      }
      // The log goes to stderr: stdout is the report (and, with --json, must parse).
      const logger = pino({ level: settings.logLevel, redact: redactPaths }, pino.destination(2));
      const report = await runReconcile({ db, config, logger }, { source: opts.source!, window: window!, apply: Boolean(opts.apply), trigger: 'cli' });
      print(report, formatReport(report));
    } finally {
      await db.close();
    }
  });
}
