import { existsSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { RunningTekil } from '../runtime.js';
import type { AdminToken } from '../auth/admin-token.js';
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

/**
 * How to call the CLI again from here, so the printed command works as is: `npx tekil …` wherever npm
 * finds the bin (an installed package, a global install, a clone: the one spelling the docs use), and
 * `node <path>` elsewhere (an image that runs dist/cli/main.js without the package around it).
 */
function tekilCommand(): string {
  const script = process.argv[1] ?? 'tekil';
  if (basename(script) === 'tekil') return 'npx tekil';
  // A clone: dist/cli/main.js next to src/ and the package's own package.json.
  const root = resolve(dirname(script), '../..');
  if (existsSync(join(root, 'src/cli/main.ts')) && existsSync(join(root, 'package.json'))) return 'npx tekil';
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

/**
 * Where the admin token is: in full once, when this start made it; afterwards where it is kept and
 * the command that prints it, so a later start still points to it.
 */
export function adminTokenLines(adminToken: AdminToken | undefined): string[] {
  if (!adminToken) return [];
  if (adminToken.generated) return [`admin token (shown once, saved to ${adminToken.file}): ${adminToken.token}`];
  if (adminToken.file) return [`admin token: saved in ${adminToken.file} (\`npx tekil admin-token\` prints it)`];
  return ['admin token: from TEKIL_ADMIN_TOKEN'];
}

/**
 * A few lines a newcomer needs right after start: where it listens, the store, the admin token. On
 * stderr: stdout carries the log lines (JSON when it is not a terminal), and the banner is not one.
 */
export function printStartBanner(running: RunningTekil, configPath: string | undefined, adminToken: AdminToken | undefined): void {
  const { ctx, url } = running;
  const out: string[] = [];
  out.push(`tekil listening on ${url} (config: ${configPath ?? 'none'})`);
  if (ctx.db.kind === 'pglite') {
    out.push(`store: embedded PGlite in ${running.dataDir} (single process, no fsync: for development; set DATABASE_URL for production)`);
  } else {
    out.push('store: PostgreSQL (DATABASE_URL)');
  }
  if (running.metricsUrl) out.push(`metrics: ${running.metricsUrl}/metrics (server.metrics_port)`);
  out.push(...adminTokenLines(adminToken));
  const sources = Object.keys(ctx.config.sources);
  out.push(sources.length ? `sources: ${sources.map((s) => `${url}/in/${s}`).join(', ')}` : 'no sources configured: add some under "sources:" in tekil.yaml');
  const first = sources[0];
  if (first !== undefined && running.app.hasRoute({ method: 'POST', url: '/in/:source' })) {
    out.push(...firstWebhookLines(url, first, ctx.config.sources[first]!.scheme, configPath));
  }
  process.stderr.write(`${out.join('\n')}\n`);
}
