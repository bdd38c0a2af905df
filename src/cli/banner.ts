import { basename, relative } from 'node:path';
import type { RunningTekil } from '../runtime.js';
import type { SchemeName } from '../config/source.js';
import { DEFAULT_CONFIG_PATH } from './config.js';

/** A small sample body in the shape the scheme's provider sends, so the default locators find its fields. */
function sampleBody(scheme: SchemeName): string {
  if (scheme === 'paymos') {
    return JSON.stringify({
      event_id: 'evt_first_1',
      event_type: 'invoice.paid',
      occurred_at: new Date().toISOString().slice(0, 19) + 'Z',
      data: { invoice_id: 'inv_1', status: 'paid' },
    });
  }
  if (scheme === 'stripe') return JSON.stringify({ id: 'evt_first_1', object: 'event', type: 'invoice.paid', data: { object: { id: 'in_1' } } });
  return JSON.stringify({ id: 'evt_first_1', type: 'invoice.paid', data: { id: 'inv_1' } });
}

/** How this process was invoked, so the printed command works as is (`tekil …` or `node dist/cli/main.js …`). */
function tekilCommand(): string {
  const script = process.argv[1] ?? 'tekil';
  if (basename(script) === 'tekil') return 'tekil';
  return `node ${relative(process.cwd(), script) || script}`;
}

/** Two shell lines that send one signed webhook to a source; sending it twice shows deduplication. */
export function firstWebhookLines(url: string, source: string, scheme: SchemeName, configPath: string | undefined): string[] {
  const config = configPath && configPath !== DEFAULT_CONFIG_PATH ? ` --config ${configPath}` : '';
  return [
    `send a first signed webhook (run the curl twice: "accepted", then "duplicate"):`,
    `  echo '${sampleBody(scheme)}' > first-event.json`,
    `  curl -sS ${url}/in/${source} -H 'content-type: application/json' $(${tekilCommand()} sign${config} --source ${source} --id evt_first_1 --format curl --body first-event.json) --data-binary @first-event.json`,
  ];
}

/** A few lines a newcomer needs right after start: where it listens, the store, the admin token. */
export function printStartBanner(running: RunningTekil, configPath: string | undefined): void {
  const { ctx, url, adminToken } = running;
  const out: string[] = [];
  out.push(`tekil listening on ${url} (config: ${configPath ?? 'none'})`);
  if (ctx.db.kind === 'pglite') {
    out.push(`store: embedded PGlite in ${running.dataDir} (single process, no fsync: for development; set DATABASE_URL for production)`);
  } else {
    out.push('store: PostgreSQL (DATABASE_URL)');
  }
  if (adminToken?.generated) {
    out.push(`admin token (shown once, saved to ${adminToken.file}): ${adminToken.token}`);
  }
  const sources = Object.keys(ctx.config.sources);
  out.push(sources.length ? `sources: ${sources.map((s) => `${url}/in/${s}`).join(', ')}` : 'no sources configured: add some under "sources:" in tekil.yaml');
  const first = sources[0];
  if (first !== undefined && running.app.hasRoute({ method: 'POST', url: '/in/:source' })) {
    out.push(...firstWebhookLines(url, first, ctx.config.sources[first]!.scheme, configPath));
  }
  process.stdout.write(`${out.join('\n')}\n`);
}
